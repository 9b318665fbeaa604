package router

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
)

// Kind says where a route came from.
type Kind uint8

// Route kinds.
const (
	KindCached Kind = iota // learned from the kernel
	KindUser               // added with ovs/route/add
)

// Priority offsets over the 128-bit prefix length, as Open vSwitch ranks
// routes: user routes beat kernel routes of the same length, kernel local
// routes beat both.
const (
	priUser  = 32
	priLocal = 64
)

// Route is one entry of the table.
type Route struct {
	Prefix  netip.Prefix // destination network (masked)
	Mark    uint32       // packet mark the route applies to (0 for none)
	Dev     string       // output device (bridge) name
	Gateway netip.Addr   // next hop; invalid when directly connected
	Src     netip.Addr   // source address for tunnels using the route
	Local   bool         // from the kernel's local table
	Kind    Kind

	priority int
}

// AddrsFunc returns the addresses of device dev with their prefix lengths,
// in the device's order; nil if it has none or does not exist.
type AddrsFunc func(dev string) []netip.Prefix

// ErrNoSource is returned when a route's device has no address usable as a
// source for the route's destination or gateway.
var ErrNoSource = errors.New("router: source address not available for route")

// key identifies a route inside a group: masked destination and mark.
type key struct {
	addr [16]byte
	mark uint32
}

// subtable is the set of routes with one prefix length.
type subtable struct {
	plen   int // 0..128
	maxPri int
	rules  []*Route // insertion order
}

// snapshot is the immutable lookup view published to readers.
type snapshot struct {
	groups []group
}

type group struct {
	mask   [16]byte
	maxPri int
	rules  map[key]*Route // highest-priority route per key
}

// Table is the routing table. The zero value is not usable; call New.
type Table struct {
	addrs AddrsFunc

	snap atomic.Pointer[snapshot]

	mu        sync.Mutex
	subtables []*subtable // guarded by mu; ordered by maxPri, stable
	onChange  func()      // guarded by mu; see OnChange
}

// OnChange makes t call fn, without its lock held, after every change of
// its routes: megaflows that tunnel (or failed to) by a route must be
// translated again, as Open vSwitch's route changes bump tnl_conf_seq.
func (t *Table) OnChange(fn func()) {
	t.mu.Lock()
	t.onChange = fn
	t.mu.Unlock()
}

// changed returns the change callback to run once t.mu is released (nil
// when there is none).
//
// Preconditions: t.mu is held.
func (t *Table) changed() func() {
	if t.onChange == nil {
		return func() {}
	}
	return t.onChange
}

// New returns an empty table that selects source addresses with addrs.
func New(addrs AddrsFunc) *Table {
	if addrs == nil {
		addrs = func(string) []netip.Prefix { return nil }
	}
	t := &Table{addrs: addrs}
	t.snap.Store(&snapshot{})
	return t
}

var masks = func() (m [129][16]byte) {
	for p := 0; p <= 128; p++ {
		for i := 0; i < p; i++ {
			m[p][i/8] |= 0x80 >> (i % 8)
		}
	}
	return m
}()

// to16 returns a as 16 bytes, IPv4 as IPv4-mapped IPv6.
func to16(a netip.Addr) [16]byte {
	if !a.IsValid() {
		return [16]byte{}
	}
	return a.As16()
}

// from16 is the inverse of to16: IPv4-mapped addresses become IPv4.
func from16(b [16]byte) netip.Addr { return netip.AddrFrom16(b).Unmap() }

func and16(a, m [16]byte) (r [16]byte) {
	for i := range a {
		r[i] = a[i] & m[i]
	}
	return r
}

// normalize masks p and writes IPv4-mapped networks as IPv4, so that
// "::ffff:1.2.3.0/120" and "1.2.3.0/24" are the same route, as in OVS.
func normalize(p netip.Prefix) netip.Prefix {
	pl := plen128(p)
	a := from16(and16(to16(p.Addr()), masks[pl]))
	if a.Is4() {
		return netip.PrefixFrom(a, pl-96)
	}
	return netip.PrefixFrom(a, pl)
}

// plen128 returns p's prefix length in the 128-bit space.
func plen128(p netip.Prefix) int {
	if p.Addr().Is4() {
		return p.Bits() + 96
	}
	return p.Bits()
}

// Lookup returns the highest-priority route for dst whose mark equals mark.
// It takes no lock and does not allocate.
func (t *Table) Lookup(dst netip.Addr, mark uint32) (Route, bool) {
	if !dst.IsValid() {
		return Route{}, false
	}
	r := t.lookup(to16(dst), mark)
	if r == nil {
		return Route{}, false
	}
	return *r, true
}

