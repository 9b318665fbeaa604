package pmd

import (
	"fmt"
	"sort"
)

// Mode is an rx queue assignment algorithm (other_config:pmd-rxq-assign).
type Mode int

// The assignment algorithms. Cycles is the default.
const (
	Cycles Mode = iota
	RoundRobin
	Group
)

func (m Mode) String() string {
	switch m {
	case RoundRobin:
		return "roundrobin"
	case Group:
		return "group"
	}
	return "cycles"
}

// ParseMode returns the mode pmd-rxq-assign names; ok is false for a
// name Open vSwitch does not know (the mode is then Cycles).
func ParseMode(s string) (m Mode, ok bool) {
	switch s {
	case "roundrobin":
		return RoundRobin, true
	case "cycles":
		return Cycles, true
	case "group":
		return Group, true
	}
	return Cycles, false
}

// NoCore is an rx queue's Affinity when pmd-rxq-affinity names no core
// for it.
const NoCore = -1

// RxQ is one receive queue to place.
type RxQ struct {
	Port     string
	PortNo   uint32
	Queue    int
	NUMA     int    // the port's node
	Affinity int    // the core pmd-rxq-affinity pins it to, or NoCore
	Cycles   uint64 // processing cost measured over the last intervals
}

// Level is a log line's severity.
type Level int

// Log levels of the assignment's lines.
const (
	Debug Level = iota
	Info
	Warn
)

// Logf receives the lines an assignment logs.
type Logf func(l Level, format string, args ...any)

// Thread is one PMD thread's share of an assignment.
type Thread struct {
	Core     Core
	Isolated bool
	RxQs     []RxQ  // in assignment order
	Cycles   uint64 // the sum of its queues' cycles
}

// Assignment is where every rx queue goes: the threads in core id order
// and the queues no thread can poll.
type Assignment struct {
	Threads  []Thread
	Unpolled []RxQ
}

// Thread returns the thread on a core.
func (a *Assignment) Thread(core int) *Thread {
	for i := range a.Threads {
		if a.Threads[i].Core.ID == core {
			return &a.Threads[i]
		}
	}
	return nil
}

// schedNUMA is one node's threads while assigning.
type schedNUMA struct {
	id         int
	threads    []*Thread
	isolated   int
	rrIndex    int
	rrIncrease bool
}

func (n *schedNUMA) nonIsolated() int { return len(n.threads) - n.isolated }

// next returns the next thread of a round-robin walk: wrapping
// (roundrobin) or up and down (cycles: 1,2,3,3,2,1,1,...).
func (n *schedNUMA) next(updown bool) *Thread {
	i := n.rrIndex
	if n.rrIncrease {
		if n.rrIndex == len(n.threads)-1 {
			if updown {
				n.rrIncrease = false
			} else {
				n.rrIndex = 0
			}
		} else {
			n.rrIndex++
		}
	} else {
		if n.rrIndex == 0 {
			n.rrIncrease = true
		} else {
			n.rrIndex--
		}
	}
	return n.threads[i]
}

func (n *schedNUMA) nextNonIsolated(updown bool) *Thread {
	for i := 0; i < 2*len(n.threads); i++ {
		if t := n.next(updown); !t.Isolated {
			return t
		}
	}
	return nil
}

// lowest is the group algorithm's choice: the non-isolated thread with
// the least cycles (or queues, when nothing was measured), the lowest
// core on a tie.
func (n *schedNUMA) lowest(byCycles bool) *Thread {
	var best *Thread
	for _, t := range n.threads {
		if t.Isolated {
			continue
		}
		if best == nil {
			best = t
			continue
		}
		if byCycles && t.Cycles < best.Cycles || !byCycles && len(t.RxQs) < len(best.RxQs) {
			best = t
		}
	}
	return best
}

