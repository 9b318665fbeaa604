package oftable

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ofproto/classifier"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// NumTables is the number of OpenFlow tables of a bridge (0-254), as Open
// vSwitch.
const NumTables = 255

// Flow mod flags (OFPFF_*, as Open vSwitch's OFPUTIL_FF_*).
const (
	FlagSendFlowRem  = 1 << 0
	FlagCheckOverlap = 1 << 1
	FlagResetCounts  = 1 << 2
	FlagNoPktCounts  = 1 << 3
	FlagNoBytCounts  = 1 << 4
)

// Flow removed reasons (OFPRR_*).
const (
	RemovedIdleTimeout = 0
	RemovedHardTimeout = 1
	RemovedDelete      = 2
	RemovedGroupDelete = 3
	RemovedMeterDelete = 4
	RemovedEviction    = 5
)

// CookieUnchanged as FlowMod.NewCookie keeps a modified rule's cookie.
const CookieUnchanged = ^uint64(0)

// PortAny and GroupAny disable the out_port and out_group filters.
const (
	PortAny  = 0xffffffff
	GroupAny = 0xffffffff
)

// Counters are a rule's statistics. A modified rule shares its
// predecessor's Counters unless reset_counts was given.
type Counters struct {
	Packets atomic.Uint64
	Bytes   atomic.Uint64
	// Used is the last time a packet hit the rule (UnixNano; 0 never).
	Used atomic.Int64
	// Since is when the counters started (UnixNano): the first rule of a
	// modify/replace lineage was added then. Idle timeouts count from
	// max(Since, Used), as Open vSwitch's stats.used, which a modify
	// does not reset.
	Since int64
	// finIdle and finHard are the timeouts a fin_timeout action
	// reduced the rule's to (0: not reduced).
	finIdle, finHard atomic.Uint32
	// refreshed is when a learn action last learned the rule again
	// (UnixNano; 0 never): its hard timeout counts from then.
	refreshed atomic.Int64
}

// Add accounts n packets of b bytes seen at now.
func (c *Counters) Add(n, b uint64, now time.Time) {
	if n == 0 {
		return
	}
	c.Packets.Add(n)
	c.Bytes.Add(b)
	t := now.UnixNano()
	for {
		old := c.Used.Load()
		if old >= t || c.Used.CompareAndSwap(old, t) {
			return
		}
	}
}

// Touch marks the rule used at now without counting packets (a learn
// action refreshing a flow it learned before).
func (c *Counters) Touch(now time.Time) {
	t := now.UnixNano()
	for {
		old := c.Used.Load()
		if old >= t || c.Used.CompareAndSwap(old, t) {
			return
		}
	}
}

// Rule is one OpenFlow flow. Everything but the counters is immutable once
// the rule is in a table: a modification makes a new Rule.
//
// The rule's match lives only in its classifier rule, compressed to the
// words it matches on (Match expands it): a rule costs memory for what it
// matches, not for every field a flow has.
type Rule struct {
	Table uint8
	// removeReason is set when the rule is removed by this package
	// (a flow_removed reason, -1 for replaced).
	removeReason int8
	Priority     uint16
	Flags        uint16
	IdleTimeout  uint16
	HardTimeout  uint16
	Importance   uint16
	Cookie       uint64
	// Actions is the rule's version-independent action list (apply
	// actions, with instructions as their own action types).
	Actions []ofp.Action
	Stats   *Counters

	// created is when the flow was added, modified when its actions
	// last changed (UnixNano; hard timeouts and hard_age count from it).
	created, modified int64
	cr                *classifier.Rule[*Rule]
	// tun is the match's tunnel metadata mapping, nil when it has none.
	tun *mf.TunMap
}

// Match returns the rule's match.
func (r *Rule) Match() mf.Match {
	var m mf.Match
	r.MatchInto(&m)
	return m
}

// MatchInto sets *m to the rule's match (a flow dump fills its entries
// in place).
func (r *Rule) MatchInto(m *mf.Match) {
	r.cr.MatchInto(m)
	if r.tun != nil {
		m.Tun = *r.tun
	} else {
		m.Tun = mf.TunMap{}
	}
}

// IsCatchAll reports whether the rule matches every packet.
func (r *Rule) IsCatchAll() bool { return r.cr.IsCatchAll() }

