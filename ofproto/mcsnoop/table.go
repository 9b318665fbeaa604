package mcsnoop

import (
	"container/list"
	"fmt"
	"net/netip"
	"strings"
	"sync"
)

// Open vSwitch's defaults and bounds (mcast-snooping.h).
const (
	DefaultIdleTime   = 300 // seconds a port stays in a group without a report
	DefaultMaxEntries = 2048
	MrouterIdleTime   = 180 // seconds a router port stays without a query
)

// PortID names a port as the database knows it: the Port row's name.
type PortID = string

type groupKey struct {
	addr netip.Addr // IPv6; IPv4 groups are IPv4-mapped
	vlan uint16
}

type member struct {
	port    PortID
	learned int64 // seconds
}

type group struct {
	key     groupKey
	members *list.List // of *member, least recently refreshed first
	elem    *list.Element
}

type mrouter struct {
	vlan    uint16
	port    PortID
	learned int64 // seconds
}

// Config is a bridge's snooping configuration (other_config).
type Config struct {
	IdleTime   int  // mcast-snooping-aging-time, seconds
	MaxEntries int  // mcast-snooping-table-size
	FloodUnreg bool // !mcast-snooping-disable-flood-unregistered
}

// DefaultConfig is what a bridge gets without other_config.
func DefaultConfig() Config {
	return Config{IdleTime: DefaultIdleTime, MaxEntries: DefaultMaxEntries, FloodUnreg: true}
}

// Table is one bridge's snooping database. It is safe for concurrent
// use: translation reads it and updates it from the packets it sees.
type Table struct {
	mu         sync.Mutex
	idle       int64
	max        int
	floodUnreg bool
	groups     map[groupKey]*group
	groupLRU   *list.List // of *group, least recently used first
	mrouters   *list.List // of *mrouter, least recently refreshed first
	fports     []PortID
	rports     []PortID
	// changed is set by anything that may change where a packet goes:
	// the switch revalidates its megaflows (Run reports and clears it).
	changed bool
}

// New returns an empty database with cfg (normalized as Open vSwitch
// does: aging 15-3600 s, 10 to 1,000,000 entries).
func New(cfg Config) *Table {
	t := &Table{groups: map[groupKey]*group{}, groupLRU: list.New(), mrouters: list.New(), idle: DefaultIdleTime, max: DefaultMaxEntries}
	t.Configure(cfg)
	return t
}

// Configure applies cfg; members keep their age, so a new aging time
// moves their expiry by the difference. It reports whether forwarding may
// change (flooding of unregistered groups switched).
func (t *Table) Configure(cfg Config) bool {
	idle := int64(min(max(cfg.IdleTime, 15), 3600))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.idle = idle
	t.max = min(max(cfg.MaxEntries, 10), 1000*1000)
	changed := t.floodUnreg != cfg.FloodUnreg
	t.floodUnreg = cfg.FloodUnreg
	t.changed = t.changed || changed
	return changed
}

// FloodUnregistered reports whether packets to groups nobody joined are
// flooded (else they go to router and flood ports only).
func (t *Table) FloodUnregistered() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.floodUnreg
}

func secs(nowMS int64) int64 { return nowMS / 1000 }

func (t *Table) isMrouter(vlan uint16, port PortID) *list.Element {
	for e := t.mrouters.Front(); e != nil; e = e.Next() {
		if m := e.Value.(*mrouter); m.vlan == vlan && m.port == port {
			return e
		}
	}
	return nil
}

// AddGroup records that port joined addr in vlan at nowMS. A router or
// flood port is not recorded (it gets the group's packets anyway). It
// reports whether the group is new.
func (t *Table) AddGroup(addr netip.Addr, vlan uint16, port PortID, nowMS int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.addGroupLocked(groupKey{mapped(addr), vlan}, port, secs(nowMS))
}

