package classifier

import (
	"errors"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// Version is a classifier version number. A rule is visible in the
// versions [added, removed).
type Version = uint64

const (
	// VersionMin is the first version.
	VersionMin Version = 0
	// VersionMax is the last version a lookup may use.
	VersionMax Version = math.MaxUint64 - 1
	// VersionNotRemoved is the remove version of a rule not scheduled for
	// removal.
	VersionNotRemoved Version = math.MaxUint64
)

// Errors returned by the classifier.
var (
	ErrDuplicate      = errors.New("classifier: identical rule exists")
	ErrInserted       = errors.New("classifier: rule already inserted")
	ErrNotInserted    = errors.New("classifier: rule not inserted")
	ErrBadVersion     = errors.New("classifier: remove version before add version")
	ErrBadConjunction = errors.New("classifier: bad conjunction")
	ErrPrefixFields   = errors.New("classifier: bad prefix fields")
)

// Conjunction is one conjunction(id, k/n) action: the rule is clause
// Clause (0-based, k-1) of the n-dimensional conjunctive match ID.
type Conjunction struct {
	ID       uint32
	Clause   uint8
	NClauses uint8
}

// Rule is a classifier rule: a match, a priority, optional conjunctions and
// a payload owned by the caller. The match, priority and conjunctions are
// fixed at NewRule; a rule is in at most one classifier at a time.
//
// The match is kept compressed: the words of mf.Flow its mask has bits
// in (a shape, shared with every rule of its subtable once inserted) and
// its key in just those words, so a rule costs memory for the fields it
// matches, not for the whole flow.
type Rule[T any] struct {
	Payload T

	priority uint16
	conj     *conjSet
	shape    *shape
	key      []uint64 // shape.idx's words of the flow, masked

	// Versions: atomic because a rule may be re-inserted after Delete
	// while a stale reader still walks a chain holding it.
	add    atomic.Uint64
	remove atomic.Uint64

	// Writer-only state (under Classifier.mu).
	hash uint64
	st   *subtable[T]
}

// conjSet is a clause rule's conjunctions.
type conjSet struct {
	list       []Conjunction
	minClauses int
}

// shape is a mask in compressed form: the non-zero words of mf.Flow's
// mask (idx) and their values.
type shape struct {
	idx  []uint8
	mask []uint64
}

// NewRule returns a rule for match m. conj, if not empty, makes the rule a
// conjunctive clause: its actions are only conjunction actions.
func NewRule[T any](m *mf.Match, priority uint16, conj []Conjunction, payload T) (*Rule[T], error) {
	return newRule(m, priority, conj, payload, nil)
}

// NewRule is the package's NewRule for a rule meant for c: when m has the
// mask of the last rule inserted into c, the new rule shares that mask's
// shape from the start instead of allocating its own (rules are mostly
// added many of one shape at a time).
func (c *Classifier[T]) NewRule(m *mf.Match, priority uint16, conj []Conjunction, payload T) (*Rule[T], error) {
	return newRule(m, priority, conj, payload, c.shapeHint.Load())
}

// sameMask reports whether mask mw is sh's.
func (sh *shape) sameMask(mw *words) bool {
	k := 0
	for i, w := range mw {
		if w == 0 {
			continue
		}
		if k == len(sh.idx) || int(sh.idx[k]) != i || sh.mask[k] != w {
			return false
		}
		k++
	}
	return k == len(sh.idx)
}

func newRule[T any](m *mf.Match, priority uint16, conj []Conjunction, payload T, hint *shape) (*Rule[T], error) {
	r := &Rule[T]{Payload: payload, priority: priority}
	kw, mw := fw(&m.Flow), fw(&m.Mask)
	if hint != nil && hint.sameMask(mw) {
		r.shape = hint
		r.key = make([]uint64, len(hint.idx))
		for k, i := range hint.idx {
			r.key[k] = kw[i] & hint.mask[k]
		}
		if err := r.setConj(conj); err != nil {
			return nil, err
		}
		return r, nil
	}
	n := 0
	for _, w := range mw {
		if w != 0 {
			n++
		}
	}
	sh := &shape{idx: make([]uint8, 0, n), mask: make([]uint64, 0, n)}
	r.key = make([]uint64, 0, n)
	for i, w := range mw {
		if w != 0 {
			sh.idx = append(sh.idx, uint8(i))
			sh.mask = append(sh.mask, w)
			r.key = append(r.key, kw[i]&w)
		}
	}
	r.shape = sh
	if err := r.setConj(conj); err != nil {
		return nil, err
	}
	return r, nil
}

// setConj makes r a clause of the conjunctions conj (copied), if any.
func (r *Rule[T]) setConj(conj []Conjunction) error {
	if len(conj) == 0 {
		return nil
	}
	cs := &conjSet{minClauses: 64}
	for _, c := range conj {
		if c.NClauses == 0 || c.NClauses > 64 || c.Clause >= c.NClauses {
			return fmt.Errorf("%w: id %d clause %d/%d", ErrBadConjunction, c.ID, int(c.Clause)+1, c.NClauses)
		}
		cs.minClauses = min(cs.minClauses, int(c.NClauses))
	}
	cs.list = slices.Clone(conj)
	r.conj = cs
	return nil
}

// WithPayload returns a new rule with r's match, priority and
// conjunctions conj (copied) and payload p, sharing r's compressed match
// (a modified OpenFlow rule).
func (r *Rule[T]) WithPayload(conj []Conjunction, p T) (*Rule[T], error) {
	n := &Rule[T]{Payload: p, priority: r.priority, shape: r.shape, key: r.key}
	if err := n.setConj(conj); err != nil {
		return nil, err
	}
	return n, nil
}

// Priority returns the rule's priority (higher wins).
func (r *Rule[T]) Priority() uint16 { return r.priority }

// Conjunctions returns the rule's conjunction clauses; do not modify them.
func (r *Rule[T]) Conjunctions() []Conjunction {
	if r.conj == nil {
		return nil
	}
	return r.conj.list
}

// Match returns the rule's match (without tunnel metadata mapping).
func (r *Rule[T]) Match() mf.Match {
	var m mf.Match
	r.MatchInto(&m)
	return m
}

// MatchInto sets m's flow and mask to the rule's match (m.Tun is left
// alone).
func (r *Rule[T]) MatchInto(m *mf.Match) {
	m.Flow, m.Mask = mf.Flow{}, mf.Flow{}
	kw, mw := fw(&m.Flow), fw(&m.Mask)
	for k, i := range r.shape.idx {
		kw[i], mw[i] = r.key[k], r.shape.mask[k]
	}
}

// IsCatchAll reports whether the rule matches every packet.
func (r *Rule[T]) IsCatchAll() bool { return len(r.shape.idx) == 0 }

// AddVersion returns the first version the rule is visible in.
func (r *Rule[T]) AddVersion() Version { return r.add.Load() }

// RemoveVersion returns the first version the rule is invisible in again
// (VersionNotRemoved if not scheduled for removal).
func (r *Rule[T]) RemoveVersion() Version { return r.remove.Load() }

// VisibleIn reports whether the rule is visible in version v.
func (r *Rule[T]) VisibleIn(v Version) bool { return r.add.Load() <= v && v < r.remove.Load() }

func (r *Rule[T]) words() words {
	var w words
	for k, i := range r.shape.idx {
		w[i] = r.key[k]
	}
	return w
}

func (r *Rule[T]) maskWords() words {
	var w words
	for k, i := range r.shape.idx {
		w[i] = r.shape.mask[k]
	}
	return w
}

// matchesWords reports whether r has the same match as the flow words kw
// seen through r's mask (kw already masked or not).
func (r *Rule[T]) matchesWords(kw *words) bool {
	for k, i := range r.shape.idx {
		if kw[i]&r.shape.mask[k] != r.key[k] {
			return false
		}
	}
	return true
}

// Options configure a classifier.
type Options struct {
	// PrefixFields are the fields to build prefix tries for, by mf field
	// name (ip_src, ip_dst, ipv6_src, ipv6_dst, tun_id, tun_src, tun_dst,
	// tun_ipv6_src, tun_ipv6_dst or an alias). nil means
	// DefaultPrefixFields; an empty list or "none" means no tries.
	PrefixFields []string
}

type subEntry[T any] struct {
	pri int
	st  *subtable[T]
}

// view is what readers load: the subtables in lookup order and the tries.
// It is replaced, never modified, when the subtable set or a subtable's
// maximum priority changes.
type view[T any] struct {
	subs   []subEntry[T]
	byMask map[words]*subtable[T]
	tries  *trieSet
}

type trieSet struct {
	fields []*prefixField
	roots  [MaxPrefixFields]atomic.Pointer[tnode]
}

// Classifier is a priority classifier over mf.Flow. See the package
// documentation.
type Classifier[T any] struct {
	view    atomic.Pointer[view[T]]
	version atomic.Uint64

	// shapeHint is the shape of the subtable a rule was last inserted
	// into (NewRule).
	shapeHint atomic.Pointer[shape]

	mu        sync.Mutex // serializes writers
	subtables []*subtable[T]
	count     int
	seq       uint64
	removed   []*Rule[T] // rules with a remove version, for Sweep
	// kw is insert's and delete's scratch for a rule's flow words: on
	// the stack it would escape (the trie fields' getters are called
	// through function values) and cost each flow_mod a heap copy.
	kw words
}

// New returns an empty classifier.
func New[T any](opts Options) (*Classifier[T], error) {
	ts, err := newTrieSet(opts.PrefixFields)
	if err != nil {
		return nil, err
	}
	c := &Classifier[T]{}
	c.view.Store(&view[T]{byMask: map[words]*subtable[T]{}, tries: ts})
	return c, nil
}

func newTrieSet(names []string) (*trieSet, error) {
	if names == nil {
		names = DefaultPrefixFields
	}
	if len(names) == 1 && names[0] == "none" {
		names = nil
	}
	if len(names) > MaxPrefixFields {
		return nil, fmt.Errorf("%w: %d fields, at most %d", ErrPrefixFields, len(names), MaxPrefixFields)
	}
	ts := &trieSet{}
	for _, n := range names {
		f := prefixFields[n]
		if f == nil {
			return nil, fmt.Errorf("%w: %q cannot be prefix-tracked", ErrPrefixFields, n)
		}
		if slices.Contains(ts.fields, f) {
			return nil, fmt.Errorf("%w: %q listed twice", ErrPrefixFields, n)
		}
		ts.fields = append(ts.fields, f)
	}
	return ts, nil
}

// PrefixFields returns the names of the prefix-tracked fields.
func (c *Classifier[T]) PrefixFields() []string {
	var out []string
	for _, f := range c.view.Load().tries.fields {
		out = append(out, f.name)
	}
	return out
}

// SetPrefixFields changes the prefix-tracked fields to names (none when
// called without names or with "none"); at most MaxPrefixFields. It
// rebuilds the classifier's lookup structures and publishes them at once;
// lookups running meanwhile use the old ones.
func (c *Classifier[T]) SetPrefixFields(names ...string) error {
	if names == nil {
		names = []string{}
	}
	ts, err := newTrieSet(names)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.view.Load()
	if slices.Equal(old.tries.fields, ts.fields) {
		return nil
	}
	n := &Classifier[T]{}
	n.view.Store(&view[T]{byMask: map[words]*subtable[T]{}, tries: ts})
	for _, st := range c.subtables {
		st.rules.all(func(r *Rule[T]) bool {
			n.insert(r)
			return true
		})
	}
	c.subtables, c.seq = n.subtables, n.seq
	c.view.Store(n.view.Load())
	return nil
}

// Version returns the published version (see Publish).
func (c *Classifier[T]) Version() Version { return c.version.Load() }

// Publish makes v the published version. Readers that load Version after
// Publish returns see every insertion and removal made at versions <= v
// before Publish was called, all at once. Versions must not decrease.
func (c *Classifier[T]) Publish(v Version) { c.version.Store(v) }

// Count returns the number of rules in the classifier, visible or not.
func (c *Classifier[T]) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count
}

