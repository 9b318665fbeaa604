package bridge

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// OFPPLocal is the OpenFlow number of a bridge's local port.
const OFPPLocal = 65534

// Switch is what the bridge layer configures: named bridges whose ports
// have OpenFlow port numbers. ofproto implements it; the daemon provides
// an implementation over the datapath until then.
type Switch interface {
	AddBridge(cfg *BridgeConfig) error
	// UpdateBridge applies bridge-level changes (fail mode, other_config,
	// controllers, protocols) to an existing bridge.
	UpdateBridge(cfg *BridgeConfig) error
	DelBridge(name string) error
	// AddPort adds an interface and returns its OpenFlow port number,
	// honouring OfportRequest when that number is free.
	AddPort(bridge string, iface *IfaceConfig) (ofport int64, err error)
	DelPort(bridge, iface string) error
	IfaceStatus(bridge, iface string) IfaceStatus
	BridgeStatus(bridge string) BridgeStatus
}

// MTUSetter is implemented by switches that can change an interface's
// MTU in place; without it an mtu_request change re-adds the interface.
type MTUSetter interface {
	SetMTU(bridge, iface string, mtu int64) error
}

// PortConfigurer is implemented by switches that use Port rows'
// settings (VLAN tag, trunks, vlan_mode). It gets every bridge's ports on
// every reconciliation, after the interfaces are applied, and keeps what
// changed.
type PortConfigurer interface {
	ConfigurePorts(bridge string, ports []PortConfig)
}

// GlobalConfigurer is implemented by switches that use
// Open_vSwitch.other_config. It gets the map on every reconciliation,
// before any bridge is added or changed, so that a setting such as
// flow-restore-wait is in force before the first bridge exists.
type GlobalConfigurer interface {
	ConfigureGlobal(otherConfig map[string]string)
}

// ControllerStatuser is implemented by switches that report their
// controller connections (Controller.is_connected, role and status).
type ControllerStatuser interface {
	ControllerStatus(bridge, target string) (ControllerStatus, bool)
}

// Reconciler applies Configs to a Switch incrementally.
type Reconciler struct {
	sw      Switch
	bridges map[string]*appliedBridge
	// datapaths is the Config.Datapaths last applied through
	// ConntrackConfigurer, and dpTypes the bridges' datapath types then.
	datapaths map[string]DatapathConfig
	dpTypes   []string
}

type appliedBridge struct {
	cfg    BridgeConfig
	ifaces map[string]IfaceConfig // added successfully, by name
	ofport map[string]int64       // the OpenFlow port each of ifaces got
	failed map[string]string      // name -> error text
	// flowExport is the flow export configuration last applied.
	flowExport *FlowExportConfig
	// mirrors are the mirrors last applied.
	mirrors []MirrorConfig
}

// NewReconciler returns a reconciler for sw with nothing applied yet.
func NewReconciler(sw Switch) *Reconciler {
	return &Reconciler{sw: sw, bridges: map[string]*appliedBridge{}}
}