// LookupFrom is Lookup for a tunnel with a configured source address, as
// Open vSwitch routes one: when src is valid it must itself hit a local
// route (be one of this host's addresses), and the result keeps src as its
// source. It does not allocate.
func (t *Table) LookupFrom(dst, src netip.Addr, mark uint32) (Route, bool) {
	if !dst.IsValid() {
		return Route{}, false
	}
	if src.IsValid() && !src.IsUnspecified() {
		if r := t.lookup(to16(src), mark); r == nil || !r.Local {
			return Route{}, false
		}
	}
	r := t.lookup(to16(dst), mark)
	if r == nil {
		return Route{}, false
	}
	out := *r
	if src.IsValid() && !src.IsUnspecified() {
		out.Src = src.Unmap()
	}
	return out, true
}

func (t *Table) lookup(d [16]byte, mark uint32) *Route {
	s := t.snap.Load()
	var best *Route
	for i := range s.groups {
		g := &s.groups[i]
		if best != nil && g.maxPri <= best.priority {
			break
		}
		if r := g.rules[key{and16(d, g.mask), mark}]; r != nil && (best == nil || r.priority > best.priority) {
			best = r
		}
	}
	return best
}

// sourceFor chooses the source address for reaching dst through dev: the
// device address whose prefix covers dst with the most prefix bits (the first
// such on ties). IPv4 destinations only consider IPv4 addresses.
func (t *Table) sourceFor(dst [16]byte, dev string) (netip.Addr, bool) {
	dstIs4 := from16(dst).Is4()
	best, bestBits := netip.Addr{}, -1
	for _, p := range t.addrs(dev) {
		a := p.Addr()
		if !a.IsValid() || p.Bits() < 0 {
			continue
		}
		var m [16]byte
		ones := p.Bits()
		if a.Unmap().Is4() {
			// An IPv4 netmask is IPv4-mapped: it also covers the ::ffff: bits.
			m = masks[96+min(p.Bits(), 32)]
			clear(m[:10])
			ones = 16 + min(p.Bits(), 32)
		} else {
			if dstIs4 {
				continue
			}
			m = masks[min(ones, 128)]
		}
		if and16(dst, m) == and16(to16(a), m) && ones > bestBits {
			best, bestBits = a.Unmap(), ones
		}
	}
	return best, bestBits >= 0
}

// insert adds or replaces (same prefix, mark and priority) a route.
//
// Preconditions: t.mu is held.
func (t *Table) insert(r Route) error {
	// The source is chosen for the destination as given, before masking.
	src, ok := t.sourceFor(to16(r.Prefix.Addr()), r.Dev)
	if !ok && r.Gateway.IsValid() {
		src, ok = t.sourceFor(to16(r.Gateway), r.Dev)
	}
	if !ok {
		return ErrNoSource
	}
	r.Src = src
	pl := plen128(r.Prefix)
	r.Prefix = normalize(r.Prefix)
	nr := &r
	st := t.findSubtable(pl)
	if st == nil {
		st = &subtable{plen: pl, maxPri: -1}
		t.subtables = append(t.subtables, st)
	}
	for i, old := range st.rules {
		if old.priority == nr.priority && old.Mark == nr.Mark && old.Prefix == nr.Prefix {
			st.rules[i] = nr
			t.publish()
			return nil
		}
	}
	st.rules = append(st.rules, nr)
	st.maxPri = max(st.maxPri, nr.priority)
	t.publish()
	return nil
}

// Preconditions: t.mu is held.
func (t *Table) findSubtable(pl int) *subtable {
	for _, st := range t.subtables {
		if st.plen == pl {
			return st
		}
	}
	return nil
}

// remove deletes the route at index i of st, dropping st when it empties the
// way Open vSwitch's priority vector does (the last group takes its slot,
// then the vector is re-sorted).
//
// Preconditions: t.mu is held.
func (t *Table) remove(st *subtable, i int) {
	st.rules = slices.Delete(st.rules, i, i+1)
	if len(st.rules) == 0 {
		j := slices.Index(t.subtables, st)
		last := len(t.subtables) - 1
		t.subtables[j] = t.subtables[last]
		t.subtables[last] = nil
		t.subtables = t.subtables[:last]
		return
	}
	st.maxPri = -1
	for _, r := range st.rules {
		st.maxPri = max(st.maxPri, r.priority)
	}
}

// publish re-sorts the groups and stores a new lookup snapshot.
//
// Preconditions: t.mu is held.
func (t *Table) publish() {
	slices.SortStableFunc(t.subtables, func(a, b *subtable) int { return b.maxPri - a.maxPri })
	s := &snapshot{groups: make([]group, len(t.subtables))}
	for i, st := range t.subtables {
		g := group{mask: masks[st.plen], maxPri: st.maxPri, rules: make(map[key]*Route, len(st.rules))}
		for _, r := range st.rules {
			k := key{to16(r.Prefix.Addr()), r.Mark}
			if old := g.rules[k]; old == nil || r.priority > old.priority {
				g.rules[k] = r
			}
		}
		s.groups[i] = g
	}
	// Routes of equal priority in different groups keep group order, so the
	// early exit in lookup stays correct: groups are sorted by maxPri.
	t.snap.Store(s)
}