// IsEmpty reports whether the classifier holds no rules.
func (c *Classifier[T]) IsEmpty() bool { return c.Count() == 0 }

// Insert adds r, visible from version v on. It fails if r is already in a
// classifier or if a rule with the same match and priority is present and
// not scheduled for removal.
func (c *Classifier[T]) Insert(r *Rule[T], v Version) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.st != nil {
		return ErrInserted
	}
	if c.findIdentical(r) != nil {
		return fmt.Errorf("%w: priority %d", ErrDuplicate, r.priority)
	}
	r.add.Store(v)
	r.remove.Store(VersionNotRemoved)
	c.insert(r)
	return nil
}

// Replace adds r visible from version v and, if a rule with the same match
// and priority is present and not scheduled for removal, deletes it at once
// and returns it (Open vSwitch's classifier_replace). For an atomic
// replacement across versions use Remove on the old rule and Insert.
func (c *Classifier[T]) Replace(r *Rule[T], v Version) (*Rule[T], error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.st != nil {
		return nil, ErrInserted
	}
	old := c.findIdentical(r)
	r.add.Store(v)
	r.remove.Store(VersionNotRemoved)
	c.insert(r) // before deleting old, so readers always find one of them
	if old != nil {
		c.delete(old)
	}
	return old, nil
}

