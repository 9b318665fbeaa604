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
	ufid    dpif.UFID
	match   flow.Match
	actions atomic.Pointer[odp.Actions]
	worker  int
	dead    atomic.Bool

	packets  atomic.Uint64
	bytes    atomic.Uint64
	used     atomic.Int64 // unix nanoseconds of the last hit; 0 if never
	tcpFlags atomic.Uint32
	created  int64

	// Worker-private scratch for grouping a batch by flow: the batch
	// generation the flow was last grouped in and its group index.
	grpGen uint64
	grpIdx int
}

func (f *dpFlow) stats() dpif.FlowStats {
	s := dpif.FlowStats{
		Packets:  f.packets.Load(),
		Bytes:    f.bytes.Load(),
		TCPFlags: uint16(f.tcpFlags.Load()),
	}
	if u := f.used.Load(); u != 0 {
		s.Used = time.Unix(0, u)
	}
	return s
}

func (f *dpFlow) zeroStats() {
	f.packets.Store(0)
	f.bytes.Store(0)
	f.used.Store(0)
	f.tcpFlags.Store(0)
}

// lastActive is the time the flow was last used, or created if never.
func (f *dpFlow) lastActive() int64 {
	if u := f.used.Load(); u != 0 {
		return u
	}
	return f.created
}

// flowSet is every worker's copy of one UFID.
type flowSet struct {
	match   flow.Match
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
