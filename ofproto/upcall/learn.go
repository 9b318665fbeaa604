package upcall

import (
	"sync"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// flowKey identifies a flow by table, priority and match (a modified rule
// is a new Rule object but the same flow).
type flowKey struct {
	table    uint8
	priority uint16
	match    mf.Match
}

func keyOf(r *oftable.Rule) flowKey { return flowKey{r.Table, r.Priority, r.Match()} }

// learnedSet tracks the flows learn actions with a limit installed, by
// learning flow, for learn's limit (delete_learned is the switch's: it
// goes by cookie, as Open vSwitch's learned cookies).
type learnedSet struct {
	mu sync.Mutex
	by map[flowKey]map[flowKey]bool
}

// admit records a learned flow and reports whether it may be installed
// (its learner is under its limit, or already has it).
func (ls *learnedSet) admit(lf *xlate.LearnedFlow) bool {
	if lf.Learner == nil || lf.Limit == 0 {
		return true
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.by == nil {
		ls.by = map[flowKey]map[flowKey]bool{}
	}
	lk := keyOf(lf.Learner)
	fk := flowKey{lf.Table, lf.Priority, lf.Match}
	set := ls.by[lk]
	if set[fk] {
		return true
	}
	if lf.Limit != 0 && uint32(len(set)) >= lf.Limit {
		return false
	}
	if set == nil {
		set = map[flowKey]bool{}
		ls.by[lk] = set
	}
	set[fk] = true
	return true
}

// removed drops the records of removed flows: a removed learning flow's
// learned set, and removed learned flows from their learners' sets.
func (ls *learnedSet) removed(rs []oftable.Removal) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.by) == 0 {
		// No learn flow with a limit ever ran: no need to build each
		// removed rule's key (it copies the match).
		return
	}
	for _, rm := range rs {
		k := keyOf(rm.Rule)
		delete(ls.by, k)
		for _, set := range ls.by {
			delete(set, k)
		}
	}
}

// limitedLearnsInstalled reports whether every learned flow of a learn
// with a limit is in its table.
func (h *Handler) limitedLearnsInstalled(lfs []xlate.LearnedFlow) bool {
	for i := range lfs {
		lf := &lfs[i]
		if lf.Limit != 0 && h.tables.FindStrict(lf.Table, &lf.Match, lf.Priority) == nil {
			return false
		}
	}
	return true
}

// ForgetLearned drops removed flows from the learn limits' records.
func (h *Handler) ForgetLearned(rs []oftable.Removal) { h.learned.removed(rs) }
