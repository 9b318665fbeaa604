package dpnetdev

import (
	"errors"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
)

func testMegaflows(nworkers int) *megaflows {
	var ws []*worker
	for i := 0; i < nworkers; i++ {
		w := &worker{id: i, cls: newClassifier()}
		w.flowLimit.Store(10)
		ws = append(ws, w)
	}
	return newMegaflows("test", &dpif.Config{}, ws)
}

// TestMegaflowsUpcallCopiesShareOneEntryAndExpireOneByOne: an upcall
// installs a copy in its own worker only; a second worker's upcall for
// the same UFID joins the entry; idle expiry removes copies, and the
// entry goes with its last copy.
func TestMegaflowsUpcallCopiesShareOneEntryAndExpireOneByOne(t *testing.T) {
	mf := testMegaflows(2)
	m := &flow.Match{Key: flow.Key{InPort: 1}, Mask: wildMask()}
	u := dpif.UFIDFromMatch(m)
	acts := odp.Actions{}
	at := func(ns int64) func() time.Time { return func() time.Time { return time.Unix(0, ns) } }
	if f := mf.installFromUpcall(mf.workers[0], u, m, acts, &m.Key, at(100)); f == nil {
		t.Fatal("worker 0 upcall installed nothing")
	}
	if f := mf.installFromUpcall(mf.workers[0], u, m, acts, &m.Key, at(100)); f != nil {
		t.Fatal("worker 0 installed the same megaflow twice")
	}
	m2 := *m
	if f := mf.installFromUpcall(mf.workers[1], u, &m2, acts, &m.Key, at(300)); f == nil || f.match != m {
		t.Fatalf("worker 1 copy = %+v, want one sharing worker 0's match", f)
	}
	if got, err := mf.get(u); err != nil || got.Workers != 2 {
		t.Fatalf("get = %+v, %v; want 2 workers", got, err)
	}
	if n := mf.expireIdle(time.Unix(0, 250), 100); n != 1 {
		t.Fatalf("expired %d copies at 250ns, want 1 (worker 0's, created at 100)", n)
	}
	if mf.len() != 1 || mf.workers[0].nflows.Load() != 0 || mf.workers[1].nflows.Load() != 1 {
		t.Fatalf("after first expiry: %d entries, worker flows %d/%d; want 1, 0/1",
			mf.len(), mf.workers[0].nflows.Load(), mf.workers[1].nflows.Load())
	}
	if n := mf.expireIdle(time.Unix(0, 500), 100); n != 1 || mf.len() != 0 {
		t.Fatalf("second expiry removed %d, %d entries left; want 1, 0", n, mf.len())
	}
	if _, err := mf.del(u); !errors.Is(err, dpif.ErrNotFound) {
		t.Fatalf("del after expiry: %v, want ErrNotFound", err)
	}
}

// TestMegaflowsPutOverLimitLeavesNoCopy: a put that finds one worker
// full installs in none.
func TestMegaflowsPutOverLimitLeavesNoCopy(t *testing.T) {
	mf := testMegaflows(2)
	mf.workers[1].flowLimit.Store(0)
	m := flow.Match{Key: flow.Key{InPort: 2}, Mask: wildMask()}
	err := mf.put(&dpif.FlowPut{Match: m, Flags: dpif.PutCreate}, 1)
	if !errors.Is(err, dpif.ErrFlowLimit) {
		t.Fatalf("put = %v, want ErrFlowLimit", err)
	}
	if mf.len() != 0 || mf.workers[0].nflows.Load() != 0 || mf.workers[0].cls.Subtables() != 0 {
		t.Fatalf("after refused put: %d entries, worker 0 has %d flows in %d subtables; want none",
			mf.len(), mf.workers[0].nflows.Load(), mf.workers[0].cls.Subtables())
	}
}