// CreatedAt is when the flow was added (duration counts from it).
func (r *Rule) CreatedAt() time.Time { return time.Unix(0, r.created) }

// ModifiedAt is when the rule's hard timeout and hard_age count from:
// its last modification, or a later learn refresh (RefreshHard).
func (r *Rule) ModifiedAt() time.Time {
	return time.Unix(0, max(r.modified, r.Stats.refreshed.Load()))
}

// WasModified reports whether the rule's actions changed since it was
// added (or a learn action refreshed it).
func (r *Rule) WasModified() bool {
	return max(r.modified, r.Stats.refreshed.Load()) != r.created
}

// RefreshHard restarts the rule's hard timeout at now, as a learn action
// that learns an existing flow again does (Open vSwitch's
// ofproto_flow_mod_learn_refresh); the rule is not modified otherwise.
func (r *Rule) RefreshHard(now time.Time) {
	t := now.UnixNano()
	for {
		old := r.Stats.refreshed.Load()
		if old >= t || r.Stats.refreshed.CompareAndSwap(old, t) {
			return
		}
	}
}

// Timeouts returns the rule's idle and hard timeouts in seconds (0:
// none), as fin_timeout may have reduced them.
func (r *Rule) Timeouts() (idle, hard uint16) {
	idle, hard = r.IdleTimeout, r.HardTimeout
	if v := r.Stats.finIdle.Load(); v != 0 && (idle == 0 || uint32(idle) > v) {
		idle = uint16(v)
	}
	if v := r.Stats.finHard.Load(); v != 0 && (hard == 0 || uint32(hard) > v) {
		hard = uint16(v)
	}
	return idle, hard
}

// ReduceTimeouts lowers the rule's timeouts to idle and hard seconds
// where they are longer or unset (0 leaves one alone): Open vSwitch's
// ofproto_rule_reduce_timeouts, which a fin_timeout action applies
// when a TCP FIN or RST goes through the rule.
func (r *Rule) ReduceTimeouts(idle, hard uint16) {
	reduce := func(v *atomic.Uint32, to uint16) {
		for to != 0 {
			old := v.Load()
			if old != 0 && old <= uint32(to) || v.CompareAndSwap(old, uint32(to)) {
				return
			}
		}
	}
	reduce(&r.Stats.finIdle, idle)
	reduce(&r.Stats.finHard, hard)
}

// LastUsed is when a packet last hit the rule, or when its counters
// started if none did: idle timeouts and idle_age count from it.
func (r *Rule) LastUsed() time.Time {
	return time.Unix(0, max(r.Stats.Used.Load(), r.Stats.Since))
}

// Conjunctions returns the rule's conjunction clauses (nil for an ordinary
// rule).
func (r *Rule) Conjunctions() []classifier.Conjunction {
	if r.cr == nil {
		return nil
	}
	return r.cr.Conjunctions()
}

// FlowMod is a version-independent flow table modification, decoded by the
// switch from any OpenFlow version's flow_mod.
type FlowMod struct {
	Command  uint8 // ofp.FlowAdd ... ofp.FlowDeleteStrict
	Table    uint8 // 255: all tables (modify and delete); add uses table 0
	Match    mf.Match
	Priority uint16
	// Cookie/CookieMask select rules for modify and delete.
	Cookie, CookieMask uint64
	// NewCookie is the added rule's cookie, or a modified rule's new
	// cookie (CookieUnchanged keeps it).
	NewCookie   uint64
	IdleTimeout uint16
	HardTimeout uint16
	Importance  uint16
	Flags       uint16
	// OutPort and OutGroup filter modify/delete to rules that output to
	// them (PortAny/GroupAny: no filter). OutPort is an OpenFlow 1.1+
	// port number (OFPP_* in the 0xffffff00 range).
	OutPort  uint32
	OutGroup uint32
	// ModifyMayAdd makes a modify that selects no rule add one (OpenFlow
	// 1.0 and 1.1 semantics, and NXM flow_mods without a cookie mask).
	ModifyMayAdd bool
	// AddOnlyCookie makes NewCookie the cookie of a rule the modify adds
	// only: the rules it modifies keep theirs (OpenFlow 1.1).
	AddOnlyCookie bool
	Actions       []ofp.Action
	// Conjunctions are the rule's conjunction(id,k/n) actions, which make
	// it a clause (the switch extracts them from Actions).
	Conjunctions []classifier.Conjunction
	// RemoveReason is the flow_removed reason of the rules a delete
	// removes; 0 means OFPRR_DELETE (a group or meter delete passes its
	// own).
	RemoveReason int
}

