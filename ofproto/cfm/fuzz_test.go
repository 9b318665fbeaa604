package cfm

import "testing"

// FuzzProcess feeds arbitrary frames to a maintenance point the way the
// switch does: nothing may panic, and the status stays readable.
func FuzzProcess(f *testing.F) {
	s0 := New("p0", Env{Clock: &fakeClock{ms: 1}})
	s0.Configure(ext(3, 100))
	good := s0.Compose([6]byte{2})
	f.Add(good)
	f.Add(good[:14+AcceptLen-1])
	f.Add([]byte{})
	vlan := append(append(append([]byte(nil), good[:12]...), 0x81, 0, 0, 5), good[12:]...)
	f.Add(vlan)
	bad := append([]byte(nil), good...)
	bad[15] = 3 // not a CCM
	f.Add(bad)
	f.Fuzz(func(t *testing.T, frame []byte) {
		clk := &fakeClock{ms: 1}
		s := New("p1", Env{Clock: clk})
		s.Configure(ext(4, 100))
		s.Process(frame)
		clk.ms += 1000
		s.Run()
		_ = s.Show()
		if st := s.Status(); len(st.RemoteMPIDs) > 1 {
			t.Fatalf("one frame gave %d remote MPs", len(st.RemoteMPIDs))
		}
	})
}
