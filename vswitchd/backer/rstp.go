package backer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/ofproto/rstp"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// rstpState is a bridge's rapid spanning tree (Open vSwitch's set_rstp,
// set_rstp_port and rstp_run in ofproto-dpif, bridge_configure_rstp in
// bridge.c): the rstp.Bridge when rstp_enable is true and each port's
// last seen state (ofport->rstp_state). Guarded by the backer's mu.
type rstpState struct {
	enabled  bool
	tree     *rstp.Bridge
	lastTick int64
	ports    map[string]*rstpPort // by interface name
}

type rstpPort struct {
	rp    *rstp.Port
	state rstp.State // as last reported
}

// rstpBridgeSettings reads bridge_configure_rstp's settings.
func (s *Backer) rstpBridgeSettings(b *dpBridge) (addr uint64, prio, ageing, version, maxAge, fwd, hold int) {
	addr = s.treeAddr(b, "rstp-address") // stp.go
	ull := func(key string, def int) int {
		if v, ok := b.stp.other[key]; ok {
			if n, err := strconv.ParseUint(v, 10, 31); err == nil {
				return int(n)
			}
		}
		return def
	}
	return addr, ull("rstp-priority", rstp.DefaultPriority), ull("rstp-ageing-time", rstp.DefaultAgeingTime),
		ull("rstp-force-protocol-version", rstp.DefaultProtocolVer), ull("rstp-max-age", rstp.DefaultMaxAge),
		ull("rstp-forward-delay", rstp.DefaultFwdDelay), ull("rstp-transmit-hold-count", rstp.DefaultTxHoldCount)
}

// smapBool is smap_get_bool.
func smapBool(m map[string]string, key string, def bool) bool {
	if def {
		return !strings.EqualFold(m[key], "false")
	}
	return strings.EqualFold(m[key], "true")
}

// portRSTP is port_configure_rstp: whether the port takes part, and its
// settings.
func (s *Backer) portRSTP(b *dpBridge, pc *bridge.PortConfig, counter *int) (rstp.PortSettings, bool) {
	log := s.cfg.Logger("bridge")
	oc := pc.Bond.OtherConfig
	if !smapBool(oc, "rstp-enable", true) {
		return rstp.PortSettings{}, false
	}
	if len(pc.Interfaces) != 1 {
		log.Error(fmt.Sprintf("port %s: cannot enable RSTP on bonds, disabling", pc.Name))
		return rstp.PortSettings{}, false
	}
	ic := pc.Interfaces[0]
	if ic.Type == "internal" {
		log.Debug(fmt.Sprintf("port %s: disable RSTP on internal ports", pc.Name))
		return rstp.PortSettings{}, false
	}
	if b.stp.mirrorOut[pc.Name] || b.stp.mirrorOut[ic.Name] {
		log.Debug(fmt.Sprintf("port %s: disable RSTP on mirror ports", pc.Name))
		return rstp.PortSettings{}, false
	}
	var ps rstp.PortSettings
	if v, ok := oc["rstp-port-num"]; ok {
		n := parseCULong(v)
		if n < 1 || n > rstp.MaxPorts {
			log.Error(fmt.Sprintf("port %s: invalid rstp-port-num", pc.Name))
			return rstp.PortSettings{}, false
		}
		ps.Number = int(n)
	} else if *counter >= rstp.MaxPorts {
		log.Error(fmt.Sprintf("port %s: too many RSTP ports, disabling", pc.Name))
		return rstp.PortSettings{}, false
	}
	*counter++
	if v, ok := oc["rstp-path-cost"]; ok {
		n, _ := strconv.ParseUint(v, 10, 32)
		ps.PathCost = uint32(n)
	} else {
		ps.PathCost = rstp.DefaultPortPathCost
		if p := b.ports[ic.Name]; p != nil && p.dev != nil && p.typ == "system" {
			if bps, _ := linkSpeed(ic.Name); bps > 0 {
				ps.PathCost = rstp.SpeedToCost(uint(bps / 1000000))
			}
		}
	}
	ps.Priority = rstp.DefaultPortPriority
	if v, ok := oc["rstp-port-priority"]; ok {
		ps.Priority = int(parseCULong(v))
	}
	ps.AdminP2P = rstp.P2PForceTrue
	if v, ok := oc["rstp-admin-p2p-mac"]; ok {
		if n, err := strconv.ParseUint(v, 10, 8); err == nil {
			ps.AdminP2P = int(n)
		}
	}
	ps.AdminUp = smapBool(oc, "rstp-admin-port-state", true)
	ps.AdminEdge = smapBool(oc, "rstp-port-admin-edge", false)
	ps.AutoEdge = smapBool(oc, "rstp-port-auto-edge", true)
	ps.MCheck = smapBool(oc, "rstp-port-mcheck", false)
	return ps, true
}