// Errors are *ofp.Error values with Open vSwitch's codes.
func errCode(c ofp.ErrCode, format string, args ...any) error {
	return &ofp.Error{Code: c, Err: fmt.Errorf(format, args...)}
}

// OutputsTo reports whether actions output to OpenFlow port port (1.1+
// numbering) or to group group, as ofpacts_output_to_port/_group: the
// out_port/out_group filters of flow_mod and flow stats.
type OutputsTo func(acts []ofp.Action, port, group uint32) bool

// Config tunes the tables.
type Config struct {
	// OutputsTo implements the out_port/out_group filters.
	OutputsTo OutputsTo
	// Now returns the current time (time.Now when nil); tests fix it.
	Now func() time.Time
	// PrefixFields are the prefix-trie fields of every table (the
	// classifier's default when nil).
	PrefixFields []string
	// Readers, if set, is the translation lock shared by the bridges of
	// one datapath (a translation may cross patch ports); else the
	// tables have their own.
	Readers *sync.RWMutex
}

// Tables are a bridge's 255 OpenFlow tables.
type Tables struct {
	cfg    Config
	tables [NumTables]*classifier.Classifier[*Rule]
	// version is the published version; readers load it once per
	// translation.
	version atomic.Uint64

	mu       sync.Mutex // serializes writers
	inTxn    bool
	nRules   [NumTables]int
	limits   [NumTables]tableLimit // flow limits and eviction (evict.go)
	lookups  [NumTables]atomic.Uint64
	matched  [NumTables]atomic.Uint64
	onChange func()
	onCommit func(tag any, changes []Change)
	// readers is held shared by every translation (ReadLock) and
	// exclusively by a commit while it frees the rules it removed, so
	// a rule leaves the classifier (and its prefix tries, which would
	// otherwise keep un-wildcarding bits for it) once no translation
	// that could still see it is running: a grace period, as RCU.
	readers *sync.RWMutex
	// actions shares identical action lists among the rules that the
	// flow_mod decoder gives it (ShareActions, actpool.go).
	actions actionPool
}

// New returns empty tables.
func New(cfg Config) (*Tables, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.OutputsTo == nil {
		cfg.OutputsTo = func([]ofp.Action, uint32, uint32) bool { return false }
	}
	t := &Tables{cfg: cfg, readers: cfg.Readers}
	if t.readers == nil {
		t.readers = &sync.RWMutex{}
	}
	for i := range t.tables {
		c, err := classifier.New[*Rule](classifier.Options{})
		if err != nil {
			return nil, fmt.Errorf("oftable: table %d: %w", i, err)
		}
		if cfg.PrefixFields != nil {
			if err := c.SetPrefixFields(cfg.PrefixFields...); err != nil {
				return nil, fmt.Errorf("oftable: table %d: %w", i, err)
			}
		}
		t.tables[i] = c
		t.limits[i].max = Unlimited
	}
	return t, nil
}

// OnChange registers f to run after every commit that changed a table (the
// switch bumps its revalidation sequence). It runs with the writer lock
// held and must not call back into Tables.
func (t *Tables) OnChange(f func()) { t.mu.Lock(); t.onChange = f; t.mu.Unlock() }