// Remove makes r invisible from version v on (it stays visible in earlier
// versions). The rule stays in the classifier until Delete or Sweep.
func (c *Classifier[T]) Remove(r *Rule[T], v Version) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.st == nil {
		return ErrNotInserted
	}
	if add := r.add.Load(); v < add {
		return fmt.Errorf("%w: remove %d < add %d", ErrBadVersion, v, add)
	}
	if r.remove.Load() == VersionNotRemoved {
		c.removed = append(c.removed, r)
	}
	r.remove.Store(v)
	return nil
}

// RestoreVisibility cancels a Remove (a bundle abort).
func (c *Classifier[T]) RestoreVisibility(r *Rule[T]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.remove.Store(VersionNotRemoved)
}

// Delete removes r from the classifier now. Readers still using a version
// in which r is visible may then miss it: delete a rule only once no
// reader can use such a version (Sweep does this by version).
func (c *Classifier[T]) Delete(r *Rule[T]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.st == nil {
		return ErrNotInserted
	}
	c.delete(r)
	return nil
}

// Sweep deletes the rules removed at versions <= upTo, which no lookup at
// version upTo or later can see, and returns them. The caller guarantees
// that no reader still uses a version below upTo.
func (c *Classifier[T]) Sweep(upTo Version) []*Rule[T] {
	c.mu.Lock()
	defer c.mu.Unlock()
	due := 0
	for _, r := range c.removed {
		if rv := r.remove.Load(); r.st != nil && rv != VersionNotRemoved && rv <= upTo {
			due++
		}
	}
	if due > 0 && due == c.count {
		return c.sweepAll()
	}
	var out []*Rule[T]
	keep := c.removed[:0]
	for _, r := range c.removed {
		switch rv := r.remove.Load(); {
		case r.st == nil || rv == VersionNotRemoved:
		case rv <= upTo:
			c.delete(r)
			out = append(out, r)
		default:
			keep = append(keep, r)
		}
	}
	clear(c.removed[len(keep):])
	c.removed = keep
	return out
}