// configureRSTPLocked is bridge_configure_rstp. Called with s.mu held.
func (s *Backer) configureRSTPLocked(b *dpBridge, ports []bridge.PortConfig) {
	if b.of == nil {
		return
	}
	if !b.rstp.enabled {
		if b.rstp.tree != nil {
			for _, name := range sortedKeys(b.rstp.ports) {
				s.delRSTPPortLocked(b, name)
			}
			b.rstp.tree, b.rstp.ports = nil, nil
			b.of.Xlator().SetRapidSpanningTree(false)
			s.syncPorts(b)
		}
		return
	}
	addr, prio, ageing, version, maxAge, fwd, hold := s.rstpBridgeSettings(b)
	if b.rstp.tree == nil {
		b.rstp.tree = rstp.New(b.name, addr, rstp.Env{Send: s.rstpSender(), Log: s.cfg.Logger("rstp")})
		b.rstp.lastTick, b.rstp.ports = s.cfm.clock.Now(), map[string]*rstpPort{}
		b.of.Xlator().SetRapidSpanningTree(true)
		b.of.Upcalls().Changed()
		s.startSTPLocked()
	}
	t := b.rstp.tree
	t.SetAddress(addr)
	t.SetPriority(prio)
	t.SetAgeingTime(ageing)
	t.SetForceProtocolVersion(version)
	t.SetMaxAge(maxAge)
	t.SetForwardDelay(fwd)
	t.SetTransmitHoldCount(hold)
	byName := map[string]bridge.PortConfig{}
	for _, pc := range ports {
		byName[pc.Name] = pc
	}
	counter := 0
	changed := false
	for _, pname := range b.stp.order.order() {
		pc := byName[pname]
		ps, on := s.portRSTP(b, &pc, &counter)
		for _, ic := range pc.Interfaces {
			p := b.ports[ic.Name]
			if p == nil || p.ofport <= 0 {
				continue
			}
			if !on {
				if b.rstp.ports[ic.Name] != nil {
					s.delRSTPPortLocked(b, ic.Name)
					changed = true
				}
				continue
			}
			cur := b.rstp.ports[ic.Name]
			if cur == nil {
				cur = &rstpPort{rp: t.AddPort(), state: rstp.Disabled}
				b.rstp.ports[ic.Name] = cur
			}
			cur.rp.Set(ps, ic.Name, b.stpAux(p))
			changed = s.updateRSTPPortLocked(b, ic.Name, cur) || changed
			cur.rp.SetMACOperational(linkUp(p) && !noForward(p))
		}
	}
	if changed {
		s.syncPorts(b)
	}
}

// delRSTPPortLocked is set_rstp_port(NULL). Called with s.mu held.
func (s *Backer) delRSTPPortLocked(b *dpBridge, name string) {
	cur := b.rstp.ports[name]
	if cur == nil {
		return
	}
	delete(b.rstp.ports, name)
	b.rstp.tree.RemovePort(cur.rp)
	s.updateRSTPPortLocked(b, name, cur)
}

// updateRSTPPortLocked is update_rstp_port_state: it logs a new state,
// flushes the port's MACs when learning starts or stops, and reports
// whether the state changed.
func (s *Backer) updateRSTPPortLocked(b *dpBridge, name string, cur *rstpPort) bool {
	st := cur.rp.State()
	if b.rstp.ports[name] != cur {
		st = rstp.Disabled
	}
	if st == cur.state {
		return false
	}
	s.cfg.Logger("ofproto_dpif").Debug(fmt.Sprintf("port %s: RSTP state changed from %s to %s", name, cur.state, st))
	if st.Learns() != cur.state.Learns() {
		s.flushPortMACsLocked(b, name)
	}
	cur.state = st
	return true
}

// flushPortMACsLocked empties the MAC table of what was learned on port
// name (bundle_flush_macs).
func (s *Backer) flushPortMACsLocked(b *dpBridge, name string) {
	p := b.ports[name]
	if p == nil || b.fdb == nil {
		return
	}
	if fp, ok := p.fdbPort(); ok {
		b.fdb.FlushPort(fp, false)
	}
	if b.of != nil {
		b.of.Upcalls().Changed()
	}
}

