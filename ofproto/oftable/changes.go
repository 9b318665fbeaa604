package oftable

// Change kinds: what a committed transaction did to one rule, as Open
// vSwitch reports it to flow monitors (OFPFME_ADDED, _MODIFIED, _REMOVED).
const (
	ChangeAdded = iota + 1
	ChangeModified
	ChangeRemoved
)

// Change is one rule change of a committed transaction, in the order the
// flow_mods made them.
type Change struct {
	Kind int
	// Rule is the added, modified (new) or removed rule.
	Rule *Rule
	// Old is the rule an add replaced or a modify changed (nil otherwise).
	Old *Rule
	// Reason is a removal's flow_removed reason (OFPRR_*).
	Reason int
	// Op is the index of the Apply call that made the change (-1 for
	// expiry).
	Op int
}

// OnCommit registers f to run after every commit that changed a table,
// with the transaction's Tag and its changes (expiry included, with a nil
// tag). It runs with the writer lock held, so commits are reported in
// order; it must not block or call back into Tables.
func (t *Tables) OnCommit(f func(tag any, changes []Change)) {
	t.mu.Lock()
	t.onCommit = f
	t.mu.Unlock()
}

// record logs a change; nothing is kept while no hook is registered (the
// writer lock, held by the transaction, guards onCommit).
func (x *Txn) record(kind int, r, old *Rule, reason int) {
	if x.t.onCommit == nil {
		return
	}
	x.log = append(x.log, Change{Kind: kind, Rule: r, Old: old, Reason: reason, Op: x.op})
}

// notify runs the OnCommit hook; Commit calls it with the lock held.
func (x *Txn) notify() {
	if f := x.t.onCommit; f != nil && len(x.log) > 0 {
		f(x.Tag, x.log)
	}
}

// CommittedRules returns how many rules table holds once the commit
// being reported is in. Only an OnCommit hook may call it: the hook runs
// with the lock that Stats takes held.
func (t *Tables) CommittedRules(table uint8) int { return t.nRules[table] }

// CommittedMaxFlows returns table's flow limit (Unlimited for none), for
// an OnCommit hook as CommittedRules.
func (t *Tables) CommittedMaxFlows(table uint8) int { return t.limits[table].max }
