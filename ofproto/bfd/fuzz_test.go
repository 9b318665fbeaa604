package bfd

import (
	"testing"
)

// FuzzProcess feeds arbitrary frames to a session the way the switch
// does (UDPPayload, then Process): nothing may panic, and a frame that
// is not accepted leaves the session down.
func FuzzProcess(f *testing.F) {
	s0 := New("p0", 5, 49152, map[string]string{"enable": "true"}, Env{Clock: &fakeClock{}, Rand: func(int) int { return 0 }})
	good, _ := s0.PutPacket([6]byte{2})
	f.Add(good)
	f.Add(good[:40])
	f.Add(good[:FrameLen-1])
	f.Add([]byte{})
	bad := append([]byte(nil), good...)
	bad[42] = 0x24 // auth flag
	f.Add(bad)
	vlan := append(append(append([]byte(nil), good[:12]...), 0x81, 0, 0, 5), good[12:]...)
	f.Add(vlan)
	f.Fuzz(func(t *testing.T, frame []byte) {
		s := New("p1", 7, 49153, map[string]string{"enable": "true", "min_rx": "1", "min_tx": "1"}, Env{Clock: &fakeClock{ms: 1}})
		pl, ttl, ok := UDPPayload(frame)
		if !ok {
			return
		}
		s.Process(ttl, pl)
		_ = s.Show()
		_ = s.Status()
		s.Run()
		if _, err := Decode(pl); err != nil && s.Dropped() != 1 {
			t.Fatalf("short payload not counted")
		}
	})
}