// sweepAll is Sweep when every rule in the classifier is due (del-flows):
// instead of unlinking the rules one by one from the shared prefix tries
// and stage indices, it publishes empty structures. Lookups still walking
// the old ones see them unchanged; none can use a version that shows
// these rules.
//
// Preconditions: c.mu is held; every rule in c is in c.removed and due.
func (c *Classifier[T]) sweepAll() []*Rule[T] {
	out := make([]*Rule[T], 0, c.count)
	for _, r := range c.removed {
		if r.st != nil && r.remove.Load() != VersionNotRemoved {
			r.st = nil
			out = append(out, r)
		}
	}
	clear(c.removed)
	c.removed = c.removed[:0]
	c.subtables, c.count = nil, 0
	c.publish(map[words]*subtable[T]{}, &trieSet{fields: c.view.Load().tries.fields})
	return out
}

// findIdentical returns the rule with r's match and priority that is not
// scheduled for removal, if any.
func (c *Classifier[T]) findIdentical(r *Rule[T]) *Rule[T] {
	st := c.view.Load().byMask[r.maskWords()]
	if st == nil {
		return nil
	}
	kw := r.words()
	h := st.hashKey(&kw)
	for e := st.rules.head(h); e != nil; e = e.next {
		if e.hash != h {
			continue
		}
		o := e.val
		if o.priority == r.priority && o.matchesWords(&kw) && o.remove.Load() == VersionNotRemoved {
			return o
		}
	}
	return nil
}