// newNUMAs groups threads by node, in node id order.
func newNUMAs(threads []Thread) []*schedNUMA {
	var out []*schedNUMA
	by := map[int]*schedNUMA{}
	for i := range threads {
		t := &threads[i]
		n := by[t.Core.NUMA]
		if n == nil {
			n = &schedNUMA{id: t.Core.NUMA, rrIncrease: true}
			by[n.id] = n
			out = append(out, n)
		}
		n.threads = append(n.threads, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

func cycLog(m Mode, c uint64) string {
	if m == RoundRobin {
		return ""
	}
	return fmt.Sprintf(" (measured processing cycles %d)", c)
}

// Schedule assigns rx queues to the PMD threads on cores, as Open
// vSwitch 3.1's dpif-netdev does: a queue pinned by pmd-rxq-affinity to
// a PMD core goes there (the core becomes isolated when isolate is set);
// the others, in port and queue order (cycles and group: busiest first),
// go to a non-isolated thread of their port's node, or of another node
// when that has none, picked by the mode. lvl is the level of the
// progress lines (Info when assigning, Debug for a dry run); the lines
// that say a queue could not go where asked are warnings unless lvl is
// Debug. rxqs must be in port number and queue order.
func Schedule(cores []Core, rxqs []RxQ, mode Mode, isolate bool, lvl Level, logf Logf) Assignment {
	if logf == nil {
		logf = func(Level, string, ...any) {}
	}
	warn := Warn
	if lvl == Debug {
		warn = Debug
	}
	a := Assignment{}
	sorted := append([]Core(nil), cores...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for _, c := range sorted {
		a.Threads = append(a.Threads, Thread{Core: c})
	}
	numas := newNUMAs(a.Threads)
	numaOf := func(id int) *schedNUMA {
		for _, n := range numas {
			if n.id == id {
				return n
			}
		}
		return nil
	}

	var rest []RxQ
	for _, q := range rxqs {
		if mode == RoundRobin {
			q.Cycles = 0
		}
		if q.Affinity == NoCore {
			rest = append(rest, q)
			continue
		}
		t := a.Thread(q.Affinity)
		if t == nil {
			logf(warn, "Core %2d cannot be pinned with port '%s' rx queue %d. Use pmd-cpu-mask to enable a pmd on core %d. An alternative core will be assigned.",
				q.Affinity, q.Port, q.Queue, q.Affinity)
			rest = append(rest, q)
			continue
		}
		if isolate && !t.Isolated {
			t.Isolated = true
			numaOf(t.Core.NUMA).isolated++
		}
		logf(lvl, "Core %2d on numa node %d is pinned with port '%s' rx queue %d%s",
			t.Core.ID, t.Core.NUMA, q.Port, q.Queue, cycLog(mode, q.Cycles))
		t.RxQs = append(t.RxQs, q)
		t.Cycles += q.Cycles
	}
	if mode != RoundRobin {
		sort.SliceStable(rest, func(i, j int) bool {
			if rest[i].Cycles != rest[j].Cycles {
				return rest[i].Cycles > rest[j].Cycles
			}
			if rest[i].PortNo != rest[j].PortNo {
				return rest[i].PortNo < rest[j].PortNo
			}
			return rest[i].Queue < rest[j].Queue
		})
	}

	started := false
	lastCross := -1 // index into numas of the last node used across nodes
	for _, q := range rest {
		if !started && lvl != Debug {
			logf(lvl, "Performing pmd to rx queue assignment using %s algorithm.", mode)
			started = true
		}
		n := numaOf(q.NUMA)
		if n == nil || n.nonIsolated() == 0 {
			n = nil
			for range numas {
				lastCross = (lastCross + 1) % len(numas)
				if numas[lastCross].nonIsolated() > 0 {
					n = numas[lastCross]
					break
				}
			}
		}
		var t *Thread
		if n != nil {
			if mode == Group {
				t = n.lowest(q.Cycles != 0)
			} else {
				t = n.nextNonIsolated(mode == Cycles)
			}
		}
		if t == nil {
			logf(warn, "No non-isolated pmd on any numa available for port '%s' rx queue %d%s. This rx queue will not be polled.",
				q.Port, q.Queue, cycLog(mode, q.Cycles))
			a.Unpolled = append(a.Unpolled, q)
			continue
		}
		if t.Core.NUMA != q.NUMA {
			logf(lvl, "There's no available (non-isolated) pmd thread on numa node %d. Port '%s' rx queue %d will be assigned to a pmd on numa node %d. This may lead to reduced performance.",
				q.NUMA, q.Port, q.Queue, t.Core.NUMA)
		}
		logf(lvl, "Core %2d on numa node %d assigned port '%s' rx queue %d%s.",
			t.Core.ID, t.Core.NUMA, q.Port, q.Queue, cycLog(mode, q.Cycles))
		t.RxQs = append(t.RxQs, q)
		t.Cycles += q.Cycles
	}
	return a
}

// CrossNUMA reports whether a queue that no affinity pins is polled by a
// thread on another node than its port's (isolated threads poll only
// pinned queues and are skipped).
func (a *Assignment) CrossNUMA() bool {
	for _, t := range a.Threads {
		if t.Isolated {
			continue
		}
		for _, q := range t.RxQs {
			if q.Affinity == NoCore && q.NUMA != t.Core.NUMA {
				return true
			}
		}
	}
	return false
}

// Nodes returns the node ids that have threads, ascending.
func (a *Assignment) Nodes() []int {
	var out []int
	for _, n := range newNUMAs(append([]Thread(nil), a.Threads...)) {
		out = append(out, n.id)
	}
	return out
}