// SetPrefixFields makes table track names in its prefix tries (the
// classifier's default when nil, none when empty); a change wakes the
// revalidation, since megaflows un-wildcard other bits from now on.
func (t *Tables) SetPrefixFields(table uint8, names []string) error {
	if int(table) >= NumTables {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.tables[table]
	if names == nil {
		names = classifier.DefaultPrefixFields
	}
	before := c.PrefixFields()
	if err := c.SetPrefixFields(names...); err != nil {
		return fmt.Errorf("oftable: table %d: %w", table, err)
	}
	if !slices.Equal(before, c.PrefixFields()) && t.onChange != nil {
		t.onChange()
	}
	return nil
}

// ReadLock marks a translation in progress: removed rules are not freed
// until it calls ReadUnlock. Lookups require it.
func (t *Tables) ReadLock() { t.readers.RLock() }

// ReadUnlock ends a translation.
func (t *Tables) ReadUnlock() { t.readers.RUnlock() }

// Version returns the published version, for lookups.
func (t *Tables) Version() classifier.Version { return t.version.Load() }

// CountLookups credits n packets looked up in table (matched or not) to
// its statistics, as Open vSwitch counts them: per packet, when a
// translation with a packet runs and when megaflow statistics are pushed,
// not per translation (revalidation and ofproto/trace count nothing).
func (t *Tables) CountLookups(table uint8, matched bool, n uint64) {
	if int(table) >= NumTables || n == 0 {
		return
	}
	t.lookups[table].Add(n)
	if matched {
		t.matched[table].Add(n)
	}
}

// Lookup finds the highest-priority rule of table that matches fl in
// version v, ORing the bits it consulted into wc.
func (t *Tables) Lookup(v classifier.Version, table uint8, fl, wc *mf.Flow) *Rule {
	if int(table) >= NumTables {
		return nil
	}
	cr := t.tables[table].Lookup(v, fl, wc)
	if cr == nil {
		return nil
	}
	return cr.Payload
}

// Rules iterates over table's rules visible now (table 255: every table)
// that are at least as specific as target (nil: all), as flow stats and
// non-strict delete select them.
func (t *Tables) Rules(table uint8, target *mf.Match) iter.Seq[*Rule] {
	v := t.Version()
	return func(yield func(*Rule) bool) {
		for i := range t.tables {
			if table != 0xff && int(table) != i {
				continue
			}
			for cr := range t.tables[i].Rules(v, target) {
				if !yield(cr.Payload) {
					return
				}
			}
		}
	}
}

// FindStrict returns the rule of table with exactly m and priority, or nil.
func (t *Tables) FindStrict(table uint8, m *mf.Match, priority uint16) *Rule {
	if int(table) >= NumTables {
		return nil
	}
	cr := t.tables[table].FindExact(m, priority, t.Version())
	if cr == nil {
		return nil
	}
	return cr.Payload
}

// TableStats are one table's counters.
type TableStats struct {
	Active           int
	Lookups, Matched uint64
}

// Stats returns table's counters (zero for table 255, which is no table).
func (t *Tables) Stats(table uint8) TableStats {
	if int(table) >= NumTables {
		return TableStats{}
	}
	t.mu.Lock()
	n := t.nRules[table]
	t.mu.Unlock()
	return TableStats{Active: n, Lookups: t.lookups[table].Load(), Matched: t.matched[table].Load()}
}

// Count returns the number of rules in every table.
func (t *Tables) Count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.nRules {
		n += c
	}
	return n
}

// Txn is a set of flow table changes staged at one version. Only one Txn
// is open at a time; Begin blocks until the previous one ends.
type Txn struct {
	t       *Tables
	v       classifier.Version
	added   []*Rule
	removed []*Rule
	// pred maps a rule added by a modify or a replacing add to the rule
	// it replaced.
	pred map[*Rule]*Rule
	done bool
	// Tag is passed to the OnCommit hook with the changes (the switch
	// names the requesting connection); op counts Apply calls; log
	// records the changes in order (changes.go).
	Tag any
	op  int
	log []Change
}

// ErrTxnDone is returned when a finished Txn is used.
var ErrTxnDone = errors.New("oftable: transaction already committed or aborted")

// Begin opens a transaction staged at the version after the published one.
func (t *Tables) Begin() *Txn {
	t.mu.Lock()
	t.inTxn = true
	return &Txn{t: t, v: t.Version() + 1, op: -1}
}

// Version is the version the transaction stages its changes at: a
// lookup at it sees them (a packet-out inside a bundle).
func (x *Txn) Version() classifier.Version { return x.v }

// Apply stages one flow_mod. On error nothing of this flow_mod is staged
// (earlier ones in the transaction stay staged until Commit or Abort).
func (x *Txn) Apply(fm *FlowMod) error {
	if x.done {
		return ErrTxnDone
	}
	x.op++
	logLen := len(x.log)
	err := x.apply(fm)
	if err != nil {
		x.log = x.log[:logLen]
	}
	return err
}