// insert links r into the lookup structures. r.add and r.remove must be
// set already: insert runs for new rules and for rebuilds, where readers
// may be reading them.
func (c *Classifier[T]) insert(r *Rule[T]) {
	vw := c.view.Load()
	mw := r.maskWords()
	st := vw.byMask[mw]
	if st == nil {
		c.seq++
		mask := mw // the new subtable keeps it; only this copy escapes
		st = newSubtable[T](&mask, r.shape, vw.tries, c.seq)
		c.subtables = append(c.subtables, st)
		m := make(map[words]*subtable[T], len(vw.byMask)+1)
		for k, s := range vw.byMask {
			m[k] = s
		}
		m[mw] = st
		vw = c.publish(m, vw.tries)
	}
	r.st = st
	c.shapeHint.Store(st.shape)
	if r.shape != st.shape {
		// One shape per mask, not per rule. Only a rule new to the
		// classifier gets here: rebuilt and re-inserted rules carry
		// their subtable's (which the new subtable adopts), so no
		// reader sees this write.
		r.shape = st.shape
	}
	kw := &c.kw
	*kw = r.words()
	kf := flowOf(kw)
	// Tries and stage indices first: they may over-approximate the rules,
	// never under-approximate them.
	for j, f := range vw.tries.fields {
		if pl := int(st.trieLen[j]); pl > 0 {
			vw.tries.roots[j].Store(trieInsert(vw.tries.roots[j].Load(), f.get(kf), pl))
		}
	}
	if st.portsLen > 0 {
		st.ports.Store(trieInsert(st.ports.Load(), portsValue(kf, st.portsMask), st.portsLen))
	}
	var h uint64
	last := len(st.stages) - 1
	for i := range last {
		h = st.stages[i].hash(h, i, kw)
		st.indexAdd(i, finish(h, i))
	}
	r.hash = finish(st.stages[last].hash(h, last, kw), last)
	st.rules.insert(r.hash, r)
	c.count++
	st.priCount[r.priority]++
	if int(r.priority) > st.maxPri {
		st.maxPri = int(r.priority)
		c.publish(vw.byMask, vw.tries)
	}
}

func (c *Classifier[T]) delete(r *Rule[T]) {
	st := r.st
	vw := c.view.Load()
	st.rules.remove(r.hash, func(o *Rule[T]) bool { return o == r })
	kw := &c.kw
	*kw = r.words()
	kf := flowOf(kw)
	var h uint64
	for i := range len(st.stages) - 1 {
		h = st.stages[i].hash(h, i, kw)
		st.indexDel(i, finish(h, i))
	}
	for j, f := range vw.tries.fields {
		if pl := int(st.trieLen[j]); pl > 0 {
			vw.tries.roots[j].Store(trieRemove(vw.tries.roots[j].Load(), f.get(kf).prefix(pl), pl))
		}
	}
	if st.portsLen > 0 {
		st.ports.Store(trieRemove(st.ports.Load(), portsValue(kf, st.portsMask).prefix(st.portsLen), st.portsLen))
	}
	r.st = nil
	c.count--
	if st.priCount[r.priority]--; st.priCount[r.priority] == 0 {
		delete(st.priCount, r.priority)
	}
	switch {
	case st.rules.n == 0:
		c.subtables = slices.DeleteFunc(c.subtables, func(s *subtable[T]) bool { return s == st })
		m := make(map[words]*subtable[T], len(vw.byMask))
		for k, s := range vw.byMask {
			if s != st {
				m[k] = s
			}
		}
		c.publish(m, vw.tries)
	case int(r.priority) == st.maxPri && st.priCount[r.priority] == 0:
		st.maxPri = -1
		for p := range st.priCount {
			st.maxPri = max(st.maxPri, int(p))
		}
		c.publish(vw.byMask, vw.tries)
	}
}