func (t *Table) addGroupLocked(k groupKey, port PortID, now int64) bool {
	if t.isMrouter(k.vlan, port) != nil || contains(t.fports, port) {
		return false
	}
	g := t.groups[k]
	learned := false
	if g == nil {
		if len(t.groups) >= t.max {
			t.dropGroupLocked(t.groupLRU.Front().Value.(*group))
		}
		g = &group{key: k, members: list.New()}
		t.groups[k] = g
		learned, t.changed = true, true
	} else {
		t.groupLRU.Remove(g.elem)
	}
	g.elem = t.groupLRU.PushBack(g)
	if e := memberElem(g, port); e != nil {
		g.members.Remove(e)
	} else {
		t.changed = true
	}
	g.members.PushBack(&member{port: port, learned: now})
	return learned
}

func memberElem(g *group, port PortID) *list.Element {
	for e := g.members.Front(); e != nil; e = e.Next() {
		if e.Value.(*member).port == port {
			return e
		}
	}
	return nil
}

// LeaveGroup removes port from addr in vlan. A flood-reports port does
// not leave on the first message (several hosts may be behind it): it
// ages out. It reports whether the port was a member.
func (t *Table) LeaveGroup(addr netip.Addr, vlan uint16, port PortID) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.leaveGroupLocked(groupKey{mapped(addr), vlan}, port)
}

func (t *Table) leaveGroupLocked(k groupKey, port PortID) bool {
	if contains(t.rports, port) {
		return false
	}
	g := t.groups[k]
	if g == nil {
		return false
	}
	if e := memberElem(g, port); e != nil {
		g.members.Remove(e)
		t.changed = true
		return true
	}
	return false
}

// AddMrouter records a multicast router (a querier) on port in vlan. A
// flood port is not recorded. Like Open vSwitch, it reports whether
// anything changed since the last Run.
func (t *Table) AddMrouter(vlan uint16, port PortID, nowMS int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if contains(t.fports, port) {
		return false
	}
	if e := t.isMrouter(vlan, port); e != nil {
		t.mrouters.Remove(e)
	} else {
		t.changed = true
	}
	t.mrouters.PushBack(&mrouter{vlan: vlan, port: port, learned: secs(nowMS)})
	return t.changed
}

// SetPortFlood makes port get every multicast packet (or not).
func (t *Table) SetPortFlood(port PortID, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fports = t.setPort(t.fports, port, on)
}

// SetPortFloodReports makes port get every membership report (or not).
func (t *Table) SetPortFloodReports(port PortID, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rports = t.setPort(t.rports, port, on)
}

func (t *Table) setPort(ports []PortID, port PortID, on bool) []PortID {
	i := index(ports, port)
	switch {
	case on && i < 0:
		// Open vSwitch inserts at the head of its list.
		ports = append([]PortID{port}, ports...)
		t.changed = true
	case !on && i >= 0:
		ports = append(ports[:i:i], ports[i+1:]...)
		t.changed = true
	}
	return ports
}

func (t *Table) dropGroupLocked(g *group) {
	t.groupLRU.Remove(g.elem)
	delete(t.groups, g.key)
	t.changed = true
}

// Flush forgets every group and router (mdb/flush); flood settings stay.
func (t *Table) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.groups) > 0 || t.mrouters.Len() > 0 {
		t.changed = true
	}
	t.groups = map[groupKey]*group{}
	t.groupLRU.Init()
	t.mrouters.Init()
}

// FlushPort forgets port's memberships and router entries: the port was
// removed, or its VLAN configuration changed.
func (t *Table) FlushPort(port PortID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for e := t.groupLRU.Front(); e != nil; {
		next := e.Next()
		g := e.Value.(*group)
		if m := memberElem(g, port); m != nil {
			g.members.Remove(m)
			t.changed = true
			if g.members.Len() == 0 {
				t.dropGroupLocked(g)
			}
		}
		e = next
	}
	for e := t.mrouters.Front(); e != nil; {
		next := e.Next()
		if e.Value.(*mrouter).port == port {
			t.mrouters.Remove(e)
			t.changed = true
		}
		e = next
	}
}

