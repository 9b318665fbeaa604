package backer

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/internal/ethaddr"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ofproto/stp"
	"github.com/gvs-project/gvs/ovsdb/bridge"
)

// stpState is a bridge's spanning tree (Open vSwitch's set_stp,
// set_stp_port and stp_run in ofproto-dpif, bridge_configure_stp in
// bridge.c): the settings read from the Bridge row, the stp.Bridge when
// stp_enable is true, and each port's last seen state (ofport->stp_state),
// which the OpenFlow port state bits, the MAC table flushes and the
// "STP state changed" lines follow. Guarded by the backer's mu.
type stpState struct {
	enabled  bool
	other    map[string]string
	tree     *stp.Bridge
	lastTick int64
	ports    map[string]*stpPort // by interface name, ports with an stp.Port
	// mirrorOut are the interfaces that are mirror outputs (no STP on
	// their ports).
	mirrorOut map[string]bool
	// cfgPorts are the Port rows ConfigurePorts got last, applied by
	// ConfigureSTP.
	cfgPorts []bridge.PortConfig
	// order is the bridge's ports in Open vSwitch's iteration order
	// (porthmap.go), kept whether or not the tree runs.
	order portHmap
}

// stpPort is one port's part in the tree.
type stpPort struct {
	sp      *stp.Port
	state   stp.State // as last reported (ofport->stp_state)
	entered int64     // clock ms when state was entered
}

// stpAux is what an stp.Port carries for sending: where its BPDUs go.
type stpAux struct {
	of     *ofswitch.Bridge
	ofport uint16
	mac    [6]byte
}

// stpRunner runs the bridges' spanning trees: once a second on the
// switch's clock and after each time/warp step, after a received BPDU,
// and before stp/show answers (Open vSwitch's main loop runs stp_run on
// every iteration). BPDUs the trees send wait in out until the runner
// sends them without the backer's lock.
type stpRunner struct {
	// bridges is the bridges in Open vSwitch's bridge table order
	// (all_bridges), the order the trees are configured and run in.
	// Guarded by the backer's mu.
	bridges portHmap
	wake    chan struct{}
	started bool
	runMu   sync.Mutex
	outMu   sync.Mutex
	out     []stpFrame // guarded by outMu
}

// stpWarpSettle is how long a time/warp step waits after sending BPDUs.
const stpWarpSettle = 20 * time.Millisecond

type stpFrame struct {
	aux   *stpAux
	frame []byte
}

// ConfigureSTP is bridge.STPConfigurer: every bridge's spanning tree is
// configured with the ports ConfigurePorts got, in bridge table order.
func (s *Backer) ConfigureSTP() {
	s.mu.Lock()
	for _, b := range s.stpBridgesLocked() {
		stpOn := b.stp.enabled
		if b.stp.enabled && b.rstp.enabled {
			s.cfg.Logger("bridge").Warn(fmt.Sprintf("%s: RSTP and STP are mutually exclusive but both are configured; enabling RSTP", b.name))
			b.stp.enabled = false
		}
		s.configureSTPLocked(b, b.stp.cfgPorts)
		s.configureRSTPLocked(b, b.stp.cfgPorts) // rstp.go
		b.stp.enabled = stpOn
	}
	s.mu.Unlock()
	notify(s.stp.wake)
}

// stpBridgesLocked returns the bridges in Open vSwitch's bridge table
// order. Called with s.mu held.
func (s *Backer) stpBridgesLocked() []*dpBridge {
	s.stp.bridges.sync(sortedKeys(s.bridges))
	var out []*dpBridge
	for _, n := range s.stp.bridges.order() {
		if b := s.bridges[n]; b != nil {
			out = append(out, b)
		}
	}
	return out
}

var _ bridge.STPConfigurer = (*Backer)(nil)