func (x *Txn) apply(fm *FlowMod) error {
	switch fm.Command {
	case ofp.FlowAdd:
		return x.add(fm)
	case ofp.FlowModify, ofp.FlowModifyStrict:
		return x.modify(fm, fm.Command == ofp.FlowModifyStrict)
	case ofp.FlowDelete, ofp.FlowDeleteStrict:
		if fm.Table != 0xff {
			if err := x.checkTable(fm.Table); err != nil {
				return err
			}
		}
		reason := RemovedDelete
		if fm.RemoveReason != 0 {
			reason = fm.RemoveReason
		}
		x.delete(fm, fm.Command == ofp.FlowDeleteStrict, reason)
		return nil
	}
	return errCode(ofp.OFPFMFC_BAD_COMMAND, "flow_mod command %d", fm.Command)
}

// TableInternal is Open vSwitch's hidden, read-only last table: flow_mods
// naming it are refused with OFPBRC_EPERM.
const TableInternal = 254

// CheckTable checks the table a flow_mod names, as the transaction will
// (OFPBRC_EPERM for the internal table, OFPBRC_BAD_TABLE_ID past the
// last): Open vSwitch makes these checks when a flow_mod is added to a
// bundle, so the add fails rather than the commit.
func CheckTable(fm *FlowMod) error {
	table := fm.Table
	if table == 0xff {
		if fm.Command != ofp.FlowAdd {
			return nil
		}
		table = 0
	}
	return (*Txn)(nil).checkTable(table)
}

func (x *Txn) checkTable(table uint8) error {
	switch {
	case table == TableInternal:
		return errCode(ofp.OFPBRC_EPERM, "table %d is read-only", table)
	case int(table) >= NumTables:
		return errCode(ofp.OFPBRC_BAD_TABLE_ID, "table %d", table)
	}
	return nil
}

func (x *Txn) newRule(fm *FlowMod, table uint8, now time.Time) (*Rule, error) {
	ns := now.UnixNano()
	r := &Rule{
		Table: table, Priority: fm.Priority, Cookie: fm.NewCookie,
		Flags: fm.Flags, IdleTimeout: fm.IdleTimeout, HardTimeout: fm.HardTimeout,
		Importance: fm.Importance, Actions: fm.Actions, created: ns, modified: ns,
		Stats: &Counters{Since: ns},
	}
	if r.Cookie == CookieUnchanged {
		r.Cookie = 0
	}
	if fm.Match.Tun != (mf.TunMap{}) {
		tun := fm.Match.Tun
		r.tun = &tun
	}
	cr, err := x.t.tables[table].NewRule(&fm.Match, r.Priority, fm.Conjunctions, r)
	if err != nil {
		return nil, errCode(ofp.OFPBAC_BAD_ARGUMENT, "%v", err)
	}
	r.cr = cr
	return r, nil
}

func (x *Txn) add(fm *FlowMod) error {
	table := fm.Table
	if table == 0xff {
		table = 0
	}
	if err := x.checkTable(table); err != nil {
		return err
	}
	c := x.t.tables[table]
	// An identical flow is replaced, not an overlap (as Open vSwitch).
	if fm.Flags&FlagCheckOverlap != 0 && c.FindExact(&fm.Match, fm.Priority, x.v) == nil &&
		c.CheckOverlap(&fm.Match, fm.Priority, x.v) {
		return errCode(ofp.OFPFMFC_OVERLAP, "flow overlaps an existing flow in table %d", table)
	}
	now := x.t.cfg.Now()
	r, err := x.newRule(fm, table, now)
	if err != nil {
		return err
	}
	if old := c.FindExact(&fm.Match, fm.Priority, x.v); old != nil {
		// Replacing an identical flow keeps its counters unless
		// reset_counts, as Open vSwitch.
		if fm.Flags&FlagResetCounts == 0 {
			r.Stats = old.Payload.Stats
		}
		if err := x.remove(old.Payload); err != nil {
			return err
		}
		x.replaces(r, old.Payload)
		if err := x.insert(r); err != nil {
			return err
		}
		x.record(ChangeAdded, r, old.Payload, 0)
		return nil
	}
	// Only a new flow needs room; replacing one does not.
	if err := x.makeRoom(table); err != nil {
		return err
	}
	if err := x.insert(r); err != nil {
		return err
	}
	x.record(ChangeAdded, r, nil, 0)
	return nil
}