// publish stores a new view with the subtables ordered by maximum priority
// (ties: older subtable first).
func (c *Classifier[T]) publish(byMask map[words]*subtable[T], ts *trieSet) *view[T] {
	subs := make([]subEntry[T], len(c.subtables))
	for i, st := range c.subtables {
		subs[i] = subEntry[T]{pri: st.maxPri, st: st}
	}
	slices.SortStableFunc(subs, func(a, b subEntry[T]) int {
		if a.pri != b.pri {
			return b.pri - a.pri
		}
		if a.st.seq < b.st.seq {
			return -1
		}
		return 1
	})
	vw := &view[T]{subs: subs, byMask: byMask, tries: ts}
	c.view.Store(vw)
	return vw
}

// FindExact returns the rule with exactly match m and priority pri visible
// in version v (strict flow_mod and flow stats), or nil.
func (c *Classifier[T]) FindExact(m *mf.Match, pri uint16, v Version) *Rule[T] {
	st := c.view.Load().byMask[*fw(&m.Mask)]
	if st == nil {
		return nil
	}
	kw := *fw(&m.Flow)
	for i := range kw {
		kw[i] &= st.mask[i]
	}
	h := st.hashKey(&kw)
	for e := st.rules.head(h); e != nil; e = e.next {
		// The node's hash first: other chain members cost a cache miss
		// each to look at.
		if e.hash != h {
			continue
		}
		if r := e.val; r.priority == pri && r.VisibleIn(v) && r.matchesWords(&kw) {
			return r
		}
	}
	return nil
}

// CheckOverlap reports whether a rule visible in version v with priority
// pri could match a packet that m also matches (OFPFF_CHECK_OVERLAP).
func (c *Classifier[T]) CheckOverlap(m *mf.Match, pri uint16, v Version) bool {
	tk, tm := fw(&m.Flow), fw(&m.Mask)
	for _, e := range c.view.Load().subs {
		if e.pri < int(pri) {
			break
		}
		st := e.st
		found := !st.rules.all(func(r *Rule[T]) bool {
			if r.priority != pri || !r.VisibleIn(v) {
				return true
			}
			for k, i := range r.shape.idx {
				cm := r.shape.mask[k] & tm[i]
				if r.key[k]&cm != tk[i]&cm {
					return true
				}
			}
			return false
		})
		if found {
			return true
		}
	}
	return false
}

// Rules iterates over the rules visible in version v whose match is at
// least as specific as target (every bit target matches, the rule matches
// to the same value): the non-strict selection of flow stats and
// delete. A nil target selects every visible rule. The classifier may be
// modified during the iteration; the iteration then sees each rule at most
// once and may or may not see the changes.
func (c *Classifier[T]) Rules(v Version, target *mf.Match) iter.Seq[*Rule[T]] {
	return func(yield func(*Rule[T]) bool) {
		var tk, tm words
		if target != nil {
			tm = *fw(&target.Mask)
			tk = *fw(&target.Flow)
			for i := range tk {
				tk[i] &= tm[i]
			}
		}
		for _, e := range c.view.Load().subs {
			st := e.st
			if !st.covers(&tm) {
				continue
			}
			ok := st.rules.all(func(r *Rule[T]) bool {
				if !r.VisibleIn(v) {
					return true
				}
				for k, i := range r.shape.idx {
					if r.key[k]&tm[i] != tk[i] {
						return true
					}
				}
				return yield(r)
			})
			if !ok {
				return
			}
		}
	}
}