// setSTPMirrorOutputs records which of a bridge's ports are mirror
// outputs: Open vSwitch runs no STP on them.
func (s *Backer) setSTPMirrorOutputs(bname string, mirrors []bridge.MirrorConfig) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.bridges[bname]; b != nil {
		b.stp.mirrorOut = map[string]bool{}
		for _, m := range mirrors {
			if m.OutputPort != "" {
				b.stp.mirrorOut[m.OutputPort] = true
			}
		}
	}
}

// setSTPConfigLocked records a bridge's stp_enable and other_config
// (applied with its ports by ConfigurePorts). Called with s.mu held.
func (s *Backer) setSTPConfigLocked(b *dpBridge, cfg *bridge.BridgeConfig) {
	b.stp.enabled, b.stp.other = cfg.STP, cfg.OtherConfig
	b.rstp.enabled = cfg.RSTP
}

// treeAddr is a spanning tree's bridge address: other_config key, or
// the bridge's Ethernet address when it is absent or invalid (logged as
// Open vSwitch's bridge_configure_stp and bridge_configure_rstp do).
func (s *Backer) treeAddr(b *dpBridge, key string) uint64 {
	ea := b.pickEA()
	if v, ok := b.stp.other[key]; ok {
		if m, ok := ethaddr.Scan(v); ok {
			ea = m
		} else {
			s.cfg.Logger("bridge").Error(fmt.Sprintf("bridge %s: invalid %s, defaulting to %s", b.name, key, macString(ea)))
		}
	}
	var addr uint64
	for _, c := range ea {
		addr = addr<<8 | uint64(c)
	}
	return addr
}

// stpSettings are a bridge's spanning tree settings, read as Open
// vSwitch's bridge_configure_stp.
func (s *Backer) stpBridgeSettings(b *dpBridge) (id uint64, prio uint16, hello, maxAge, fwd int) {
	id = s.treeAddr(b, "stp-system-id")
	ull := func(key string, def uint64) uint64 {
		if v, ok := b.stp.other[key]; ok {
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				return n
			}
		}
		return def
	}
	prio = uint16(ull("stp-priority", stp.DefaultPriority))
	hello = int(ull("stp-hello-time", stp.DefaultHelloTime))
	maxAge = int(ull("stp-max-age", stp.DefaultMaxAge/1000) * 1000)
	fwd = int(ull("stp-forward-delay", stp.DefaultFwdDelay/1000) * 1000)
	return
}

// parseCULong reads a number as C's strtoul with base 0 (decimal, 0x
// hex, 0 octal); bad text gives 0.
func parseCULong(v string) uint64 {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 0, 64)
	if err != nil {
		return 0
	}
	return n
}

// portSTPSettings is port_configure_stp: whether the port takes part,
// its number (0-254), path cost and priority.
type portSTPSettings struct {
	enable   bool
	num      int
	cost     uint16
	priority uint8
}

// configureSTPLocked applies a bridge's spanning tree settings and its
// ports' (bridge_configure_stp). Called with s.mu held.
func (s *Backer) configureSTPLocked(b *dpBridge, ports []bridge.PortConfig) {
	if b.of == nil {
		return
	}
	log := s.cfg.Logger("bridge")
	names := make([]string, 0, len(ports))
	byName := map[string]bridge.PortConfig{}
	for _, pc := range ports {
		names = append(names, pc.Name)
		byName[pc.Name] = pc
	}
	b.stp.order.sync(names)
	if !b.stp.enabled {
		if b.stp.tree != nil {
			s.disableSTPLocked(b)
		}
		return
	}
	id, prio, hello, maxAge, fwd := s.stpBridgeSettings(b)
	if b.stp.tree == nil {
		tree := new(*stp.Bridge)
		*tree = stp.New(b.name, id, stp.Env{Send: s.stpSender(b.name, tree), Log: s.cfg.Logger("stp"), Now: s.cfm.clock.Now})
		b.stp.tree, b.stp.lastTick, b.stp.ports = *tree, s.cfm.clock.Now(), map[string]*stpPort{}
		b.of.Xlator().SetSpanningTree(true)
		b.of.Upcalls().Changed()
		s.startSTPLocked()
	}
	t := b.stp.tree
	t.SetBridgeID(id)
	t.SetPriority(prio)
	t.SetHelloTime(hello)
	t.SetMaxAge(maxAge)
	t.SetForwardDelay(fwd)

	counter := 0
	used := map[int]bool{}
	settings := map[string]portSTPSettings{}
	for _, name := range b.stp.order.order() {
		pc := byName[name]
		ps := s.portSTP(b, &pc, &counter, used)
		for _, ic := range pc.Interfaces {
			settings[ic.Name] = ps
		}
	}
	if len(used) > 0 && counter > 0 {
		log.Error(fmt.Sprintf("bridge %s: must manually configure all STP port IDs or none, disabling", b.name))
		s.disableSTPLocked(b)
		return
	}
	changed := false
	for _, pname := range b.stp.order.order() {
		for _, ic := range byName[pname].Interfaces {
			if p := b.ports[ic.Name]; p != nil && p.ofport > 0 && s.setSTPPortLocked(b, p, settings[ic.Name]) {
				changed = true
			}
		}
	}
	if changed {
		s.syncPorts(b)
	}
}