// Add inserts a user route (ovs/route/add). gw may be the zero Addr.
func (t *Table) Add(prefix netip.Prefix, dev string, gw netip.Addr, mark uint32) error {
	if !prefix.IsValid() {
		return errors.New("router: invalid prefix")
	}
	if gw.IsValid() && gw.IsUnspecified() {
		gw = netip.Addr{}
	}
	t.mu.Lock()
	err := t.insert(Route{Prefix: prefix, Mark: mark, Dev: dev, Gateway: gw.Unmap(), Kind: KindUser,
		priority: plen128(prefix) + priUser})
	notify := t.changed()
	t.mu.Unlock()
	if err == nil {
		notify()
	}
	return err
}

// Del removes the user route for prefix and mark; it reports whether one
// existed.
func (t *Table) Del(prefix netip.Prefix, mark uint32) bool {
	if !prefix.IsValid() {
		return false
	}
	prefix = normalize(prefix)
	pl, d := plen128(prefix), prefix.Addr()
	t.mu.Lock()
	st := t.findSubtable(pl)
	if st != nil {
		for i, r := range st.rules {
			if r.priority == pl+priUser && r.Mark == mark && r.Prefix.Addr() == d {
				t.remove(st, i)
				t.publish()
				notify := t.changed()
				t.mu.Unlock()
				notify()
				return true
			}
		}
	}
	t.mu.Unlock()
	return false
}

// KernelRoute is a route as learned from the kernel.
type KernelRoute struct {
	Dst     netip.Prefix
	Gateway netip.Addr // invalid or unspecified when none
	Dev     string
	Mark    uint32
	Local   bool // RTN_LOCAL
}

// ReplaceCached drops every cached route, then inserts routes in order,
// silently skipping those without a usable source address, as a kernel
// re-dump does in Open vSwitch.
func (t *Table) ReplaceCached(routes []KernelRoute) {
	t.mu.Lock()
	before := t.routesLocked()
	t.flushCached()
	for _, kr := range routes {
		if !kr.Dst.IsValid() {
			continue
		}
		gw := kr.Gateway
		if gw.IsValid() && gw.IsUnspecified() {
			gw = netip.Addr{}
		}
		pri := plen128(kr.Dst)
		if kr.Local {
			pri += priLocal
		}
		_ = t.insert(Route{Prefix: kr.Dst, Mark: kr.Mark, Dev: kr.Dev, Gateway: gw, Local: kr.Local,
			Kind: KindCached, priority: pri})
	}
	t.publish()
	// Link notifications re-dump an unchanged table often: only a real
	// change re-translates megaflows.
	same := slices.Equal(before, t.routesLocked())
	notify := t.changed()
	t.mu.Unlock()
	if !same {
		notify()
	}
}

// flushCached removes cached routes in listing order.
//
// Preconditions: t.mu is held.
func (t *Table) flushCached() {
	var victims []*Route
	for _, st := range t.subtables {
		for _, r := range st.rules {
			if r.Kind == KindCached {
				victims = append(victims, r)
			}
		}
	}
	for _, v := range victims {
		for _, st := range t.subtables {
			if i := slices.Index(st.rules, v); i >= 0 {
				t.remove(st, i)
				break
			}
		}
	}
	t.publish()
}

// Routes returns all routes in ovs/route/show order.
func (t *Table) Routes() []Route {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.routesLocked()
}

// routesLocked is Routes with t.mu held.
func (t *Table) routesLocked() []Route {
	var out []Route
	for _, st := range t.subtables {
		for _, r := range st.rules {
			out = append(out, *r)
		}
	}
	return out
}

// Show formats the table as ovs/route/show does.
func (t *Table) Show() string {
	var b strings.Builder
	b.WriteString("Route Table:\n")
	for _, r := range t.Routes() {
		if r.Kind == KindCached {
			b.WriteString("Cached: ")
		} else {
			b.WriteString("User: ")
		}
		b.WriteString(ovscmd.FormatAddr(r.Prefix.Addr()))
		b.WriteString("/")
		b.WriteString(itoa(uint64(r.Prefix.Bits())))
		if r.Mark != 0 {
			b.WriteString(" MARK ")
			b.WriteString(itoa(uint64(r.Mark)))
		}
		b.WriteString(" dev ")
		b.WriteString(r.Dev)
		if r.Gateway.IsValid() {
			b.WriteString(" GW ")
			b.WriteString(ovscmd.FormatAddr(r.Gateway))
		}
		b.WriteString(" SRC ")
		b.WriteString(ovscmd.FormatAddr(r.Src))
		if r.Local {
			b.WriteString(" local")
		}
		b.WriteString("\n")
	}
	return b.String()
}