func (x *Txn) insert(r *Rule) error {
	if err := x.t.tables[r.Table].Insert(r.cr, x.v); err != nil {
		return errCode(ofp.OFPFMFC_UNKNOWN, "table %d: %v", r.Table, err)
	}
	x.t.nRules[r.Table]++
	x.added = append(x.added, r)
	return nil
}

func (x *Txn) remove(r *Rule) error {
	if err := x.t.tables[r.Table].Remove(r.cr, x.v); err != nil {
		return errCode(ofp.OFPFMFC_UNKNOWN, "table %d: %v", r.Table, err)
	}
	x.t.nRules[r.Table]--
	r.removeReason = -1 // replaced, until a delete or expiry says why
	x.removed = append(x.removed, r)
	return nil
}

// selected returns the rules a modify or delete selects, in the staged
// version.
func (x *Txn) selected(fm *FlowMod, strict bool) []*Rule {
	var out []*Rule
	if !strict && fm.Match.IsCatchAll() { // del-flows: room for every rule at once
		n := 0
		for i, c := range x.t.tables {
			if fm.Table == 0xff || int(fm.Table) == i {
				n += c.Count()
			}
		}
		out = make([]*Rule, 0, n)
	}
	keep := func(r *Rule) bool {
		if fm.CookieMask != 0 && (r.Cookie^fm.Cookie)&fm.CookieMask != 0 {
			return false
		}
		if (fm.OutPort != PortAny || fm.OutGroup != GroupAny) && !x.t.cfg.OutputsTo(r.Actions, fm.OutPort, fm.OutGroup) {
			return false
		}
		return true
	}
	for i := range x.t.tables {
		if fm.Table != 0xff && int(fm.Table) != i {
			continue
		}
		c := x.t.tables[i]
		if strict {
			if cr := c.FindExact(&fm.Match, fm.Priority, x.v); cr != nil && keep(cr.Payload) {
				out = append(out, cr.Payload)
			}
			continue
		}
		for cr := range c.Rules(x.v, &fm.Match) {
			if keep(cr.Payload) {
				out = append(out, cr.Payload)
			}
		}
	}
	return out
}

func (x *Txn) modify(fm *FlowMod, strict bool) error {
	if fm.Table != 0xff {
		if err := x.checkTable(fm.Table); err != nil {
			return err
		}
	}
	old := x.selected(fm, strict)
	if len(old) == 0 {
		if fm.ModifyMayAdd {
			return x.add(fm)
		}
		return nil
	}
	now := x.t.cfg.Now()
	for _, o := range old {
		n := *o
		n.Actions = fm.Actions
		n.modified = now.UnixNano()
		if fm.NewCookie != CookieUnchanged && !fm.AddOnlyCookie {
			n.Cookie = fm.NewCookie
		}
		if fm.Flags&FlagResetCounts != 0 {
			n.Stats = &Counters{Since: now.UnixNano()}
		}
		cr, err := o.cr.WithPayload(fm.Conjunctions, &n)
		if err != nil {
			return errCode(ofp.OFPBAC_BAD_ARGUMENT, "%v", err)
		}
		n.cr = cr
		if err := x.remove(o); err != nil {
			return err
		}
		x.replaces(&n, o)
		if err := x.insert(&n); err != nil {
			return err
		}
		x.record(ChangeModified, &n, o, 0)
	}
	return nil
}

func (x *Txn) delete(fm *FlowMod, strict bool, reason int) {
	sel := x.selected(fm, strict)
	x.removed = slices.Grow(x.removed, len(sel))
	for _, r := range sel {
		if x.remove(r) == nil {
			// Deleting a rule this transaction made from a visible one
			// deletes that one: it is the flow that disappears.
			for p := r; p != nil; p = x.pred[p] {
				p.removeReason = int8(reason)
			}
			x.record(ChangeRemoved, r, nil, reason)
		}
	}
}

// replaces records that n took old's place in this transaction.
func (x *Txn) replaces(n, old *Rule) {
	if x.pred == nil {
		x.pred = map[*Rule]*Rule{}
	}
	x.pred[n] = old
}

