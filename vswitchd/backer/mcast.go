package backer

import (
	"slices"
	"strconv"
	"time"

	"github.com/gvs-project/gvs/ofproto/mcsnoop"
	"github.com/gvs-project/gvs/ofproto/xlate"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// mcastConfig reads a bridge's multicast snooping settings as Open
// vSwitch's bridge_configure_mcast_snooping: other_config's aging time,
// table size and disable-flood-unregistered (mcsnoop normalizes the
// ranges).
func mcastConfig(oc map[string]string) mcsnoop.Config {
	c := mcsnoop.DefaultConfig()
	if n, err := strconv.Atoi(oc["mcast-snooping-aging-time"]); err == nil {
		c.IdleTime = n
	}
	if n, err := strconv.Atoi(oc["mcast-snooping-table-size"]); err == nil {
		c.MaxEntries = n
	}
	c.FloodUnreg = oc["mcast-snooping-disable-flood-unregistered"] != "true"
	return c
}

// configureMcastLocked turns a bridge's multicast snooping on or off and
// applies its settings; turning it off forgets the database. Called with
// s.mu held, after the bridge's OpenFlow switch exists.
func (s *Backer) configureMcastLocked(b *dpBridge, cfg *bridge.BridgeConfig) {
	if b.of == nil {
		return
	}
	if !cfg.McastSnooping {
		if b.mcast != nil {
			b.mcast = nil
			b.of.Xlator().SetMcastSnooping(nil)
			b.of.Upcalls().Changed()
		}
		return
	}
	c := mcastConfig(cfg.OtherConfig)
	if b.mcast == nil {
		b.mcast = mcsnoop.New(c)
		b.of.Xlator().SetMcastSnooping(&xlate.McastSnooping{Table: b.mcast, Now: s.cfm.clock.Now})
		b.of.Upcalls().Changed()
		s.startMcastLocked()
	} else if b.mcast.Configure(c) {
		b.of.Upcalls().Changed()
	}
	for _, p := range b.mcastPorts {
		b.mcast.SetPortFlood(p.name, p.flood)
		b.mcast.SetPortFloodReports(p.name, p.floodReports)
	}
}

// mcastPort is a Port row's snooping settings (other_config).
type mcastPort struct {
	name                string
	flood, floodReports bool
}

// configureMcastPortsLocked applies the Port rows' mcast-snooping-flood
// and -flood-reports, and forgets what was learned on a port whose row
// is gone or whose VLAN settings changed (vlanChanged, by Port name), as
// Open vSwitch flushes a bundle it destroys or whose VLAN configuration
// changes. (An interface re-opened for new options keeps its entries.)
// Called with s.mu held.
func (s *Backer) configureMcastPortsLocked(b *dpBridge, ports []bridge.PortConfig, vlanChanged map[string]bool) {
	old := b.mcastPorts
	b.mcastPorts = nil
	for _, pc := range ports {
		id := pc.Name
		if len(pc.Interfaces) == 1 {
			id = pc.Interfaces[0].Name // xlate.McastPortID of a port that is not a bond
		}
		oc := pc.Bond.OtherConfig
		b.mcastPorts = append(b.mcastPorts, mcastPort{name: id, flood: oc["mcast-snooping-flood"] == "true",
			floodReports: oc["mcast-snooping-flood-reports"] == "true"})
		if b.mcast != nil && vlanChanged[pc.Name] {
			b.mcast.FlushPort(id)
		}
	}
	if b.mcast == nil {
		return
	}
	for _, o := range old {
		if !slices.ContainsFunc(b.mcastPorts, func(p mcastPort) bool { return p.name == o.name }) {
			b.mcast.FlushPort(o.name)
			b.mcast.SetPortFlood(o.name, false)
			b.mcast.SetPortFloodReports(o.name, false)
		}
	}
	for _, p := range b.mcastPorts {
		b.mcast.SetPortFlood(p.name, p.flood)
		b.mcast.SetPortFloodReports(p.name, p.floodReports)
	}
}

// startMcastLocked starts the loop that ages every bridge's snooping
// database once a second (Open vSwitch's mcast_snooping_run) on the switch's
// virtual clock (time/stop freezes it, time/warp moves it) and
// revalidates the bridge's megaflows when forwarding may have changed.
func (s *Backer) startMcastLocked() {
	if s.mcastStarted {
		return
	}
	s.mcastStarted = true
	s.every(time.Second, s.runMcast)
}

// runMcast ages the databases now (also after time/warp).
func (s *Backer) runMcast() {
	now := s.cfm.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.bridges {
		if b.mcast != nil && b.mcast.Run(now) && b.of != nil {
			b.of.Upcalls().Changed()
		}
	}
}

// McastShow is mdb/show's text for a bridge: ok false for no such
// bridge, enabled false when its snooping is off.
func (v *View) McastShow(name string) (text string, ok, enabled bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b := v.bridges[name]
	if b == nil {
		return "", false, false
	}
	if b.mcast == nil {
		return "", true, false
	}
	return b.mcast.Show(v.clock.Now(), func(id mcsnoop.PortID) string {
		if p := b.ports[id]; p != nil {
			return ofportName(p.ofport)
		}
		for _, p := range b.ports { // a bond: its first member's number
			if x, _ := v.bnd.bundleOf(b, p.name); x != nil && x.Name == id {
				return ofportName(p.ofport)
			}
		}
		return "?"
	}), true, true
}

func ofportName(no int64) string {
	if no == bridge.OFPPLocal {
		return "LOCAL"
	}
	return strconv.FormatInt(no, 10)
}

// McastFlush is mdb/flush: the named bridge's database (ok false for no
// such bridge, enabled false when its snooping is off), or with name ""
// every bridge's that snoops.
func (v *View) McastFlush(name string) (ok, enabled bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if name == "" {
		for _, b := range v.bridges {
			if b.mcast != nil {
				b.mcast.Flush()
			}
		}
		return true, true
	}
	b := v.bridges[name]
	if b == nil {
		return false, false
	}
	if b.mcast == nil {
		return true, false
	}
	b.mcast.Flush()
	return true, true
}