// portSTP reads one Port row's spanning tree settings.
func (s *Backer) portSTP(b *dpBridge, pc *bridge.PortConfig, counter *int, used map[int]bool) portSTPSettings {
	log := s.cfg.Logger("bridge")
	oc := pc.Bond.OtherConfig
	if strings.EqualFold(oc["stp-enable"], "false") { // smap_get_bool, true by default
		return portSTPSettings{}
	}
	if len(pc.Interfaces) != 1 {
		log.Error(fmt.Sprintf("port %s: cannot enable STP on bonds, disabling", pc.Name))
		return portSTPSettings{}
	}
	ic := pc.Interfaces[0]
	if ic.Type == "internal" {
		log.Debug(fmt.Sprintf("port %s: disable STP on internal ports", pc.Name))
		return portSTPSettings{}
	}
	if b.stp.mirrorOut[pc.Name] || b.stp.mirrorOut[ic.Name] {
		log.Debug(fmt.Sprintf("port %s: disable STP on mirror ports", pc.Name))
		return portSTPSettings{}
	}
	ps := portSTPSettings{enable: true}
	if v, ok := oc["stp-port-num"]; ok {
		n := parseCULong(v)
		if n < 1 || n > stp.MaxPorts {
			log.Error(fmt.Sprintf("port %s: invalid stp-port-num", pc.Name))
			return portSTPSettings{}
		}
		if used[int(n)-1] {
			log.Error(fmt.Sprintf("port %s: duplicate stp-port-num %d, disabling", pc.Name, n))
			return portSTPSettings{}
		}
		used[int(n)-1] = true
		ps.num = int(n) - 1
	} else {
		if *counter >= stp.MaxPorts {
			log.Error(fmt.Sprintf("port %s: too many STP ports, disabling", pc.Name))
			return portSTPSettings{}
		}
		ps.num = *counter
		*counter++
	}
	if v, ok := oc["stp-path-cost"]; ok {
		n, _ := strconv.ParseUint(v, 10, 64)
		ps.cost = uint16(n)
	} else {
		ps.cost = 2 // 10 Gb/s: dummy, patch and ports of unknown speed
		if p := b.ports[ic.Name]; p != nil && p.dev != nil && p.typ == "system" {
			if bps, _ := linkSpeed(ic.Name); bps > 0 {
				ps.cost = stp.SpeedToCost(uint(bps / 1000000))
			}
		}
	}
	ps.priority = stp.DefaultPortPriority
	if v, ok := oc["stp-port-priority"]; ok {
		ps.priority = uint8(parseCULong(v))
	}
	return ps
}

// linkUp is netdev_get_carrier: a port without a device (patch) is up.
func linkUp(p *dpPort) bool { return p.dev == nil || p.dev.LinkState() != netdev.LinkDown }