// runRSTPBridgeLocked is rstp_run for one bridge; it reports whether a
// port's state changed. Called with s.mu held.
func (s *Backer) runRSTPBridgeLocked(b *dpBridge) bool {
	t := b.rstp.tree
	if t == nil {
		return false
	}
	now := s.cfm.clock.Now()
	if now-b.rstp.lastTick >= 1000 {
		t.Tick()
		b.rstp.lastTick = now
	}
	changed := false
	for _, name := range sortedKeys(b.rstp.ports) {
		cur, p := b.rstp.ports[name], b.ports[name]
		if p != nil {
			cur.rp.SetMACOperational(linkUp(p) && !noForward(p))
		}
	}
	for cp := t.ChangedPort(); cp != nil; cp = t.ChangedPort() {
		for _, name := range sortedKeys(b.rstp.ports) {
			if cur := b.rstp.ports[name]; cur.rp == cp && s.updateRSTPPortLocked(b, name, cur) {
				changed = true
			}
		}
	}
	for _, fp := range t.FlushPorts() {
		for _, name := range sortedKeys(b.rstp.ports) {
			if b.rstp.ports[name].rp == fp {
				s.flushPortMACsLocked(b, name)
			}
		}
	}
	if changed {
		s.syncPorts(b)
	}
	return changed
}

// rstpOfPort returns port name's rapid spanning tree port and OpenFlow
// 1.0 state bits (Learning: STP_LEARN, Forwarding: STP_FORWARD,
// Discarding: STP_LISTEN). Called with s.mu held.
func (b *dpBridge) rstpOfPort(name string) (*rstp.Port, uint32) {
	cur := b.rstp.ports[name]
	if cur == nil || b.rstp.tree == nil {
		return nil, 0
	}
	switch cur.state {
	case rstp.Learning:
		return cur.rp, 1 << 8
	case rstp.Forwarding:
		return cur.rp, 2 << 8
	}
	return cur.rp, 0
}

// rstpSender is a tree's SendFunc: the frame waits for the runner.
func (s *Backer) rstpSender() rstp.SendFunc {
	return func(aux any, bpdu []byte) {
		a, _ := aux.(*stpAux)
		if a == nil {
			return
		}
		s.stp.outMu.Lock()
		s.stp.out = append(s.stp.out, stpFrame{aux: a, frame: rstp.Frame(a.mac, bpdu)})
		s.stp.outMu.Unlock()
		notify(s.stp.wake)
	}
}

// RSTPShow is rstp/show [BRIDGE].
func (s *Backer) RSTPShow(name string) (string, error) {
	s.runSTP()
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb strings.Builder
	found := false
	for _, b := range s.stpBridgesLocked() {
		if b.rstp.tree == nil || (name != "" && b.name != name) {
			continue
		}
		found = true
		b.rstp.tree.Show(&sb)
	}
	if name != "" && !found {
		return "", fmt.Errorf("No such RSTP object")
	}
	return sb.String(), nil
}

// RSTPStatus is bridge.RSTPStatuser: Bridge.rstp_status and each port's
// rstp_status and rstp_statistics, as Open vSwitch's
// br_refresh_rstp_status and port_refresh_rstp_status write them.
func (s *Backer) RSTPStatus(bname string) (map[string]string, map[string]bridge.PortSTPStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil || b.rstp.tree == nil {
		return nil, nil
	}
	st := b.rstp.tree.Status()
	br := map[string]string{
		"rstp_bridge_id":          rstp.FormatID(st.BridgeID),
		"rstp_root_id":            rstp.FormatID(st.RootID),
		"rstp_root_path_cost":     strconv.FormatUint(uint64(st.RootPathCost), 10),
		"rstp_designated_id":      rstp.FormatID(st.DesignatedID),
		"rstp_designated_port_id": fmt.Sprintf("%04x", st.DesignatedPortID),
		"rstp_bridge_port_id":     fmt.Sprintf("%04x", st.BridgePortID),
	}
	ports := map[string]bridge.PortSTPStatus{}
	for name, cur := range b.rstp.ports {
		ps := cur.rp.Status()
		ports[name] = bridge.PortSTPStatus{
			Status: map[string]string{
				"rstp_port_id":              fmt.Sprintf("%04x", ps.ID),
				"rstp_port_role":            ps.Role.String(),
				"rstp_port_state":           ps.State.String(),
				"rstp_designated_bridge_id": rstp.FormatID(ps.DesignatedBridgeID),
				"rstp_designated_port_id":   fmt.Sprintf("%04x", ps.DesignatedPortID),
				"rstp_designated_path_cost": strconv.FormatUint(uint64(ps.DesignatedPathCost), 10),
			},
			Stats: map[string]int64{"rstp_tx_count": int64(ps.Tx), "rstp_rx_count": int64(ps.Rx),
				"rstp_error_count": int64(ps.Errors), "rstp_uptime": int64(ps.Uptime)},
		}
	}
	return br, ports
}

var _ bridge.RSTPStatuser = (*Backer)(nil)
