package ofswitch

import (
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// learnedCookies is Open vSwitch's delete_learned: it counts, for each
// (table, cookie), the rules whose actions hold a learn with
// delete_learned targeting it. When the last such rule goes (deleted, or
// modified to learn elsewhere) every flow with that cookie in that table
// is deleted, whoever installed it. The tables' commit hook keeps the
// counts (update); the switch deletes the dead cookies' flows after the
// commit (takeDead, notifier.deleteLearned).
type learnedCookies struct {
	// on is set once a flow_mod carries such a learn: until then the
	// tables keep no change log for it.
	on   atomic.Bool
	mu   sync.Mutex
	n    map[cookieKey]int
	dead []cookieKey
}

type cookieKey struct {
	table  uint8
	cookie uint64
}

// learnTargets are the (table, cookie) of the top-level learn actions
// with delete_learned in acts.
func learnTargets(acts []ofp.Action) []cookieKey {
	var ks []cookieKey
	for i := range acts {
		if l := acts[i].Learn(); acts[i].Type == ofp.ActLearn && l != nil && l.Flags&ofp.LearnDeleteLearned != 0 {
			ks = append(ks, cookieKey{l.Table, l.Cookie})
		}
	}
	return ks
}

// update applies a commit's changes to the counts: a new rule's targets
// count before an old one's stop counting, so a modify that keeps its
// target kills nothing. Called under the tables' writer lock.
func (lc *learnedCookies) update(changes []oftable.Change) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.n == nil {
		lc.n = map[cookieKey]int{}
	}
	for i := range changes {
		ch := &changes[i]
		if ch.Kind != oftable.ChangeRemoved {
			for _, k := range learnTargets(ch.Rule.Actions) {
				lc.n[k]++
			}
		}
		old := ch.Old
		if ch.Kind == oftable.ChangeRemoved {
			old = ch.Rule
		}
		if old == nil {
			continue
		}
		for _, k := range learnTargets(old.Actions) {
			if lc.n[k]--; lc.n[k] <= 0 {
				delete(lc.n, k)
				lc.dead = append(lc.dead, k)
			}
		}
	}
}

// takeDead returns the deletes of the flows of the cookies no rule
// learns into any more.
func (lc *learnedCookies) takeDead() []*oftable.FlowMod {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	var fms []*oftable.FlowMod
	for _, k := range lc.dead {
		if lc.n[k] > 0 {
			continue // a later rule learns there again
		}
		fms = append(fms, &oftable.FlowMod{Command: ofp.FlowDelete, Table: k.table, Cookie: k.cookie, CookieMask: ^uint64(0),
			OutPort: oftable.PortAny, OutGroup: oftable.GroupAny, NewCookie: oftable.CookieUnchanged})
	}
	lc.dead = nil
	return fms
}

// commitHooks is the tables' one commit hook, shared by the flow
// monitors and the learned cookies. It is installed the first time
// either needs it: until then the tables keep no change log.
type commitHooks struct {
	tables   *oftable.Tables
	once     sync.Once
	monOn    atomic.Bool
	monitors func(tag any, changes []oftable.Change)
	cookies  *learnedCookies
	// vacancy sends the tables' vacancy events (tablefeatures.go), on
	// from the first table_mod that turns them on.
	vacancyOn atomic.Bool
	vacancy   func(changes []oftable.Change)
}

func (h *commitHooks) run(tag any, changes []oftable.Change) {
	if h.cookies.on.Load() {
		h.cookies.update(changes)
	}
	if h.monOn.Load() {
		h.monitors(tag, changes)
	}
	if h.vacancyOn.Load() {
		h.vacancy(changes)
	}
}

// enableVacancy starts checking commits for vacancy events.
func (h *commitHooks) enableVacancy() {
	h.vacancyOn.Store(true)
	h.install()
}

func (h *commitHooks) install() { h.once.Do(func() { h.tables.OnCommit(h.run) }) }

// enableMonitors starts reporting commits to the flow monitors.
func (h *commitHooks) enableMonitors() {
	h.monOn.Store(true)
	h.install()
}

// enableCookies starts counting learned cookies; called before the
// commit of the first rule that needs it.
func (h *commitHooks) enableCookies() {
	if !h.cookies.on.Load() {
		h.cookies.on.Store(true)
		h.install()
	}
}