// portAux is where port p's BPDUs go.
func (b *dpBridge) stpAux(p *dpPort) *stpAux {
	mac := p.mac
	if p.dev != nil {
		mac = p.dev.MAC()
	}
	return &stpAux{of: b.of, ofport: uint16(p.ofport), mac: mac}
}

// setSTPPortLocked is set_stp_port: it reports whether the port's state
// changed. Called with s.mu held.
func (s *Backer) setSTPPortLocked(b *dpBridge, p *dpPort, ps portSTPSettings) bool {
	cur := b.stp.ports[p.name]
	if !ps.enable {
		if cur == nil {
			return false
		}
		delete(b.stp.ports, p.name)
		cur.sp.Disable()
		return s.updateSTPPortLocked(b, p.name, cur, stp.Disabled)
	}
	sp := b.stp.tree.Port(ps.num)
	if cur != nil && cur.sp != sp {
		if a, ok := cur.sp.Aux().(*stpAux); ok && a.ofport == uint16(p.ofport) {
			cur.sp.Disable()
		}
	}
	if cur == nil {
		cur = &stpPort{state: stp.Disabled, entered: s.cfm.clock.Now()}
		b.stp.ports[p.name] = cur
	}
	cur.sp = sp
	sp.SetName(p.name)
	if linkUp(p) {
		sp.Enable()
	} else {
		sp.Disable()
	}
	sp.SetAux(b.stpAux(p))
	sp.SetPriority(ps.priority)
	sp.SetPathCost(ps.cost)
	return s.updateSTPPortLocked(b, p.name, cur, sp.State())
}

// updateSTPPortLocked is update_stp_port_state: a port's new state is
// logged, flushes the MAC table (and the multicast snooping table) when
// learning starts or stops, and is what the port's OpenFlow state bits
// say from now. It reports whether the state changed.
func (s *Backer) updateSTPPortLocked(b *dpBridge, name string, sp *stpPort, st stp.State) bool {
	if sp.state == st {
		return false
	}
	s.cfg.Logger("ofproto_dpif").Debug(fmt.Sprintf("port %s: STP state changed from %s to %s", name, sp.state, st))
	if sp.state.Learns() != st.Learns() {
		s.stpFlushLocked(b)
	}
	sp.state, sp.entered = st, s.cfm.clock.Now()
	return true
}

// stpFlushLocked empties the bridge's MAC and multicast snooping tables.
func (s *Backer) stpFlushLocked(b *dpBridge) {
	if b.fdb != nil {
		b.fdb.Flush(true)
	}
	if b.mcast != nil {
		b.mcast.Flush()
	}
	if b.of != nil {
		b.of.Upcalls().Changed()
	}
}

// disableSTPLocked turns the bridge's spanning tree off: every port
// leaves it. Called with s.mu held.
func (s *Backer) disableSTPLocked(b *dpBridge) {
	for _, name := range sortedKeys(b.stp.ports) {
		sp := b.stp.ports[name]
		sp.sp.Disable()
		s.updateSTPPortLocked(b, name, sp, stp.Disabled)
	}
	b.stp.tree, b.stp.ports = nil, nil
	b.of.Xlator().SetSpanningTree(false)
	s.syncPorts(b)
}

// stpOfPort returns port p's spanning tree port and OpenFlow 1.0 state
// bits for its OpenFlow description (ofPorts). Called with s.mu held.
func (b *dpBridge) stpOfPort(name string) (*stp.Port, uint32) {
	sp := b.stp.ports[name]
	if sp == nil || b.stp.tree == nil {
		return nil, 0
	}
	var bits uint32
	switch sp.state {
	case stp.Learning:
		bits = 1 << 8
	case stp.Forwarding:
		bits = 2 << 8
	case stp.Blocking:
		bits = 3 << 8
	}
	return sp.sp, bits
}

