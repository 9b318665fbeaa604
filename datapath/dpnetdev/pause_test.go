package dpnetdev

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
)

// While paused no worker forwards (frames wait in the port's queue);
// after resume every frame is forwarded once, in the order injected.
func TestPausedWorkersForwardNothingUntilResumed(t *testing.T) {
	cfg := dpif.DefaultConfig()
	cfg.Workers = 2
	s := newTestSwitch(t, 2, cfg)
	putFlow(t, s.dp, inPortMatch(1), "2")
	var mu sync.Mutex
	var order []int
	var got atomic.Int64
	s.ports[2].OnTransmit(func(f []byte) {
		mu.Lock()
		order = append(order, int(binary.BigEndian.Uint16(f[len(f)-2:])))
		mu.Unlock()
		got.Add(1)
	})
	if err := s.dp.Start(); err != nil {
		t.Fatal(err)
	}
	inject := func(from, to int) {
		for i := from; i < to; i++ {
			f := udpFrame(i)
			binary.BigEndian.PutUint16(f[len(f)-2:], uint16(i))
			for !s.ports[1].Inject(f) {
				time.Sleep(time.Millisecond)
			}
		}
	}
	waitFor := func(n int64) {
		for deadline := time.Now().Add(5 * time.Second); got.Load() < n && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
	}
	inject(0, 100)
	waitFor(100)
	resume, err := s.dp.Pause(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !s.dp.Paused() {
		t.Fatal("Paused() is false during a pause")
	}
	inject(100, 150)
	time.Sleep(100 * time.Millisecond)
	if n := got.Load(); n != 100 {
		t.Fatalf("forwarded %d frames while paused, want 100 (all before the pause)", n)
	}
	resume()
	resume() // idempotent
	waitFor(150)
	if s.dp.Paused() {
		t.Fatal("still paused after resume")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 150 {
		t.Fatalf("forwarded %d frames, want 150", len(order))
	}
	for i, v := range order {
		if v != i {
			t.Fatalf("frame %d forwarded as number %d: order %v", i, v, order)
		}
	}
	// A second pause works as the first.
	resume, err = s.dp.Pause(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resume()
}

func TestPauseBeforeStartIsRefused(t *testing.T) {
	s := newTestSwitch(t, 1, dpif.DefaultConfig())
	if _, err := s.dp.Pause(time.Second); err == nil {
		t.Fatal("paused a datapath that is not started")
	}
}