// Removal is a rule a commit removed for good (not replaced by a modified
// copy), with Open vSwitch's flow_removed reason.
type Removal struct {
	Rule   *Rule
	Reason int
}

// Commit publishes the staged version and returns the rules it removed
// (deleted or expired, not those replaced by modify or add), for
// flow_removed messages.
func (x *Txn) Commit() []Removal {
	if x.done {
		return nil
	}
	x.done = true
	t := x.t
	defer t.mu.Unlock()
	t.inTxn = false
	if len(x.added) == 0 && len(x.removed) == 0 {
		return nil
	}
	// Only the tables this transaction changed get the new version
	// (readers pass the version they look up at; a table without staged
	// rules looks the same at any later version), and only those it
	// removed rules from need a sweep. One flow_mod per commit is the
	// common case (ovs-ofctl add-flows), so no pass over all tables.
	var changed, removedFrom [NumTables]bool
	for _, r := range x.added {
		if !changed[r.Table] {
			changed[r.Table] = true
			t.tables[r.Table].Publish(x.v)
		}
	}
	for _, r := range x.removed {
		removedFrom[r.Table] = true
		if !changed[r.Table] {
			changed[r.Table] = true
			t.tables[r.Table].Publish(x.v)
		}
	}
	t.version.Store(x.v)
	if len(x.removed) == 0 {
		if t.onChange != nil {
			t.onChange()
		}
		x.notify()
		return nil
	}
	t.readers.Lock()
	for i, c := range t.tables {
		if removedFrom[i] {
			c.Sweep(x.v)
		}
	}
	t.readers.Unlock()
	replaced := make(map[*Rule]bool, len(x.added))
	for _, r := range x.added {
		replaced[r] = true
	}
	out := make([]Removal, 0, len(x.removed))
	for _, r := range x.removed {
		// Rules replaced by add or modify have no reason; a rule both
		// added and removed in the transaction was never visible.
		if !replaced[r] && r.removeReason >= 0 {
			out = append(out, Removal{Rule: r, Reason: int(r.removeReason)})
		}
	}
	if t.onChange != nil {
		t.onChange()
	}
	x.notify()
	return out
}

// Abort undoes every staged change; nothing was ever visible.
func (x *Txn) Abort() {
	if x.done {
		return
	}
	x.done = true
	t := x.t
	defer t.mu.Unlock()
	t.inTxn = false
	for i := len(x.added) - 1; i >= 0; i-- {
		r := x.added[i]
		if t.tables[r.Table].Delete(r.cr) == nil {
			t.nRules[r.Table]--
		}
	}
	for _, r := range x.removed {
		t.tables[r.Table].RestoreVisibility(r.cr)
		t.nRules[r.Table]++
	}
}

// sweepLocked frees the rules removed at versions up to v once no
// translation is running (those starting now see version v).
func (t *Tables) sweepLocked(v classifier.Version) {
	t.readers.Lock()
	defer t.readers.Unlock()
	for _, c := range t.tables {
		c.Sweep(v)
	}
}

// Sweep frees removed rules that no translation can still see. Commits
// sweep; the switch also calls it periodically.
func (t *Tables) Sweep() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked(t.Version())
}

// Expire removes the rules whose idle or hard timeout has passed at now
// and returns them with their reasons (OFPRR_IDLE_TIMEOUT or
// OFPRR_HARD_TIMEOUT).
func (t *Tables) Expire(now time.Time) []Removal {
	x := t.Begin()
	v := x.v - 1
	for i := range t.tables {
		if t.nRules[i] == 0 {
			continue
		}
		for cr := range t.tables[i].Rules(v, nil) {
			r := cr.Payload
			idleTO, hardTO := r.Timeouts()
			if hardTO == 0 && idleTO == 0 {
				continue
			}
			reason := -1
			if hardTO != 0 && now.Sub(r.ModifiedAt()) >= time.Duration(hardTO)*time.Second {
				reason = RemovedHardTimeout
			} else if idleTO != 0 {
				if now.Sub(r.LastUsed()) >= time.Duration(idleTO)*time.Second {
					reason = RemovedIdleTimeout
				}
			}
			if reason >= 0 && x.remove(r) == nil {
				r.removeReason = int8(reason)
				x.record(ChangeRemoved, r, nil, reason)
			}
		}
	}
	return x.Commit()
}