// subtable holds the rules that share one mask.
type subtable[T any] struct {
	mask   words
	idx    []uint8 // the mask's non-zero words
	shape  *shape  // idx and those words of mask, shared by the rules
	stages []stage // the non-empty stages; the last one is looked up in rules
	// indices[i] holds the hashes of the rules' stages 0..i, for i below
	// the last stage, with reference counts.
	indices []hmap[*int32]
	rules   hmap[*Rule[T]]

	trieLen   [MaxPrefixFields]uint8 // prefix length per trie field, 0: not tracked
	portsLen  int                    // ports-trie prefix length, 0: no ports trie
	portsMask uint32
	ports     atomic.Pointer[tnode]

	seq      uint64
	maxPri   int            // writer only
	priCount map[uint16]int // writer only
}

// stage is the part of a subtable's mask in one lookup stage.
type stage struct {
	layer int
	idx   []uint8
	mask  []uint64
}

// newSubtable returns a subtable for mask, whose compressed form sh is
// (the first rule's: its rules share it).
func newSubtable[T any](mask *words, sh *shape, ts *trieSet, seq uint64) *subtable[T] {
	st := &subtable[T]{mask: *mask, seq: seq, maxPri: -1, priCount: map[uint16]int{}, shape: sh, idx: sh.idx}
	for s := range numStages {
		var sg stage
		sg.layer = s
		for i, w := range mask {
			if m := w & stageMasks[s][i]; m != 0 {
				sg.idx = append(sg.idx, uint8(i))
				sg.mask = append(sg.mask, m)
			}
		}
		if len(sg.idx) > 0 {
			st.stages = append(st.stages, sg)
		}
	}
	if len(st.stages) == 0 {
		st.stages = []stage{{layer: stageL4}} // catch-all: one empty final stage
	}
	st.indices = make([]hmap[*int32], len(st.stages)-1)
	mf := flowOf(mask)
	for j, f := range ts.fields {
		st.trieLen[j] = uint8(f.plen(mf))
	}
	// The ports trie narrows a final-stage miss to the port bits that
	// decided it; it is only sound when the final stage has no other bits.
	final := &st.stages[len(st.stages)-1]
	pm := uint32(mf.TpSrc)<<16 | uint32(mf.TpDst)
	portsOnly := pm != 0
	for k, i := range final.idx {
		if final.mask[k]&^portsMask[i] != 0 {
			portsOnly = false
		}
	}
	if portsOnly {
		st.portsMask = pm
		st.portsLen = 32 - bits.TrailingZeros32(pm)
	}
	return st
}

func portsValue(f *mf.Flow, mask uint32) u128 {
	return u128{uint64((uint32(f.TpSrc)<<16|uint32(f.TpDst))&mask) << 32}
}

// covers reports whether the subtable's mask includes every bit of m.
func (st *subtable[T]) covers(m *words) bool {
	for i, w := range m {
		if w&^st.mask[i] != 0 {
			return false
		}
	}
	return true
}

func (st *subtable[T]) hashKey(kw *words) uint64 {
	var h uint64
	for i := range st.stages {
		h = st.stages[i].hash(h, i, kw)
	}
	return finish(h, len(st.stages)-1)
}

func (st *subtable[T]) indexAdd(i int, h uint64) {
	for e := st.indices[i].head(h); e != nil; e = e.next {
		if e.hash == h {
			*e.val++
			return
		}
	}
	one := int32(1)
	st.indices[i].insert(h, &one)
}

func (st *subtable[T]) indexDel(i int, h uint64) {
	for e := st.indices[i].head(h); e != nil; e = e.next {
		if e.hash == h {
			if *e.val--; *e.val == 0 {
				p := e.val
				st.indices[i].remove(h, func(q *int32) bool { return q == p })
			}
			return
		}
	}
}

// hash continues hash h over the stage's words of kw.
func (sg *stage) hash(h uint64, i int, kw *words) uint64 {
	for k, w := range sg.idx {
		h += mix(kw[w]&sg.mask[k], int(w)+i*flowWords)
	}
	return h
}

// mix hashes one word at a position; the sum of mixes is the stage hash,
// so words hash independently.
func mix(w uint64, pos int) uint64 {
	hi, lo := bits.Mul64(w^(uint64(pos+1)*0xa0761d6478bd642f), 0x9e3779b97f4a7c15)
	return hi ^ lo
}

func finish(h uint64, stage int) uint64 {
	h ^= uint64(stage+1) * 0xe7037ed1a0b428db
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}