// stpSender is a tree's SendFunc: the frame waits for the runner. It
// takes no backer lock (a tree sends while the backer's mu is held).
func (s *Backer) stpSender(bname string, tree **stp.Bridge) stp.SendFunc {
	return func(no int, bpdu []byte) {
		aux, _ := (*tree).Port(no).Aux().(*stpAux)
		if aux == nil {
			s.cfg.Logger("ofproto_dpif").Warn(fmt.Sprintf("%s: cannot send BPDU on unknown port %d", bname, no))
			return
		}
		s.stp.outMu.Lock()
		s.stp.out = append(s.stp.out, stpFrame{aux: aux, frame: stp.Frame(aux.mac, bpdu)})
		s.stp.outMu.Unlock()
		notify(s.stp.wake)
	}
}

// startSTPLocked starts the runner once. Called with s.mu held.
func (s *Backer) startSTPLocked() {
	if s.stp.started {
		return
	}
	s.stp.started = true
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
			case <-s.stp.wake:
			}
			s.runSTP()
		}
	}()
}

// runSTP is one pass of stp_run over every bridge, then the BPDUs the
// trees sent go out.
func (s *Backer) runSTP() { s.runSTPPass(false) }

// runSTPPass is runSTP; with warp (a time/warp step) the status columns
// are written back before the warp replies, else only when a port's
// state changed.
func (s *Backer) runSTPPass(warp bool) {
	s.stp.runMu.Lock()
	defer s.stp.runMu.Unlock()
	s.mu.Lock()
	kick := false
	for _, b := range s.stpBridgesLocked() {
		if s.runSTPBridgeLocked(b) || (warp && b.stp.tree != nil) {
			kick = true
		}
		if s.runRSTPBridgeLocked(b) || (warp && b.rstp.tree != nil) { // rstp.go
			kick = true
		}
	}
	s.mu.Unlock()
	if s.sendSTPFrames() && warp {
		// Open vSwitch's main loop runs between warp steps, so the
		// BPDUs a step sent over dummy links are received before the
		// next step's timers: the peers get a moment to take them
		// (a warp beyond time/warp's real wait runs its steps back
		// to back).
		time.Sleep(stpWarpSettle)
	}
	if kick {
		// The status columns follow: a warp step's changes are in the
		// database when time/warp replies (WaitStatus).
		s.cfm.statusReq.Add(1)
		notify(s.cfm.status)
	}
}

// runSTPBridgeLocked is stp_run for one bridge; it reports whether a
// port's state changed. Called with s.mu held.
func (s *Backer) runSTPBridgeLocked(b *dpBridge) bool {
	t := b.stp.tree
	if t == nil {
		return false
	}
	now := s.cfm.clock.Now()
	if elapsed := now - b.stp.lastTick; elapsed > 0 {
		t.Tick(int(min(elapsed, 1<<31-1)))
		b.stp.lastTick = now
	}
	changed := false
	// stp_check_and_update_link_state
	for _, name := range sortedKeys(b.stp.ports) {
		sp, p := b.stp.ports[name], b.ports[name]
		if p == nil {
			continue
		}
		up := linkUp(p)
		if up == (sp.sp.State() != stp.Disabled) {
			continue
		}
		verb := "disabling"
		word := "down"
		if up {
			verb, word = "enabling", "up"
		}
		s.cfg.Logger("ofproto_dpif").Debug(fmt.Sprintf("bridge %s, port %s is %s, %s it.", b.name, name, word, verb))
		if up {
			sp.sp.Enable()
			sp.sp.SetAux(b.stpAux(p))
		} else {
			sp.sp.Disable()
		}
		if s.updateSTPPortLocked(b, name, sp, sp.sp.State()) {
			changed = true
		}
	}
	for cp := t.ChangedPort(); cp != nil; cp = t.ChangedPort() {
		for _, name := range sortedKeys(b.stp.ports) {
			if sp := b.stp.ports[name]; sp.sp == cp && s.updateSTPPortLocked(b, name, sp, cp.State()) {
				changed = true
			}
		}
	}
	if t.CheckAndResetFDBFlush() {
		s.stpFlushLocked(b)
	}
	if changed {
		s.syncPorts(b)
	}
	return changed
}

