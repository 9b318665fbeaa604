package netdev_test

import (
	"errors"
	"github.com/gvs-project/gvs/internal/race"
	"sort"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/packet"
)

func TestPollerReportsExactlyTheReadyQueues(t *testing.T) {
	a, _ := dummy.New(dummy.Config{Name: "a", RxQueues: 2})
	z, _ := dummy.New(dummy.Config{Name: "z"})
	defer a.Close()
	defer z.Close()
	pl, err := netdev.NewPoller()
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	for _, r := range []netdev.Ready{{Dev: a, Queue: 0}, {Dev: a, Queue: 1}, {Dev: z, Queue: 0}} {
		if err := pl.Add(r.Dev, r.Queue); err != nil {
			t.Fatal(err)
		}
	}
	if err := pl.Add(z, 1); !errors.Is(err, netdev.ErrQueue) {
		t.Fatalf("Add of a missing queue: %v", err)
	}
	start := time.Now()
	if r, _ := pl.Wait(20 * time.Millisecond); len(r) != 0 || time.Since(start) < 15*time.Millisecond {
		t.Fatalf("idle Wait returned %v after %v", r, time.Since(start))
	}
	a.InjectQueue(1, make([]byte, 60))
	z.Inject(make([]byte, 60))
	r, err := pl.Wait(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range r {
		names = append(names, x.Dev.Name()+string(rune('0'+x.Queue)))
	}
	sort.Strings(names)
	if len(names) != 2 || names[0] != "a1" || names[1] != "z0" {
		t.Fatalf("ready %v, want [a1 z0]", names)
	}
	if err := pl.Remove(z, 0); err != nil {
		t.Fatal(err)
	}
	if err := pl.Remove(z, 0); err == nil {
		t.Fatal("second Remove succeeded")
	}
	r, _ = pl.Wait(time.Second)
	if len(r) != 1 || r[0].Dev != netdev.Device(a) || r[0].Queue != 1 {
		t.Fatalf("after Remove ready %v", r)
	}
	// The freed slot is reused.
	if err := pl.Add(z, 0); err != nil {
		t.Fatal(err)
	}
	if r, _ := pl.Wait(time.Second); len(r) != 2 {
		t.Fatalf("after re-Add ready %d queues, want 2", len(r))
	}
	pool := packet.NewPool(4)
	var b packet.Batch
	if n := testing.AllocsPerRun(50, func() { pl.Wait(0) }); n != 0 && !race.Enabled {
		t.Fatalf("Wait allocates %v", n)
	}
	a.Recv(1, &b, pool)
}

func TestStatsAddAndCountersSum(t *testing.T) {
	cs := make([]netdev.Counters, 2)
	cs[0].AddRx(2, 120)
	cs[1].AddRx(1, 60)
	cs[0].AddTx(3, 180)
	cs[1].AddRxDropped(4)
	cs[1].AddRxErrors(5)
	cs[0].AddTxDropped(6)
	cs[0].AddTxErrors(7)
	want := netdev.Stats{RxPackets: 3, RxBytes: 180, RxDropped: 4, RxErrors: 5, TxPackets: 3, TxBytes: 180, TxDropped: 6, TxErrors: 7}
	if got := netdev.Sum(cs); got != want {
		t.Fatalf("Sum = %+v, want %+v", got, want)
	}
	if got := want.Add(want); got.TxErrors != 14 || got.RxBytes != 360 {
		t.Fatalf("Add = %+v", got)
	}
	if netdev.LinkUp.String() != "up" || netdev.LinkDown.String() != "down" {
		t.Fatal("LinkState strings")
	}
}
