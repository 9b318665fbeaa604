package dpnetdev

import (
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
)

// dpFlow is one megaflow installed in one worker's classifier. The same
// UFID may be installed in several workers (API puts go to every worker;
// upcall puts only to the worker that missed), each with its own dpFlow so
// that counters are written by one goroutine only.
type dpFlow struct {
	// The fields the packet path touches come first, so that a hit on a
	// megaflow that is not in the cache costs one cache-line miss.
	dead    atomic.Bool
	actions atomic.Pointer[odp.Actions]

	// Worker-private scratch for grouping a batch by flow: the batch
	// generation the flow was last grouped in and its group index.
	grpGen uint64
	grpIdx int

	// Counters: written only by the owning worker (see addStats), read
	// with atomic loads by anyone.
	packets  uint64
	bytes    uint64
	used     int64 // unix nanoseconds of the last hit; 0 if never
	tcpFlags uint32

	ufid    dpif.UFID
	match   *flow.Match // shared by every worker's copy; immutable
	worker  int
	created int64

	// base is the counter values at the last zeroing (flow put with
	// PutZeroStats). Zeroing never writes the worker's counters, so it
	// cannot race with them; readers subtract base. Guarded by
	// megaflows.mu.
	base dpif.FlowStats
}

// raw returns the counters as the worker wrote them.
func (f *dpFlow) raw() dpif.FlowStats {
	s := dpif.FlowStats{
		Packets:  atomic.LoadUint64(&f.packets),
		Bytes:    atomic.LoadUint64(&f.bytes),
		TCPFlags: uint16(atomic.LoadUint32(&f.tcpFlags)),
	}
	if u := atomic.LoadInt64(&f.used); u != 0 {
		s.Used = time.Unix(0, u)
	}
	return s
}

// stats returns the counters since the last zeroing. Callers hold
// megaflows.mu.
func (f *dpFlow) stats() dpif.FlowStats {
	s := f.raw()
	s.Packets -= f.base.Packets
	s.Bytes -= f.base.Bytes
	if !s.Used.After(f.base.Used) {
		s.Used = time.Time{}
	}
	if s.Used.IsZero() {
		s.TCPFlags = 0
	}
	return s
}

// zeroStats restarts the counters from zero. Callers hold megaflows.mu.
func (f *dpFlow) zeroStats() {
	f.base = f.raw()
	if f.base.Used.IsZero() {
		f.base.Used = time.Unix(0, 1)
	}
}

// lastActive is the time the flow was last used, or created if never.
func (f *dpFlow) lastActive() int64 {
	if u := atomic.LoadInt64(&f.used); u != 0 {
		return u
	}
	return f.created
}

// flowSet is every worker's copy of one UFID.
type flowSet struct {
	match *flow.Match
	// shown is the key as installed (dpif.Flow.Shown).
	shown   flow.Key
	perWork []*dpFlow // indexed by worker; nil where not installed
}

func (s *flowSet) count() int {
	n := 0
	for _, f := range s.perWork {
		if f != nil {
			n++
		}
	}
	return n
}
