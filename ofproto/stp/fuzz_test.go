package stp

import "testing"

// FuzzReceived feeds arbitrary frames to an enabled port the way the
// switch does (Payload, then Received): nothing may panic, and a frame
// either counts as received or as an error.
func FuzzReceived(f *testing.F) {
	cfg := BPDU{Type: TypeConfig, RootID: 0x8000000000000001, BridgeID: 0x8000000000000001, PortID: 0x8001,
		MaxAge: 5120, HelloTime: 512, FwdDelay: 3840}
	f.Add(Frame([6]byte{2}, cfg.Encode()))
	tcn := BPDU{Type: TypeTCN}
	f.Add(Frame([6]byte{2}, tcn.Encode()))
	f.Add(Frame([6]byte{2}, []byte{0, 1, 0, 0}))
	f.Add(Frame([6]byte{2}, []byte{0, 0, 2, 2, 0}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, frame []byte) {
		b := New("br0", 0x0000aa66aa660000, Env{Send: func(int, []byte) {}})
		p := b.Port(0)
		p.SetName("p1")
		p.Enable()
		bpdu, ok := Payload(frame)
		if !ok {
			return
		}
		p.Received(bpdu)
		b.Tick(60000)
		tx, rx, errs := p.Counts()
		if rx+errs != 1 && !(rx == 0 && errs == 0) {
			t.Fatalf("rx %d errs %d", rx, errs)
		}
		_ = tx
		_ = b.Status()
	})
}