// Run ages the database at nowMS: members past the aging time leave,
// groups without members go, the table is trimmed to its size, routers
// past 180 s go. It reports whether forwarding may have changed since the
// last Run (the switch then revalidates its megaflows).
func (t *Table) Run(nowMS int64) bool {
	now := secs(nowMS)
	t.mu.Lock()
	defer t.mu.Unlock()
	for e := t.groupLRU.Front(); e != nil; {
		next := e.Next()
		g := e.Value.(*group)
		if len(t.groups) > t.max {
			t.dropGroupLocked(g)
			e = next
			continue
		}
		expired := 0
		for m := g.members.Front(); m != nil; {
			mn := m.Next()
			if m.Value.(*member).learned+t.idle > now {
				break
			}
			g.members.Remove(m)
			expired++
			m = mn
		}
		if g.members.Len() == 0 {
			t.dropGroupLocked(g)
			expired++
		}
		if expired == 0 {
			break // groups are in LRU order, as Open vSwitch stops at the first live one
		}
		t.changed = true
		e = next
	}
	for e := t.mrouters.Front(); e != nil; {
		next := e.Next()
		if e.Value.(*mrouter).learned+MrouterIdleTime > now {
			break
		}
		t.mrouters.Remove(e)
		t.changed = true
		e = next
	}
	c := t.changed
	t.changed = false
	return c
}

// Lookup returns the ports that joined addr in vlan, least recently
// refreshed first, and whether the group is known.
func (t *Table) Lookup(addr netip.Addr, vlan uint16) ([]PortID, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g := t.groups[groupKey{mapped(addr), vlan}]
	if g == nil {
		return nil, false
	}
	out := make([]PortID, 0, g.members.Len())
	for e := g.members.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*member).port)
	}
	return out, true
}

// Mrouters returns the router ports of vlan, least recently refreshed
// first.
func (t *Table) Mrouters(vlan uint16) []PortID {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []PortID
	for e := t.mrouters.Front(); e != nil; e = e.Next() {
		if m := e.Value.(*mrouter); m.vlan == vlan {
			out = append(out, m.port)
		}
	}
	return out
}

// FloodPorts returns the mcast-snooping-flood ports.
func (t *Table) FloodPorts() []PortID {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]PortID(nil), t.fports...)
}

// ReportPorts returns the mcast-snooping-flood-reports ports.
func (t *Table) ReportPorts() []PortID {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]PortID(nil), t.rports...)
}

// Show is mdb/show's text: the groups' members in least recently used
// order, then the routers, with ages at nowMS. name gives the column a
// port shows as (Open vSwitch prints the OpenFlow port number).
func (t *Table) Show(nowMS int64, name func(PortID) string) string {
	now := secs(nowMS)
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	b.WriteString(" port  VLAN  GROUP                Age\n")
	for e := t.groupLRU.Front(); e != nil; e = e.Next() {
		g := e.Value.(*group)
		for m := g.members.Front(); m != nil; m = m.Next() {
			mb := m.Value.(*member)
			fmt.Fprintf(&b, "%5s  %4d  %s         %3d\n", name(mb.port), g.key.vlan, g.key.addr.Unmap(), now-mb.learned)
		}
	}
	for e := t.mrouters.Front(); e != nil; e = e.Next() {
		m := e.Value.(*mrouter)
		fmt.Fprintf(&b, "%5s  %4d  querier             %3d\n", name(m.port), m.vlan, now-m.learned)
	}
	return b.String()
}

func mapped(a netip.Addr) netip.Addr {
	if a.Is4() {
		return netip.AddrFrom16(a.As16())
	}
	return a
}

func index(ports []PortID, p PortID) int {
	for i, q := range ports {
		if q == p {
			return i
		}
	}
	return -1
}

func contains(ports []PortID, p PortID) bool { return index(ports, p) >= 0 }
