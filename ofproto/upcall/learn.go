package upcall

import (
	"sync"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
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

func keyOf(r *oftable.Rule) flowKey { return flowKey{r.Table, r.Priority, r.Match} }

// learnedSet tracks the flows learn actions installed, by learning flow,
// for delete_learned (they go when the learning flow is deleted) and for
// learn's limit.
type learnedSet struct {
	mu sync.Mutex
	by map[flowKey]map[flowKey]bool
}

// admit records a learned flow and reports whether it may be installed
// (its learner is under its limit, or already has it).
func (ls *learnedSet) admit(lf *xlate.LearnedFlow) bool {
	if lf.Learner == nil || (!lf.DeleteLearned && lf.Limit == 0) {
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

// removed drops the records of removed flows and returns the flows
// learned by removed learning flows, to delete.
func (ls *learnedSet) removed(rs []oftable.Removal) []flowKey {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if len(ls.by) == 0 {
		// No learn flow with delete_learned or a limit ever ran: no
		// need to build each removed rule's key (it copies the match).
		return nil
	}
	var del []flowKey
	for _, rm := range rs {
		k := keyOf(rm.Rule)
		for fk := range ls.by[k] {
			del = append(del, fk)
		}
		delete(ls.by, k)
		for _, set := range ls.by {
			delete(set, k)
		}
	}
	return del
}

// ForgetLearned drops the records of removed flows and returns the
// deletes of the flows that removed learning flows learned (with
// delete_learned), for the switch to apply.
func (h *Handler) ForgetLearned(rs []oftable.Removal) []*oftable.FlowMod {
	del := h.learned.removed(rs)
	if len(del) == 0 {
		return nil
	}
	fms := make([]*oftable.FlowMod, len(del))
	for i, fk := range del {
		fms[i] = &oftable.FlowMod{Command: ofp.FlowDeleteStrict, Table: fk.table, Priority: fk.priority, Match: fk.match,
			OutPort: oftable.PortAny, OutGroup: oftable.GroupAny, NewCookie: oftable.CookieUnchanged}
	}
	return fms
}
