package rstp

import "testing"

// FuzzReceived feeds arbitrary frames to an enabled port the way the
// switch does (Payload, then Received): nothing may panic, and the
// machines settle.
func FuzzReceived(f *testing.F) {
	rst := BPDU{Version: 2, Type: TypeRST, Flags: FlagProposal | bpduRoleDesig<<roleShift, RootID: 0x8000000000000001,
		BridgeID: 0x8000000000000001, PortID: 0x8001, MaxAge: 20 << 8, HelloTime: 2 << 8, FwdDelay: 15 << 8}
	f.Add(Frame([6]byte{2}, rst.Encode()))
	cfg := rst
	cfg.Type, cfg.Version = TypeConfig, 0
	f.Add(Frame([6]byte{2}, cfg.Encode()))
	tcn := BPDU{Type: TypeTCN}
	f.Add(Frame([6]byte{2}, tcn.Encode()))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		b := New("br0", 0xaa66aa660000, Env{Send: func(any, []byte) {}})
		p := b.AddPort()
		p.Set(PortSettings{Priority: DefaultPortPriority, PathCost: DefaultPortPathCost, AutoEdge: true, AdminUp: true,
			AdminP2P: P2PForceTrue}, "p1", p)
		p.SetMACOperational(true)
		bpdu, ok := Payload(frame)
		if !ok {
			return
		}
		p.Received(bpdu)
		for i := 0; i < 30; i++ {
			b.Tick()
		}
		_ = p.Status()
		_ = b.Status()
	})
}