// validBridgeName reports whether a bridge may have name: not one with a
// "/" or "\", which would put its sockets (RUNDIR/NAME.mgmt) in another
// directory, as Open vSwitch refuses them for remote database users.
func validBridgeName(name string) bool { return !strings.ContainsAny(name, `/\`) }

// bridgeLevelEqual reports whether two bridge configs differ only in
// their ports.
func bridgeLevelEqual(a, b *BridgeConfig) bool {
	return a.FailMode == b.FailMode && maps.Equal(a.OtherConfig, b.OtherConfig) && a.McastSnooping == b.McastSnooping && a.STP == b.STP && a.RSTP == b.RSTP &&
		slices.Equal(a.Controllers, b.Controllers) && maps.Equal(a.ControllerLimits, b.ControllerLimits) && maps.Equal(a.ControllerProbes, b.ControllerProbes) &&
		slices.Equal(a.Protocols, b.Protocols) &&
		maps.Equal(a.ExternalIDs, b.ExternalIDs) && flowTablesEqual(a.FlowTables, b.FlowTables)
}

// ifaceEqual reports whether an interface can stay as it is, apart from
// its MTU.
func ifaceEqual(a, b *IfaceConfig) bool {
	return a.Type == b.Type && maps.Equal(a.Options, b.Options) &&
		a.OfportRequest == b.OfportRequest
}

// Apply makes the switch match cfg and returns the status to write back.
// Interfaces that cannot be added get an error in their status; the rest
// of the configuration still applies.
func (r *Reconciler) Apply(cfg *Config) Status {
	if gc, ok := r.sw.(GlobalConfigurer); ok {
		gc.ConfigureGlobal(cfg.OtherConfig)
	}
	want := map[string]*BridgeConfig{}
	var ignored []string
	for i := range cfg.Bridges {
		if name := cfg.Bridges[i].Name; !validBridgeName(name) {
			ignored = append(ignored, name)
			continue
		}
		want[cfg.Bridges[i].Name] = &cfg.Bridges[i]
	}
	// Bridges that went away, or whose datapath type changed.
	for name, ab := range r.bridges {
		if w, ok := want[name]; !ok || w.DatapathType != ab.cfg.DatapathType {
			r.delBridge(name, ab)
		}
	}
	// An interface name is unique across bridges: the first bridge (by
	// name) that asks for it gets it.
	owner := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		for _, ic := range want[name].sortedIfaces() {
			if _, taken := owner[ic.Name]; !taken {
				owner[ic.Name] = name
			}
		}
	}
	st := Status{CurCfg: cfg.NextCfg, Bridges: map[string]BridgeStatus{}, Interfaces: map[string]IfaceStatus{},
		Controllers: map[string]ControllerStatus{}, Ignored: ignored}
	cs, hasCS := r.sw.(ControllerStatuser)
	for _, name := range slices.Sorted(maps.Keys(want)) {
		bc := want[name]
		ab := r.bridges[name]
		if ab == nil {
			if err := r.sw.AddBridge(bc); err != nil {
				for _, ic := range bc.sortedIfaces() {
					st.Interfaces[ic.UUID] = IfaceStatus{Ofport: -1, Error: fmt.Sprintf("bridge %s: %v", name, err)}
				}
				continue
			}
			ab = &appliedBridge{cfg: *bc, ifaces: map[string]IfaceConfig{}, ofport: map[string]int64{}, failed: map[string]string{}}
			r.bridges[name] = ab
		} else if !bridgeLevelEqual(&ab.cfg, bc) {
			if err := r.sw.UpdateBridge(bc); err == nil {
				ab.cfg = *bc
			}
		}
		r.applyPorts(ab, bc, owner)
		r.applyFlowExport(ab, bc)
		r.applyMirrors(ab, bc)
		r.mirrorStatus(bc, &st)
		r.bondStatus(bc, &st) // bond.go
		st.Bridges[bc.UUID] = r.sw.BridgeStatus(name)
		if hasCS {
			for target, cu := range bc.ControllerRows {
				if c, ok := cs.ControllerStatus(name, target); ok {
					st.Controllers[cu] = c
				}
			}
		}
		for _, ic := range bc.sortedIfaces() {
			if e, ok := ab.failed[ic.Name]; ok {
				st.Interfaces[ic.UUID] = IfaceStatus{Ofport: -1, Error: e}
				continue
			}
			st.Interfaces[ic.UUID] = r.sw.IfaceStatus(name, ic.Name)
		}
	}
	if sc, ok := r.sw.(STPConfigurer); ok {
		sc.ConfigureSTP() // stp.go
	}
	st.ConntrackErr = r.applyDatapaths(cfg.Datapaths)
	return st
}

// applyDatapaths hands the conntrack zone settings to the switch when
// they change, or when the bridges' datapath types change while zones are
// configured (a bridge of a new type brings up a datapath that needs
// them).
func (r *Reconciler) applyDatapaths(next map[string]DatapathConfig) error {
	cc, ok := r.sw.(ConntrackConfigurer)
	if !ok {
		return nil
	}
	types := make([]string, 0, len(r.bridges))
	for _, ab := range r.bridges {
		types = append(types, ab.cfg.DatapathType)
	}
	slices.Sort(types)
	types = slices.Compact(types)
	if datapathsEqual(r.datapaths, next) && (len(next) == 0 || slices.Equal(r.dpTypes, types)) {
		return nil
	}
	if err := cc.ConfigureConntrack(r.datapaths, next); err != nil {
		return fmt.Errorf("configuring conntrack zones: %w", err)
	}
	r.datapaths, r.dpTypes = next, types
	return nil
}

// DatapathTypes lists the datapath types of the bridges applied ("" as
// "system"), sorted.
func (r *Reconciler) DatapathTypes() []string {
	types := make([]string, 0, len(r.bridges))
	for _, ab := range r.bridges {
		types = append(types, normDPType(ab.cfg.DatapathType))
	}
	slices.Sort(types)
	return slices.Compact(types)
}

func (r *Reconciler) delBridge(name string, ab *appliedBridge) {
	for iface := range ab.ifaces {
		r.sw.DelPort(name, iface)
	}
	r.sw.DelBridge(name)
	delete(r.bridges, name)
}

// applyPorts removes interfaces that went away or changed, then adds the
// new ones; interfaces that did not change are not touched.
func (r *Reconciler) applyPorts(ab *appliedBridge, bc *BridgeConfig, owner map[string]string) {
	want := map[string]IfaceConfig{}
	for _, ic := range bc.sortedIfaces() {
		want[ic.Name] = ic
	}
	ms, canSetMTU := r.sw.(MTUSetter)
	del := func(name string) {
		r.sw.DelPort(bc.Name, name)
		delete(ab.ifaces, name)
		delete(ab.ofport, name)
	}
	for name, have := range ab.ifaces {
		w, ok := want[name]
		if !ok || !ifaceEqual(&have, &w) || owner[name] != bc.Name {
			del(name)
			continue
		}
		if req := w.OfportRequest; req > 0 && ab.ofport[name] != req && ab.ofport[name] != OFPPLocal {
			// Not on the port it asks for (it was taken when the port
			// was added): re-added once that port is free, and the port's
			// holder with it unless it asks for that port too (a conflict
			// nothing resolves), as Open vSwitch's
			// bridge_delete_or_reconfigure_ports.
			victim := ""
			for n, no := range ab.ofport {
				if no == req {
					victim = n
				}
			}
			if victim == "" {
				del(name)
				continue
			}
			if want[victim].OfportRequest != req {
				del(victim)
				del(name)
				continue
			}
		}
		if have.MTURequest == w.MTURequest {
			continue
		}
		// Changing the MTU keeps the port (and its number), as in Open
		// vSwitch; a switch that cannot do that gets the port re-added.
		if canSetMTU {
			if err := ms.SetMTU(bc.Name, name, w.MTURequest); err == nil {
				ab.ifaces[name] = w
				continue
			}
		}
		r.sw.DelPort(bc.Name, name)
		delete(ab.ifaces, name)
	}
	clear(ab.failed)
	// Interfaces with an ofport_request first, then the others (Open
	// vSwitch's bridge_add_ports), so that datapath port numbers chosen
	// by order come out the same.
	names := slices.Sorted(maps.Keys(want))
	slices.SortStableFunc(names, func(a, b string) int {
		ra, rb := want[a].OfportRequest > 0, want[b].OfportRequest > 0
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	for _, name := range names {
		if _, ok := ab.ifaces[name]; ok {
			continue
		}
		ic := want[name]
		if owner[name] != bc.Name {
			ab.failed[name] = fmt.Sprintf("could not add network device %s to ofproto (File exists)", name)
			continue
		}
		no, err := r.sw.AddPort(bc.Name, &ic)
		if err != nil {
			ab.failed[name] = err.Error()
			var lo *LogOnlyError
			if errors.As(err, &lo) {
				ab.failed[name] = ""
			}
			continue
		}
		ab.ifaces[name] = ic
		ab.ofport[name] = no
	}
	if pc, ok := r.sw.(PortConfigurer); ok {
		pc.ConfigurePorts(bc.Name, bc.Ports)
	}
}