// sendSTPFrames sends the BPDUs waiting, without the backer's lock,
// and reports whether it sent any.
func (s *Backer) sendSTPFrames() bool {
	sent := false
	for {
		s.stp.outMu.Lock()
		out := s.stp.out
		s.stp.out = nil
		s.stp.outMu.Unlock()
		if len(out) == 0 {
			return sent
		}
		sent = true
		for _, f := range out {
			if err := f.aux.of.SendPacket(f.aux.ofport, f.frame, false); err != nil {
				s.cfg.Logger("stp").Debug(err.Error())
			}
		}
	}
}

// stpDelPortLocked takes a deleted port out of its bridge's tree (Open
// vSwitch's port destruction runs set_stp_port(NULL): the state change
// is logged and may flush the MAC table). Called with
// s.mu held, before the port set is republished.
func (s *Backer) stpDelPortLocked(b *dpBridge, name string) {
	if sp := b.stp.ports[name]; sp != nil {
		delete(b.stp.ports, name)
		sp.sp.Disable()
		s.updateSTPPortLocked(b, name, sp, stp.Disabled)
	}
}

// STPShow is stp/show [BRIDGE]: after a pass of the trees, as Open
// vSwitch's main loop has run before it answers.
func (s *Backer) STPShow(name string) (string, error) {
	s.runSTP()
	s.mu.Lock()
	defer s.mu.Unlock()
	var sb strings.Builder
	found := false
	for _, bn := range sortedKeys(s.bridges) {
		b := s.bridges[bn]
		if b.stp.tree == nil || (name != "" && bn != name) {
			continue
		}
		found = true
		b.stp.tree.Show(&sb)
	}
	if name != "" && !found {
		return "", fmt.Errorf("no such stp object")
	}
	return sb.String(), nil
}

// STPTCN is stp/tcn [BRIDGE]: the trees detect a topology change.
func (s *Backer) STPTCN(name string) error {
	s.mu.Lock()
	found := false
	for _, bn := range sortedKeys(s.bridges) {
		b := s.bridges[bn]
		if b.stp.tree == nil || (name != "" && bn != name) {
			continue
		}
		found = true
		b.stp.tree.TopologyChange()
	}
	s.mu.Unlock()
	if name != "" && !found {
		return fmt.Errorf("no such stp object")
	}
	s.runSTP()
	return nil
}

// STPStatus is bridge.STPStatuser: the Bridge status keys and the ports'
// status and statistics keys, as Open vSwitch's br_refresh_stp_status,
// port_refresh_stp_status and port_refresh_stp_stats.
func (s *Backer) STPStatus(bname string) (map[string]string, map[string]bridge.PortSTPStatus) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil || b.stp.tree == nil {
		return nil, nil
	}
	st := b.stp.tree.Status()
	br := map[string]string{
		"stp_bridge_id":       stp.FormatID(st.BridgeID),
		"stp_designated_root": stp.FormatID(st.DesignatedRoot),
		"stp_root_path_cost":  strconv.Itoa(st.RootPathCost),
	}
	now := s.cfm.clock.Now()
	ports := map[string]bridge.PortSTPStatus{}
	for name, sp := range b.stp.ports {
		ps := sp.sp.Status()
		tx, rx, errs := sp.sp.Counts()
		ports[name] = bridge.PortSTPStatus{
			Status: map[string]string{
				"stp_port_id":      strconv.Itoa(ps.ID),
				"stp_state":        ps.State.String(),
				"stp_sec_in_state": strconv.FormatInt((now-sp.entered)/1000, 10),
				"stp_role":         ps.Role.String(),
			},
			Stats: map[string]int64{"stp_tx_count": int64(tx), "stp_rx_count": int64(rx), "stp_error_count": int64(errs)},
		}
	}
	return br, ports
}

var _ bridge.STPStatuser = (*Backer)(nil)
