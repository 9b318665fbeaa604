package l2fib

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/odp/odptest"
	"github.com/gvs-project/gvs/datapath/packet"
)

// homePort is where MAC i always lives in the concurrency test, so any
// port a lookup returns for it can be checked.
func homePort(i int) uint32 { return uint32(i%4 + 1) }

func TestConcurrentWorkersLearnAndLookUpWhileOwnerFlushes(t *testing.T) {
	const macs = 5000
	tb := newTable(t, Config{Capacity: 2048, Shards: 4, AgingTime: 2 * time.Second})
	reg := &Registry{}
	reg.Set(1, tb)
	acts, err := odp.ParseActions("mac_learn(table=1,ports(1,2,3,4))")
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wrong atomic.Uint64
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(seed int) {
			defer wg.Done()
			fw := NewForwarder(reg)
			ctx := odp.NewContext(packet.NewPool(256), &odptest.Recorder{Discard: true}, 1)
			var b packet.Batch
			x := uint32(seed*7919 + 1)
			for n := 0; !stop.Load() || n < 200; n++ {
				for i := 0; i < packet.BatchSize; i++ {
					x = x*1664525 + 1013904223
					s, d := int(x>>8)%macs, int(x>>20)%macs
					p := ctx.Pool.Get()
					p.SetData(frame(mac(d), mac(s), -1))
					p.Md.InPort = homePort(s)
					b.Add(p)
				}
				fw.Forward(ctx, &acts[0], &b)
				x = x*1664525 + 1013904223
				i := int(x>>8) % macs
				if p, ok := tb.Lookup(0, mac(i)); ok && p != homePort(i) {
					wrong.Add(1)
				}
			}
		}(w)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for i := 0; time.Now().Before(deadline); i++ {
		switch i % 5 {
		case 0:
			tb.FlushPort(uint32(i%4+1), i%2 == 0)
		case 1:
			tb.Expire(t0.Add(time.Duration(i) * time.Second))
		case 2:
			tb.AddStatic(0, mac(i%macs), homePort(i%macs))
		case 3:
			tb.DelStatic(0, mac((i-1)%macs))
		case 4:
			if i%50 == 4 {
				tb.Flush(true)
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	stop.Store(true)
	wg.Wait()
	if n := wrong.Load(); n != 0 {
		t.Errorf("%d lookups returned a port the MAC never used", n)
	}
	if n := tb.Len(); n > 2048 {
		t.Errorf("Len %d over capacity", n)
	}
	for _, e := range tb.Dump() {
		i := int(e.MAC[2])<<24 | int(e.MAC[3])<<16 | int(e.MAC[4])<<8 | int(e.MAC[5])
		if e.Port != homePort(i) {
			t.Errorf("entry %v on the wrong port", e)
		}
		if p, ok := tb.Lookup(e.VLAN, e.MAC); !ok || p != e.Port {
			t.Errorf("dumped entry %v not found by Lookup (%d, %v)", e, p, ok)
		}
	}
	if s := tb.Stats(); s.Learned == 0 || s.Evicted == 0 {
		t.Errorf("the workers did not fill the table: %+v", s)
	}
}
