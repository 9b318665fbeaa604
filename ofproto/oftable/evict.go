package oftable

import (
	"slices"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Unlimited as Limit.MaxFlows lets a table hold any number of rules.
const Unlimited = -1

// Limit is a table's capacity and overflow policy (Open vSwitch's
// Flow_Table flow_limit, overflow_policy and groups).
type Limit struct {
	// MaxFlows is the most rules the table holds (Unlimited: no limit).
	MaxFlows int
	// Evict makes an add that would exceed MaxFlows evict a rule instead
	// of failing with OFPFMFC_TABLE_FULL (overflow_policy=evict).
	Evict bool
	// Groups are the fields whose values split the table's evictable
	// rules into fairness groups: the largest group loses a rule first.
	// None: one group.
	Groups []ofp.Subfield
}

// tableLimit is one table's limit; the writer lock guards it.
type tableLimit struct {
	max int
	// evictConfig is Limit.Evict; evictOpenFlow is the OpenFlow 1.4
	// table_mod eviction bit. Either turns eviction on, as Open
	// vSwitch's EVICTION_CLIENT and EVICTION_OPENFLOW.
	evictConfig, evictOpenFlow bool
	groups                     []ofp.Subfield
}

func (l *tableLimit) evicts() bool { return l.evictConfig || l.evictOpenFlow }

// SetLimit configures table's limit and, if eviction is on, evicts rules
// until the table is within it (as Open vSwitch does when flow_limit
// shrinks). It returns the evicted rules (reason OFPRR_EVICTION).
func (t *Tables) SetLimit(table uint8, l Limit) []Removal {
	if int(table) >= NumTables {
		return nil
	}
	if l.MaxFlows < 0 {
		l.MaxFlows = Unlimited
	}
	x := t.Begin()
	lim := &t.limits[table]
	lim.max, lim.evictConfig, lim.groups = l.MaxFlows, l.Evict, slices.Clone(l.Groups)
	for lim.max != Unlimited && t.nRules[table] > lim.max {
		r := x.victim(table)
		if r == nil {
			break
		}
		x.evict(r)
	}
	return x.Commit()
}

// MaxFlows returns table's flow limit (Unlimited when none).
func (t *Tables) MaxFlows(table uint8) int {
	if int(table) >= NumTables {
		return Unlimited
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.limits[table].max
}

// SetOpenFlowEviction turns the OpenFlow 1.4 eviction bit of table on or
// off. Like Open vSwitch's table_mod it evicts nothing by itself: rules
// are evicted when an add finds the table full.
func (t *Tables) SetOpenFlowEviction(table uint8, on bool) {
	if int(table) >= NumTables {
		return
	}
	t.mu.Lock()
	t.limits[table].evictOpenFlow = on
	t.mu.Unlock()
}

// makeRoom evicts a rule if table is full, or fails with
// OFPFMFC_TABLE_FULL if it cannot.
func (x *Txn) makeRoom(table uint8) error {
	lim := &x.t.limits[table]
	if lim.max == Unlimited || x.t.nRules[table] < lim.max {
		return nil
	}
	r := x.victim(table)
	if r == nil {
		return errCode(ofp.OFPFMFC_TABLE_FULL, "table %d is full (%d flows)", table, lim.max)
	}
	x.evict(r)
	return nil
}

// evict removes r with reason OFPRR_EVICTION.
func (x *Txn) evict(r *Rule) {
	if x.remove(r) != nil {
		return
	}
	for p := r; p != nil; p = x.pred[p] {
		p.removeReason = RemovedEviction
	}
	x.record(ChangeRemoved, r, nil, RemovedEviction)
}

// victim chooses the rule to evict from table in the staged version, as
// Open vSwitch's choose_rule_to_evict: only rules with a timeout are
// evictable; from the largest fairness group, the rule of lowest
// importance and, among those, the one that would expire first. Ties go
// to the rule met first. nil: eviction is off or nothing is evictable.
//
// The scan is linear in the table's size; Open vSwitch keeps heaps, but
// computes expiry when rules are inserted and refreshes it only
// periodically, so expiry here is exact instead.
func (x *Txn) victim(table uint8) *Rule {
	lim := &x.t.limits[table]
	if !lim.evicts() {
		return nil
	}
	type group struct {
		n    int
		best *Rule
		exp  time.Time
	}
	var (
		groups  map[string]*group
		one     group
		largest *group
		key     []byte
	)
	for cr := range x.t.tables[table].Rules(x.v, nil) {
		r := cr.Payload
		exp, ok := r.expiry()
		if !ok {
			continue
		}
		g := &one
		if len(lim.groups) > 0 {
			key = groupKey(key[:0], r, lim.groups)
			if groups == nil {
				groups = map[string]*group{}
			}
			if g = groups[string(key)]; g == nil {
				g = &group{}
				groups[string(key)] = g
			}
		}
		g.n++
		if g.best == nil || r.Importance < g.best.Importance ||
			(r.Importance == g.best.Importance && exp.Before(g.exp)) {
			g.best, g.exp = r, exp
		}
		if largest == nil || g.n > largest.n {
			largest = g
		}
	}
	if largest == nil {
		return nil
	}
	return largest.best
}

// expiry is when r would expire by its hard or idle timeout, whichever
// comes first; false if it has neither (it is not evictable).
func (r *Rule) expiry() (time.Time, bool) {
	idleTO, hardTO := r.Timeouts()
	if hardTO == 0 && idleTO == 0 {
		return time.Time{}, false
	}
	var exp time.Time
	if hardTO != 0 {
		exp = r.ModifiedAt().Add(time.Duration(hardTO) * time.Second)
	}
	if idleTO != 0 {
		idle := r.LastUsed().Add(time.Duration(idleTO) * time.Second)
		if exp.IsZero() || idle.Before(exp) {
			exp = idle
		}
	}
	return exp, true
}

// groupKey appends to b the values r's match gives the fairness fields
// (only the subfields' bits; a field whose prerequisites the match does
// not satisfy counts as absent), identifying r's eviction group.
func groupKey(b []byte, r *Rule, fields []ofp.Subfield) []byte {
	var val, mask [128]byte
	m := r.Match()
	for _, sf := range fields {
		f := sf.Field
		if f == nil || m.Width(f) > len(val) || !m.PrereqsOK(f) {
			b = append(b, 0)
			continue
		}
		n := m.Width(f)
		m.Get(f, val[:n], mask[:n])
		b = append(b, 1)
		for i := range n {
			v := val[i] & mask[i]
			// Bit k counts from the least significant bit of the
			// big-endian value.
			for bit := range 8 {
				k := (n-1-i)*8 + bit
				if k < sf.Ofs || k >= sf.Ofs+sf.NBits {
					v &^= 1 << bit
				}
			}
			b = append(b, v)
		}
	}
	return b
}
