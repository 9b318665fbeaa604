package l2fib

import (
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/odp/odptest"
	"github.com/gvs-project/gvs/datapath/packet"
)

// FuzzForward feeds arbitrary frames (split at 0xff 0xfe markers; the
// first byte of each picks the input port) through mac_learn with a
// tagged and an untagged output, checking that nothing panics and every
// packet is output or freed exactly once.
func FuzzForward(f *testing.F) {
	f.Add(frame(bcast, mA, -1), true)
	f.Add(append(frame(mB, mA, 5), append([]byte{0xff, 0xfe, 2}, frame(mA, mB, -1)...)...), false)
	f.Add([]byte{1, 2, 3}, true)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, data []byte, inTagged bool) {
		tb, err := New(Config{Capacity: 4, Shards: 1}, t0)
		if err != nil {
			t.Fatal(err)
		}
		reg := &Registry{}
		reg.Set(1, tb)
		fw := NewForwarder(reg)
		pool := packet.NewPool(128)
		ctx := odp.NewContext(pool, &odptest.Recorder{Discard: true}, 1)
		a, err := odp.MACLearn(odp.MACLearnParams{Table: 1, VLAN: 9, InTagged: inTagged,
			Ports: []odp.MACLearnPort{{Port: 1}, {Port: 2, Tagged: true}, {Port: 3}}})
		if err != nil {
			t.Fatal(err)
		}
		var b packet.Batch
		for len(data) > 0 && b.N < packet.BatchSize {
			end := len(data)
			for i := 0; i+1 < len(data); i++ {
				if data[i] == 0xff && data[i+1] == 0xfe {
					end = i
					break
				}
			}
			p := pool.Get()
			p.SetData(data[:end])
			if end > 0 {
				p.Md.InPort = uint32(data[0] % 4)
			}
			b.Add(p)
			data = data[min(end+2, len(data)):]
		}
		fw.Forward(ctx, &a, &b)
		if b.N != 0 || pool.Free() != 128 {
			t.Fatalf("batch left %d, pool free %d (want 0 and 128)", b.N, pool.Free())
		}
	})
}
