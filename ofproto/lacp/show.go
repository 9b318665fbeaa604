package lacp

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gvs-project/gvs/internal/ethaddr"
)

// Registry holds a switch's bonds' LACP objects in the order they were
// created and serves lacp/show and lacp/show-stats.
type Registry struct {
	mu    sync.Mutex
	lacps []*LACP
}

// Add registers l.
func (r *Registry) Add(l *LACP) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lacps = append(r.lacps, l)
}

// Remove unregisters l.
func (r *Registry) Remove(l *LACP) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lacps = slices.DeleteFunc(r.lacps, func(x *LACP) bool { return x == l })
}

// Lookup finds a bond's LACP by name.
func (r *Registry) Lookup(name string) *LACP {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range r.lacps {
		if l.Name() == name {
			return l
		}
	}
	return nil
}

var errNoSuchLACP = errors.New("no such lacp object")

// ShowCommand is lacp/show [port].
func (r *Registry) ShowCommand(args []string) (string, error) {
	return r.each(args, (*LACP).Show)
}

// ShowStatsCommand is lacp/show-stats [port].
func (r *Registry) ShowStatsCommand(args []string) (string, error) {
	return r.each(args, (*LACP).ShowStats)
}

func (r *Registry) each(args []string, show func(*LACP) string) (string, error) {
	if len(args) > 0 {
		l := r.Lookup(args[0])
		if l == nil {
			return "", errNoSuchLACP
		}
		return show(l), nil
	}
	r.mu.Lock()
	lacps := slices.Clone(r.lacps)
	r.mu.Unlock()
	var b strings.Builder
	for _, l := range lacps {
		b.WriteString(show(l))
	}
	return b.String(), nil
}

// sorted returns the members ordered by name, as Open vSwitch prints them.
func (l *LACP) sorted() []*member {
	ms := slices.Clone(l.members)
	slices.SortFunc(ms, func(a, b *member) int { return strings.Compare(a.Name, b.Name) })
	return ms
}

// Show is the bond's lacp/show text.
func (l *LACP) Show() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "---- %s ----\n", l.set.Name)
	mode := "passive"
	if l.set.Active {
		mode = "active"
	}
	if l.negotiated {
		mode += " negotiated"
	}
	fmt.Fprintf(&b, "  status: %s\n", mode)
	fmt.Fprintf(&b, "  sys_id: %s\n", ethaddr.String(l.set.SysID))
	fmt.Fprintf(&b, "  sys_priority: %d\n", l.set.SysPriority)
	if len(l.members) > 0 {
		fmt.Fprintf(&b, "  aggregation key: %d\n", l.key())
	} else {
		b.WriteString("  aggregation key: none\n")
	}
	speed := "slow"
	if l.set.Fast {
		speed = "fast"
	}
	fmt.Fprintf(&b, "  lacp_time: %s\n", speed)
	for _, m := range l.sorted() {
		att := "detached"
		if m.attached {
			att = "attached"
		}
		fmt.Fprintf(&b, "\nmember: %s: %s %s\n", m.Name, memberStatusNames[m.status], att)
		fmt.Fprintf(&b, "  port_id: %d\n  port_priority: %d\n  may_enable: %t\n\n", m.PortID, m.PortPriority, l.mayEnable(m))
		a := l.actor(m)
		writeInfo(&b, "actor", &a)
		b.WriteString("\n")
		writeInfo(&b, "partner", &m.partner)
	}
	return b.String()
}

func writeInfo(b *strings.Builder, who string, in *Info) {
	fmt.Fprintf(b, "  %s sys_id: %s\n", who, ethaddr.String(in.SysID))
	fmt.Fprintf(b, "  %s sys_priority: %d\n", who, in.SysPriority)
	fmt.Fprintf(b, "  %s port_id: %d\n", who, in.PortID)
	fmt.Fprintf(b, "  %s port_priority: %d\n", who, in.PortPriority)
	fmt.Fprintf(b, "  %s key: %d\n", who, in.Key)
	fmt.Fprintf(b, "  %s state:%s\n", who, StateString(in.State))
}

// ShowStats is the bond's lacp/show-stats text.
func (l *LACP) ShowStats() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "---- %s statistics ----\n", l.set.Name)
	for _, m := range l.sorted() {
		s := &m.stats
		fmt.Fprintf(&b, "\nmember: %s:\n", m.Name)
		fmt.Fprintf(&b, "  TX PDUs: %d\n  RX PDUs: %d\n  RX Bad PDUs: %d\n", s.TxPDUs, s.RxPDUs, s.RxBad)
		fmt.Fprintf(&b, "  RX Marker Request PDUs: %d\n  Link Expired: %d\n", s.RxMarker, s.LinkExpired)
		fmt.Fprintf(&b, "  Link Defaulted: %d\n  Carrier Status Changed: %d\n", s.LinkDefaulted, s.CarrierChanged)
	}
	return b.String()
}

// Stats returns a member's counters, false when it is not a member.
func (l *LACP) Stats(name string) (MemberStats, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.lookup(name); m != nil {
		return m.stats, true
	}
	return MemberStats{}, false
}
