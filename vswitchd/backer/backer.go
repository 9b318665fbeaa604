package backer

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/pmd"
	"github.com/gvs-project/gvs/internal/logrl"
	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/internal/version"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/mcsnoop"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofswitch"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
	"github.com/gvs-project/gvs/ovsdb/bridge"
	"golang.org/x/sys/unix"
)

// Config is what the composition root gives the backer.
type Config struct {
	// RunDir holds each bridge's <bridge>.mgmt and <bridge>.snoop
	// sockets; SocketPerm is their mode and group.
	RunDir     string
	SocketPerm unixsock.Perm
	// The test modes, as Open vSwitch's (devType): DisableSystem
	// (--disable-system) disables the kernel datapath type, so bridges of
	// datapath_type system get no kernel devices; DummySystem
	// (--enable-dummy=system) makes system interfaces and system-type
	// bridges' internal ports dummies; DummyOverride
	// (--enable-dummy=override) makes every system and internal
	// interface a dummy. EnableDummy (--enable-dummy) also turns on
	// OpenFlow's debug actions, as Open vSwitch's dummy mode does.
	DisableSystem, DummySystem, DummyOverride, EnableDummy bool
	// DisableSystemRoute (--disable-system-route) keeps the kernel's
	// routes out of the tunnel route table; --disable-system does not
	// (Open vSwitch's userspace datapath tests route through the host).
	DisableSystemRoute bool
	// NoSelfConfinement (--no-self-confinement) lets controllers be Unix
	// sockets anywhere (confine.go).
	NoSelfConfinement bool
	// Workers is the datapaths' packet worker count; 0 the default.
	Workers int
	// NUMA is the CPU layout PMD threads are placed on; PinPMDs pins
	// them to their cores (the machine's layout, not --dummy-numa's).
	NUMA    pmd.Layout
	PinPMDs bool
	// Logger returns the logger of a vlog module ("bridge", "bfd",
	// "dpif_netdev", ...).
	Logger func(module string) *slog.Logger
	// Count counts one event under a coverage counter's name; nil
	// discards.
	Count func(name string)
	// Counter returns a coverage counter by name (the datapaths' drop
	// reasons count in them); nil: not counted.
	Counter func(name string) odp.Counter
	// TLS is the SSL table's files, for ssl:/pssl: controllers.
	TLS *ofconn.TLSSettings
	// OFDebug sees every OpenFlow message of every bridge (vconn:dbg).
	OFDebug ofconn.Debugger
	// DatapathCreated is called with each datapath as it is created,
	// before it has ports (the conntrack state read at start).
	DatapathCreated func(*dpnetdev.Datapath)
}

// Backer implements bridge.Switch over the userspace datapaths: bridges
// and their ports, with OpenFlow port numbers allocated as Open vSwitch
// does, each bridge with its OpenFlow switch (ofproto/ofswitch) that the
// datapath's upcalls reach by input port.
type Backer struct {
	cfg Config
	log *slog.Logger
	dps *datapathSet
	// confineLimit limits the errors about controllers self-confinement
	// drops (Open vSwitch's VLOG_RATE_LIMIT_INIT(1, 5)).
	confineLimit *logrl.Limit

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the BFD monitor

	mu      sync.Mutex
	bridges map[string]*dpBridge
	nextFDB uint32 // table ids for mac_learn; never reused
	// muxes route each datapath's upcalls to the bridge owning the
	// packet's in_port; recircs are the datapaths' recirculation ids.
	muxes   map[string]*upcallMux
	recircs map[string]*xlate.RecircTable
	// dpSupport are the datapaths' features by type (dpfeatures.go).
	dpSupport map[string]*dpSupport
	// devs opens the interfaces' devices (devices.go).
	devs *devices
	// view reads the bridges for the commands (view.go).
	view *View
	// vports are the datapaths' shared tunnel vports (tunnels.go).
	vports *vportTable
	// tnl is the native tunnelling environment (routes, neighbours).
	tnl *tunnelEnv
	// portErrs are the interface errors logged (portwarn.go).
	portErrs portErrors
	// bfd runs the interfaces' BFD sessions (bfd.go).
	bfd *bfdMonitor
	// bnd runs the bonded ports and their LACP (bonds.go).
	bnd *bonds
	// mcastStarted says the snooping databases' aging loop runs (mcast.go).
	mcastStarted bool
	// cfm runs the interfaces' CFM maintenance points (cfm.go).
	cfm *cfmMonitor
	// stp runs the bridges' spanning trees (stp.go).
	stp stpRunner
	// hand is the handover side: the state given to a successor, the
	// ports handed over by a predecessor (handover.go).
	hand *Handover
}

type dpBridge struct {
	name    string
	cfgType string // Bridge.datapath_type as configured ("system" when empty)
	dpTyp   string
	cfgDPID uint64  // from other_config:datapath-id; 0 when unset or invalid
	hwaddr  [6]byte // from other_config:hwaddr; valid when hasHW
	hasHW   bool
	// defaultEA is the bridge's MAC when neither hwaddr nor a port's
	// MAC gives one, from the Bridge row's UUID; loggedDPID the datapath
	// ID last logged (dpid.go).
	defaultEA  [6]byte
	loggedDPID uint64
	// localDummyMAC is the dummy MAC reserved for the bridge's local
	// port when the bridge is created, before its other ports, as Open
	// vSwitch opens that port first; zero when the port is not a dummy.
	localDummyMAC [6]byte
	ports         map[string]*dpPort // by interface name
	// macErrs is the Interface.mac problem last logged per interface
	// (ifacemac.go).
	macErrs map[string]string

	// OpenFlow port allocation, as Open vSwitch does it: a rotating
	// cursor, and the time each number was last freed so that a number
	// is not reused while flows for the old port may linger.
	nextOfport int64
	freedAt    map[int64]time.Time

	// fdb is the bridge's MAC learning table, installed in its datapath
	// for mac_learn(table=fdbID) actions.
	fdb   *l2fib.Table
	fdbID uint32

	// of is the bridge's OpenFlow switch: tables, connections, upcalls.
	of *ofswitch.Bridge
	// settings are the bridge's fail mode and controllers as configured
	// (restorewait.go holds the controllers during flow-restore-wait).
	settings ofswitch.Settings
	// vlans are the Port rows' VLAN settings by interface name.
	vlans map[string]portVLAN
	// mcast is the bridge's multicast snooping database, nil when off;
	// mcastPorts the Port rows' snooping settings (mcast.go).
	mcast      *mcsnoop.Table
	mcastPorts []mcastPort
	// stp is the bridge's spanning tree (stp.go), rstp its rapid
	// spanning tree (rstp.go).
	stp  stpState
	rstp rstpState
}

// portVLAN is a port's VLAN configuration as NORMAL uses it.
type portVLAN struct {
	tag    int
	mode   xlate.VLANMode
	trunks string // canonical text of the trunk list, for comparison
	list   []uint16
}

type dpPort struct {
	name   string
	typ    string
	ofport int64
	odp    dpif.PortNo       // dpif.PortNone for ports without a datapath port (patch)
	peer   string            // options:peer of a patch port
	mtuReq int64             // Interface.mtu_request; 0 when unset
	mac    [6]byte           // MAC of a patch port (devices have their own)
	status map[string]string // Interface.status, fixed once the port is added
	// lastLink and linkResets count link state changes seen while
	// polling, for Interface.link_resets.
	lastLink   string
	linkResets int64
	dev        netdev.Device
	// tunnel is a tunnel port's configuration (odp is its shared vport),
	// tunnelOpts the options it came from.
	tunnel     *xlate.TunnelConfig
	tunnelOpts map[string]string
	// bfd is the interface's BFD session (nil when off) and bfdNoFwd
	// its last forwarding decision's negation (bfd.go).
	bfd      *bfd.Session
	bfdNoFwd bool
	bfdCfg   map[string]string // the Interface.bfd last applied
	// cfm is the interface's CFM maintenance point (cfm.go).
	cfm cfmState
	// lacp: the interface's Port runs LACP, so it is not live until
	// its bond's LACP says so (bonds.go), from its first announcement.
	lacp bool
}

// fdbPort is the port's number in its bridge's MAC table: its datapath
// port, or, for a port without a datapath port of its own (a patch port;
// a tunnel port, whose type's vport carries every tunnel of the type),
// xlate.VirtualFDBPort of its OpenFlow number.
func (p *dpPort) fdbPort() (uint32, bool) {
	switch {
	case (p.typ == "patch" || p.tunnel != nil) && p.ofport > 0:
		return xlate.VirtualFDBPort(uint16(p.ofport)), true
	case p.dev != nil:
		return uint32(p.odp), true
	}
	return 0, false
}

var _ bridge.Switch = (*Backer)(nil)

// New returns a backer with no bridge and no datapath yet; its
// background work (BFD, kernel route watching) stops when ctx ends or
// at Close.
func New(ctx context.Context, cfg Config) *Backer {
	if cfg.Count == nil {
		cfg.Count = func(string) {}
	}
	s := &Backer{cfg: cfg, log: cfg.Logger("vswitchd"), bridges: map[string]*dpBridge{}, muxes: map[string]*upcallMux{}, recircs: map[string]*xlate.RecircTable{},
		bfd: newBFDMonitor(), bnd: newBonds(), cfm: newCFMMonitor(), confineLimit: logrl.New(1, 5)}
	s.dps = &datapathSet{workers: cfg.Workers, log: s.log, dpLog: cfg.Logger, created: cfg.DatapathCreated, dps: map[string]*dpnetdev.Datapath{}}
	if cfg.Counter != nil {
		var dc [odp.NumDropReasons]odp.Counter
		for i, n := range odp.DropCounterNames {
			dc[i] = cfg.Counter(n)
		}
		s.dps.dropCounters = &dc
		s.dps.invalidPort = cfg.Counter("datapath_drop_invalid_port")
	}
	s.dps.pmd.layout, s.dps.pmd.pin = cfg.NUMA, cfg.PinPMDs
	s.devs = &devices{disableSystem: cfg.DisableSystem, dummySystem: cfg.DummySystem, dummyOverride: cfg.DummyOverride,
		runDir: cfg.RunDir, logger: cfg.Logger, dps: s.dps}
	s.view = &View{mu: &s.mu, bridges: s.bridges, dps: s.dps}
	s.hand = &Handover{mu: &s.mu, bridges: s.bridges, dps: s.dps}
	s.vports = &vportTable{dps: s.dps, m: map[string]map[string]*vportRef{}}
	s.ctx, s.cancel = context.WithCancel(ctx)
	s.portErrs.logger = cfg.Logger
	s.bfd.mu, s.bfd.bridges, s.bfd.republish, s.bfd.logger, s.bfd.count = &s.mu, s.bridges, s.syncPorts, cfg.Logger, cfg.Count
	s.bfd.ctx, s.bfd.wg = s.ctx, &s.wg
	s.bnd.mu, s.bnd.bridges, s.bnd.republish, s.bnd.logger = &s.mu, s.bridges, s.syncPorts, cfg.Logger
	s.bnd.ctx, s.bnd.wg = s.ctx, &s.wg
	s.cfm.mu, s.cfm.bridges, s.cfm.republish, s.cfm.logger = &s.mu, s.bridges, s.syncPorts, cfg.Logger
	s.cfm.ctx, s.cfm.wg, s.cfm.clock, s.cfm.status = s.ctx, &s.wg, &cfmClock{base: &s.bnd.clock}, s.bfd.status
	s.view.bnd, s.view.clock = s.bnd, s.cfm.clock
	s.stp.wake = make(chan struct{}, 1)
	s.tnl = newTunnelEnv(s, !cfg.DisableSystemRoute)
	s.tnl.watch(s.ctx)
	return s
}

// Datapath returns the datapath of a type, creating it on first use, as
// Open vSwitch keeps one datapath per type shared by its bridges.
func (s *Backer) Datapath(typ string) *dpnetdev.Datapath { return s.dps.get(typ) }

// Datapaths returns the datapaths sorted by name.
func (s *Backer) Datapaths() []*dpnetdev.Datapath { return s.dps.datapaths() }

// Close stops every bridge's OpenFlow side (controller connections,
// listeners, revalidator), the BFD monitor and the route watcher; the
// datapaths stay open for CloseDatapaths.
func (s *Backer) Close() {
	s.cancel()
	s.wg.Wait()
	s.closeBridges()
	s.tnl.close()
}

// CloseDatapaths closes the datapaths and their devices, after Close.
func (s *Backer) CloseDatapaths() { s.dps.closeAll() }

// dpType maps a Bridge.datapath_type to gvs's datapath: every type is the
// userspace datapath; "dummy" (Open vSwitch's test datapath) is a separate
// instance whose internal ports are in-memory, as in Open vSwitch.
func dpType(t string) string {
	if t == "dummy" {
		return "dummy"
	}
	return "netdev"
}

func (s *Backer) AddBridge(cfg *bridge.BridgeConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bridges[cfg.Name]; ok {
		return fmt.Errorf("bridge %s exists", cfg.Name)
	}
	cfgType := cfg.DatapathType
	if cfgType == "" {
		cfgType = "system"
	}
	s.bridges[cfg.Name] = &dpBridge{
		name: cfg.Name, cfgType: cfgType, dpTyp: dpType(cfg.DatapathType), defaultEA: defaultEA(cfg.UUID),
		cfgDPID: parseDPID(cfg.OtherConfig["datapath-id"]),
		ports:   map[string]*dpPort{}, freedAt: map[int64]time.Time{},
	}
	br := s.bridges[cfg.Name]
	br.hwaddr, br.hasHW = parseHWAddr(cfg.OtherConfig["hwaddr"])
	if br.dpTyp == "dummy" || s.cfg.DummyOverride || (cfgType == "system" && (s.cfg.DisableSystem || s.cfg.DummySystem)) {
		br.localDummyMAC = s.dps.nextDummyMAC()
	}
	fc := fdbConfig(cfg.OtherConfig)
	if s.cfg.Counter != nil {
		fc.StaticMoves = s.cfg.Counter("mac_learning_static_none_move")
	}
	fdb, err := l2fib.New(fc, time.Now())
	if err != nil {
		delete(s.bridges, cfg.Name)
		return fmt.Errorf("bridge %s: MAC table: %w", cfg.Name, err)
	}
	s.nextFDB++
	br.fdb, br.fdbID = fdb, s.nextFDB
	dp := s.Datapath(br.dpTyp)
	dp.MACTables().Set(br.fdbID, fdb)
	if s.muxes[br.dpTyp] == nil {
		s.muxes[br.dpTyp] = &upcallMux{}
		s.recircs[br.dpTyp] = xlate.NewRecircTable()
		s.support(br.dpTyp).apply(s.recircs[br.dpTyp])
		if s.tnl != nil {
			s.recircs[br.dpTyp].SetTunnelEnv(s.tnl)
		}
		dp.SetUpcallHandler(s.muxes[br.dpTyp])
	}
	name := cfg.Name
	of, err := ofswitch.New(ofswitch.Config{
		Name: name, DP: dp, Recirc: s.recircs[br.dpTyp], FDBTable: br.fdbID, RunDir: s.cfg.RunDir, SocketPerm: s.cfg.SocketPerm,
		MACTables: dp.MACTables(), MACLearnActionThreshold: macLearnActionThreshold(cfg.OtherConfig),
		FlowLimit:  s.flowLimitLocked(br.dpTyp), // one dynamic limit per datapath (pmdcmds.go)
		Changes:    s.view.sharedChangesLocked(br.dpTyp),
		DatapathID: func() uint64 { return s.datapathID(name) },
		Version:    version.String(),
		PortStats:  func(no uint32) (ofp.PortStats, bool) { return portStats(dp, no) },
		CTFlush: func(zone *uint16, m *ofp.CTFlush) {
			s.ctFlush(name, br.dpTyp+"@ovs-"+br.dpTyp, dp.Conntrack(), zone, m)
		},
		Meters:       dp.Meters(),
		TLS:          s.cfg.TLS,
		DebugActions: s.cfg.EnableDummy,
		SetPortAdmin: func(no uint16, up bool) (bool, error) {
			return s.setPortAdmin(name, no, up)
		},
		Logf:              func(format string, args ...any) { s.log.Warn(fmt.Sprintf(format, args...)) },
		ModuleWarnf:       s.moduleWarnf,
		BundleIdleTimeout: func() time.Duration { return time.Duration(s.dps.bundleIdle.Load()) },
		OFDebug:           s.cfg.OFDebug,
		BFDProcessed:      s.bfd.processed,
		LACPProcessed:     func() { notify(s.bnd.wake) },
		STPProcessed:      func() { notify(s.stp.wake) },
	})
	if err != nil {
		dp.MACTables().Set(br.fdbID, nil)
		delete(s.bridges, cfg.Name)
		return fmt.Errorf("bridge %s: %w", cfg.Name, err)
	}
	br.of = of
	if s.cfg.RunDir != "" {
		// <bridge>.snoop, next to <bridge>.mgmt, as Open vSwitch.
		if err := of.ListenSnoop(filepath.Join(s.cfg.RunDir, name+".snoop")); err != nil {
			s.log.Warn(err.Error())
		}
	}
	s.recircs[br.dpTyp].Register(name, of.Xlator())
	of.Xlator().SetExplicitDrop(true) // the datapath counts drops by reason
	of.Upcalls().SetFlowRestoreWait(s.dps.restoreWait.Load())
	br.settings = s.settingsOf(cfg)
	of.SetConfig(s.ofSettings(br.settings))
	of.SetTables(flowTables(cfg))
	s.configureMcastLocked(br, cfg) // mcast.go
	s.setSTPConfigLocked(br, cfg)   // stp.go
	return nil
}

// portStats reads a datapath port's counters for OpenFlow port stats.
func portStats(dp dpif.Datapath, no uint32) (ofp.PortStats, bool) {
	pi, ok := dp.Port(no)
	if !ok || pi.Device == nil {
		return ofp.PortStats{}, false
	}
	ns := pi.Device.Stats()
	if _, ok := pi.Device.(*dummy.Device); ok {
		// Open vSwitch's dummy devices count packets and bytes only;
		// the other counters are unavailable (all-ones, "?" in
		// ovs-ofctl dump-ports), which its test suite expects.
		const na = ^uint64(0)
		return ofp.PortStats{RxPackets: ns.RxPackets, TxPackets: ns.TxPackets, RxBytes: ns.RxBytes, TxBytes: ns.TxBytes,
			RxDropped: na, TxDropped: na, RxErrors: na, TxErrors: na, RxFrameErr: na, RxOverErr: na, RxCRCErr: na, Collisions: na}, true
	}
	return ofp.PortStats{RxPackets: ns.RxPackets, TxPackets: ns.TxPackets, RxBytes: ns.RxBytes, TxBytes: ns.TxBytes,
		RxDropped: ns.RxDropped, TxDropped: ns.TxDropped, RxErrors: ns.RxErrors, TxErrors: ns.TxErrors}, true
}

// ControllerStatus reports a bridge's controller connection
// (bridge.ControllerStatuser).
func (s *Backer) ControllerStatus(bname, target string) (bridge.ControllerStatus, bool) {
	of := s.view.OFBridge(bname)
	if of == nil {
		return bridge.ControllerStatus{}, false
	}
	cs, ok := of.ControllerStatus(target)
	return bridge.ControllerStatus{IsConnected: cs.IsConnected, Role: cs.Role, Status: cs.Status}, ok
}

// datapathID returns a bridge's datapath ID as BridgeStatus reports it.
func (s *Backer) datapathID(name string) uint64 {
	n, _ := strconv.ParseUint(s.BridgeStatus(name).DatapathID, 16, 64)
	return n
}

// syncPorts gives the OpenFlow switches of b's datapath their current
// ports (patch ports resolved to their peers, which may be on any bridge
// of the datapath) and re-routes the datapath's upcalls. Called with s.mu
// held.
func (s *Backer) syncPorts(b *dpBridge) {
	for _, ob := range s.bridges {
		if ob.dpTyp == b.dpTyp && ob.of != nil {
			ob.of.SetPorts(s.ofPorts(ob))
		}
	}
	s.reroute(b.dpTyp)
}

// ConfigurePorts applies the Port rows' VLAN settings (tag, trunks,
// vlan_mode access/trunk/native-tagged/native-untagged) to NORMAL
// (bridge.PortConfigurer).
func (s *Backer) ConfigurePorts(bname string, ports []bridge.PortConfig) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil {
		return
	}
	defer s.portsConfigured(b, ports) // dpid.go
	next := map[string]portVLAN{}
	for _, pc := range ports {
		v := portVLAN{tag: -1}
		if pc.Tag >= 0 && pc.Tag < 4096 {
			v.tag = int(pc.Tag)
		}
		mode, ok := xlate.ParseVLANMode(pc.VLANMode)
		if !ok {
			// Open vSwitch falls back to trunk for a mode it does not
			// know; dot1q-tunnel is not supported here.
			s.log.Warn(fmt.Sprintf("port %s: unsupported vlan_mode %s, falling back to trunk mode", pc.Name, pc.VLANMode))
			mode = xlate.VLANTrunk
		}
		v.mode = mode
		// An access port's trunks are ignored, as Open vSwitch does.
		if mode == xlate.VLANAccess || (mode == xlate.VLANModeDefault && v.tag >= 0) {
			pc.Trunks = nil
		}
		for _, t := range pc.Trunks {
			if t >= 0 && t < 4096 {
				v.list = append(v.list, uint16(t))
			}
		}
		v.trunks = fmt.Sprint(v.list)
		for _, ic := range pc.Interfaces {
			next[ic.Name] = v
		}
	}
	applyIfaceMACs(b, ports, s.cfg.Logger("bridge")) // ifacemac.go
	s.configureAffinity(b, ports)                    // pmd.go
	changed := s.bfd.configureLocked(b, ports)
	changed = s.bnd.configureLocked(b, ports) || changed // bonds.go
	changed = s.cfm.configureLocked(b, ports) || changed // cfm.go
	changed = changed || len(next) != len(b.vlans)
	vlanChanged := map[string]bool{}
	for _, pc := range ports {
		for _, ic := range pc.Interfaces {
			v := next[ic.Name]
			if o, ok := b.vlans[ic.Name]; !ok || o.tag != v.tag || o.mode != v.mode || o.trunks != v.trunks {
				changed = true
				vlanChanged[pc.Name] = ok
			}
		}
	}
	b.vlans = next
	s.configureMcastPortsLocked(b, ports, vlanChanged) // mcast.go
	b.stp.cfgPorts = ports                             // stp.go: applied by ConfigureSTP
	if changed {
		s.syncPorts(b)
	}
}

// ofPorts describes a bridge's ports for its OpenFlow switch.
func (s *Backer) ofPorts(b *dpBridge) []ofswitch.Port {
	var ports []ofswitch.Port
	for _, p := range b.ports {
		op := ofswitch.Port{Port: xlate.Port{OFPort: uint16(p.ofport), ODP: xlate.NoODP, Name: p.name, Tag: -1}, HWAddr: p.mac}
		if v, ok := b.vlans[p.name]; ok {
			op.Tag, op.Trunks, op.VLANMode = v.tag, v.list, v.mode
		}
		op.BFD, op.CFM, op.NoForward = p.bfd, p.cfm.sess, noForward(p) // cfm.go
		op.STP, op.STPBits = b.stpOfPort(p.name)                       // stp.go
		if rp, bits := b.rstpOfPort(p.name); rp != nil {               // rstp.go
			op.RSTP, op.STPBits = rp, bits
		}
		var lacpDown bool
		op.Bundle, lacpDown = s.bnd.bundleOf(b, p.name) // bonds.go
		op.NoForward = op.NoForward || lacpDown || (op.Bundle == nil && p.lacp)
		if p.dev != nil {
			op.ODP = p.odp
			op.HWAddr = p.dev.MAC()
			op.LinkDown = p.dev.LinkState() == netdev.LinkDown
			if as, ok := p.dev.(netdev.AdminStater); ok {
				op.AdminDown = !as.AdminUp()
			}
		} else if p.tunnel != nil {
			op.ODP, op.Tunnel = p.odp, p.tunnel
		} else if p.typ == "patch" {
			for _, ob := range s.bridges {
				if q := ob.ports[p.peer]; ob.dpTyp == b.dpTyp && q != nil && q.typ == "patch" && q.peer == p.name {
					op.PeerBridge, op.PeerPort = ob.name, uint16(q.ofport)
				}
			}
		}
		ports = append(ports, op)
	}
	return ports
}

// reroute rebuilds a datapath's in_port -> bridge routing. Called with
// s.mu held.
func (s *Backer) reroute(dpTyp string) {
	mux := s.muxes[dpTyp]
	if mux == nil {
		return
	}
	routes := map[uint32]*ofswitch.Bridge{}
	for _, bn := range sortedKeys(s.bridges) {
		b := s.bridges[bn]
		if b.dpTyp != dpTyp || b.of == nil {
			continue
		}
		for _, p := range b.ports {
			if p.dev != nil {
				routes[p.odp] = b.of
			}
		}
		// Packets the switch sends itself (BFD, bfd.go) come from no
		// port; their recirculations (NORMAL into a patch peer) resume
		// in the bridge their frozen state names, through any bridge.
		if routes[xlate.NoODP] == nil {
			routes[xlate.NoODP] = b.of
		}
	}
	mux.routes.Store(&routes)
	tunnels := map[uint32][]*ofswitch.Bridge{}
	for _, bn := range sortedKeys(s.bridges) {
		b := s.bridges[bn]
		if b.dpTyp != dpTyp || b.of == nil {
			continue
		}
		seen := map[uint32]bool{}
		for _, p := range b.ports {
			if p.tunnel != nil && !seen[p.odp] {
				seen[p.odp] = true
				tunnels[p.odp] = append(tunnels[p.odp], b.of)
			}
		}
	}
	mux.tunnels.Store(&tunnels)
}

// upcallMux hands each upcall to the bridge that owns its in_port.
type upcallMux struct {
	routes atomic.Pointer[map[uint32]*ofswitch.Bridge]
	// tunnels lists, per tunnel vport, the bridges with tunnel ports on
	// it; the one whose tunnel port receives the packet gets it.
	tunnels atomic.Pointer[map[uint32][]*ofswitch.Bridge]
}

var errNoBridge = errors.New("no bridge owns the packet's input port")

func (m *upcallMux) bridge(u *dpif.Upcall) *ofswitch.Bridge {
	r := m.routes.Load()
	if r == nil {
		return nil
	}
	if b := (*r)[u.Key.InPort]; b != nil {
		return b
	}
	if t := m.tunnels.Load(); t != nil {
		for _, b := range (*t)[u.Key.InPort] {
			if b.TunnelReceives(u.Key) {
				return b
			}
		}
	}
	return nil
}

func (m *upcallMux) Miss(u *dpif.Upcall, r *dpif.MissReply) error {
	if b := m.bridge(u); b != nil {
		return b.Upcalls().Miss(u, r)
	}
	return errNoBridge
}

func (m *upcallMux) Userspace(u *dpif.Upcall) {
	if b := m.bridge(u); b != nil {
		b.Upcalls().Userspace(u)
	}
}

// fdbConfig reads the MAC table's size and aging time from a bridge's
// other_config (mac-table-size, mac-aging-time), as Open vSwitch does;
// absent or invalid values take gvs's defaults.
func fdbConfig(oc map[string]string) l2fib.Config {
	var c l2fib.Config
	if n, err := strconv.Atoi(oc["mac-table-size"]); err == nil && n > 0 {
		c.Capacity = n
	}
	if n, err := strconv.Atoi(oc["mac-aging-time"]); err == nil && n > 0 {
		c.AgingTime = time.Duration(n) * time.Second
	}
	return c
}

// macLearnActionThreshold reads other_config:mac-learn-action-threshold,
// the number of MAC table entries above which NORMAL is the datapath's
// mac_learn action rather than one megaflow per address pair (0 in the
// column: always the action), in ofswitch's terms: 0 for the default
// (absent or invalid), negative for always.
func macLearnActionThreshold(oc map[string]string) int {
	v, ok := oc["mac-learn-action-threshold"]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil || n < 0:
		return 0
	case n == 0:
		return -1
	}
	return n
}

func (s *Backer) UpdateBridge(cfg *bridge.BridgeConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b := s.bridges[cfg.Name]; b != nil {
		b.cfgDPID = parseDPID(cfg.OtherConfig["datapath-id"])
		b.hwaddr, b.hasHW = parseHWAddr(cfg.OtherConfig["hwaddr"]) // applied by ConfigurePorts
		if b.of != nil {
			b.settings = s.settingsOf(cfg)
			b.of.SetConfig(s.ofSettings(b.settings))
			b.of.SetTables(flowTables(cfg))
			s.configureMcastLocked(b, cfg) // mcast.go
		}
		s.setSTPConfigLocked(b, cfg) // stp.go
		if b.of != nil {
			b.of.SetMACLearnActionThreshold(macLearnActionThreshold(cfg.OtherConfig))
		}
		if b.fdb != nil {
			age := fdbConfig(cfg.OtherConfig).AgingTime
			if age == 0 {
				age = l2fib.DefaultAgingTime
			}
			b.fdb.SetAgingTime(age)
			s.resizeFDB(b, fdbConfig(cfg.OtherConfig))
		}
	}
	return nil
}

// resizeFDB applies a changed mac-table-size (l2fib.Table.Resize): a
// smaller size removes the oldest entries at once, as Open vSwitch trims
// its table; a table re-made for the new size is installed under the same
// id, so megaflows' mac_learn actions keep working. Called with s.mu held.
func (s *Backer) resizeFDB(b *dpBridge, c l2fib.Config) {
	c.AgingTime = b.fdb.AgingTime()
	nt, err := b.fdb.Resize(c, time.Now())
	if err != nil {
		s.log.Warn(fmt.Sprintf("bridge %s: mac-table-size %d: %v", b.name, c.Capacity, err))
		return
	}
	if nt != b.fdb {
		s.Datapath(b.dpTyp).MACTables().Set(b.fdbID, nt)
		b.fdb = nt
	}
}

// parseHWAddr reads other_config:hwaddr; multicast and zero addresses
// are ignored, as Open vSwitch ignores them.
func parseHWAddr(s string) ([6]byte, bool) {
	var m [6]byte
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 || hw[0]&1 != 0 {
		return m, false
	}
	copy(m[:], hw)
	return m, m != [6]byte{}
}

// parseDPID reads other_config:datapath-id as Open vSwitch does: exactly
// 16 hex digits, or "0x" and up to 16 ("0x5ad515c0"); zero or anything
// else is ignored.
func parseDPID(s string) uint64 {
	if len(s) <= 18 && len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	} else if len(s) != 16 {
		return 0
	}
	if strings.ContainsAny(s, "+-_") {
		return 0
	}
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return 0
	}
	return n
}

// closeBridges stops every bridge's OpenFlow side (controller
// connections, listeners, revalidator) at shutdown; the datapaths are
// closed after.
func (s *Backer) closeBridges() {
	s.mu.Lock()
	var ofs []*ofswitch.Bridge
	for _, b := range s.bridges {
		if b.of != nil {
			ofs = append(ofs, b.of)
		}
	}
	s.mu.Unlock()
	for _, of := range ofs {
		of.Close()
	}
}

func (s *Backer) DelBridge(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[name]
	if b != nil && b.fdb != nil {
		s.Datapath(b.dpTyp).MACTables().Set(b.fdbID, nil)
	}
	delete(s.bridges, name)
	if b != nil {
		for pn := range b.ports {
			s.tnl.flushNeighbors(pn) // tnlenv.go
		}
	}
	s.portErrs.forget(name, nil) // portwarn.go
	s.bfd.reapLocked()
	s.bnd.forgetBridgeLocked(name) // bonds.go
	if b != nil && b.of != nil {
		s.recircs[b.dpTyp].Register(name, nil)
		s.syncPorts(b)
		b.of.Close()
	}
	return nil
}

func (s *Backer) AddPort(bname string, ic *bridge.IfaceConfig) (_ int64, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() { s.portErrs.log(bname, ic.Name, err) }() // portwarn.go
	b := s.bridges[bname]
	if b == nil {
		return -1, fmt.Errorf("no bridge %s", bname)
	}
	if err := bridge.ReservedName(ic.Name, s.cfg.dpTypeNames()); err != nil {
		return -1, err
	}
	p := &dpPort{name: ic.Name, typ: ic.Type, odp: dpif.PortNone, mtuReq: ic.MTURequest, lacp: ic.LACP}
	// A port with BFD enabled is announced not live (OFPPS_LIVE clear):
	// its session starts down, and Open vSwitch configures BFD before the
	// port's first status. A parked session keeps its own decision.
	if noFwd, ok := s.bfd.parkedNoFwd(ic.Name); ok {
		p.bfdNoFwd = noFwd
	} else {
		p.bfdNoFwd = ic.BFD["enable"] == "true"
	}
	if ic.Type == "patch" {
		// Checked in Open vSwitch's order: unknown options, then the peer.
		for k := range ic.Options {
			if k != "peer" {
				return -1, fmt.Errorf("%s: patch type takes only a 'peer' argument", ic.Name)
			}
		}
		switch peer := ic.Options["peer"]; {
		case peer == "":
			return -1, fmt.Errorf("%s: patch type requires valid 'peer' argument", ic.Name)
		case peer == ic.Name:
			return -1, fmt.Errorf("%s: patch peer must not be self", ic.Name)
		}
		p.peer = ic.Options["peer"]
		// A patch port has no device, but Open vSwitch still gives it a
		// random locally administered unicast MAC.
		randomMAC(&p.mac)
	} else if isTunnelType(ic.Type) {
		if err := s.vports.attach(b.dpTyp, ic, p); err != nil {
			var conflict *errVportConflict
			if errors.As(err, &conflict) {
				s.moduleWarnf("netdev", "%s: could not set configuration (File exists)", ic.Name)
			}
			return -1, err
		}
	} else {
		// A device handed over by a predecessor is adopted, not opened
		// (handover.go).
		dev, _, adopted, err := s.hand.adoptDevice(b, ic.Name, s.devs.devType(b, ic))
		if !adopted {
			dev, err = s.devs.open(b, ic)
		}
		if err != nil {
			return -1, err
		}
		want := dpif.PortNone
		if b.dpTyp == "dummy" {
			want = dummyPortNo(s.Datapath(b.dpTyp), ic.Name)
		}
		if no, ok := s.hand.adoptedPortNo(ic.Name); ok {
			want = no // the number it had in the predecessor
		}
		no, err := s.Datapath(b.dpTyp).AddPort(dev, want)
		if err != nil {
			dev.Close()
			return -1, fmt.Errorf("could not add network device %s to ofproto (%v)", ic.Name, err)
		}
		p.dev, p.odp = dev, no
	}
	if p.dev != nil && s.devs.kernel(b, ic) {
		p.status = driverStatus(ic.Name)
	}
	// Numbered only once the port exists, so that a failed port does not
	// move the allocation cursor.
	if ic.Name == bname && ic.Type == "internal" {
		p.ofport = bridge.OFPPLocal
	} else {
		req := ic.OfportRequest
		if req <= 0 {
			req = ic.Ofport
		}
		p.ofport = b.allocOfport(req, time.Now())
	}
	if p.ofport == 0 {
		if p.dev != nil {
			s.Datapath(b.dpTyp).DelPort(p.odp)
			p.dev.Close()
		}
		if p.tunnel != nil {
			s.vports.release(b.dpTyp, p.tunnel)
		}
		return -1, fmt.Errorf("could not add network device %s to ofproto (No space left on device)", ic.Name)
	}
	b.ports[ic.Name] = p
	// Open vSwitch's bridge module reports each interface, then the
	// datapath ID once the ports are configured (ConfigurePorts,
	// dpid.go; ovs-vswitchd.at reads both lines).
	s.cfg.Logger("bridge").Info(fmt.Sprintf("bridge %s: added interface %s on port %d", bname, ic.Name, p.ofport))
	b.updateLocalMTU()
	s.syncPorts(b)
	return p.ofport, nil
}

// dummyPortNo numbers a port of the dummy datapath as Open vSwitch's does,
// so that datapath flows read the same: the number in the name (its first
// run of digits; plus 100 when the name starts with "br") if that number
// is free, else the lowest free number ("p1" is 1, "br0" is 100, "br-int"
// the lowest free).
func dummyPortNo(dp dpif.Datapath, name string) dpif.PortNo {
	start := 0
	if strings.HasPrefix(name, "br") {
		start = 100
	}
	if i := strings.IndexFunc(name, func(r rune) bool { return r >= '0' && r <= '9' }); i >= 0 {
		j := i
		for j < len(name) && name[j] >= '0' && name[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(name[i:j]); err == nil && n < 1<<16 {
			no := start + n
			if _, used := dp.Port(dpif.PortNo(no)); no > 0 && no < 1<<16 && !used {
				return dpif.PortNo(no)
			}
		}
	}
	for no := 1; no < 1<<16; no++ {
		if _, used := dp.Port(dpif.PortNo(no)); !used {
			return dpif.PortNo(no)
		}
	}
	return dpif.PortNone
}

// maxAutoOfport bounds automatically assigned port numbers; the upper
// half of the range is left to controllers, as in Open vSwitch.
const maxAutoOfport = 32768

// ofportReuseDelay is how long a freed port number is avoided.
const ofportReuseDelay = time.Hour

// allocOfport honours a free requested number; otherwise it advances a
// rotating cursor to the next number that is neither in use nor freed in
// the last hour, falling back to the least recently freed one. This is
// Open vSwitch's policy, so the same session numbers ports the same way.
func (b *dpBridge) allocOfport(req int64, now time.Time) int64 {
	used := map[int64]bool{}
	for _, p := range b.ports {
		used[p.ofport] = true
	}
	if req > 0 && req < 0xff00 && !used[req] {
		delete(b.freedAt, req)
		return req
	}
	var lru int64
	var lruAt time.Time
	for range maxAutoOfport {
		b.nextOfport++
		if b.nextOfport >= maxAutoOfport {
			b.nextOfport = 1
		}
		n := b.nextOfport
		if used[n] {
			continue
		}
		at, freed := b.freedAt[n]
		if !freed || now.Sub(at) > ofportReuseDelay {
			delete(b.freedAt, n)
			return n
		}
		if lru == 0 || at.Before(lruAt) {
			lru, lruAt = n, at
		}
	}
	if lru != 0 {
		delete(b.freedAt, lru)
	}
	return lru // 0 only when every number is in use
}

func (s *Backer) DelPort(bname, iface string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil {
		return nil
	}
	p := b.ports[iface]
	if p == nil {
		return nil
	}
	delete(b.ports, iface)
	s.stpDelPortLocked(b, iface) // stp.go
	if b.rstp.tree != nil {
		s.delRSTPPortLocked(b, iface) // rstp.go
	}
	s.tnl.flushNeighbors(iface) // tnlenv.go
	s.bfd.closeLocked(p)
	s.cfm.closeLocked(p)
	if p.ofport != bridge.OFPPLocal {
		b.freedAt[p.ofport] = time.Now()
	}
	if p.tunnel != nil {
		s.vports.release(b.dpTyp, p.tunnel)
	}
	if p.dev != nil {
		s.Datapath(b.dpTyp).DelPort(p.odp)
		s.devs.closing(p.dev) // afxdp.go
		p.dev.Close()
		if b.fdb != nil {
			// The port's MAC entries go with it (cost: that port's entries).
			b.fdb.FlushPort(p.odp, true)
		}
	}
	if fp, ok := p.fdbPort(); ok && b.fdb != nil && fp != uint32(p.odp) {
		b.fdb.FlushPort(fp, true)
	}
	b.updateLocalMTU()
	s.syncPorts(b)
	return nil
}

// setPortAdmin brings a bridge's OpenFlow port up or down (port_mod's
// OFPPC_PORT_DOWN) and reports whether its link is down afterwards.
func (s *Backer) setPortAdmin(bname string, no uint16, up bool) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil {
		return false, fmt.Errorf("no bridge %s", bname)
	}
	for _, p := range b.ports {
		if uint16(p.ofport) != no {
			continue
		}
		as, ok := p.dev.(netdev.AdminStater)
		if !ok {
			return false, fmt.Errorf("port %s cannot be brought up or down", p.name)
		}
		if err := as.SetAdminUp(up); err != nil {
			return false, err
		}
		return p.dev.LinkState() == netdev.LinkDown, nil
	}
	return false, fmt.Errorf("no port %d on bridge %s", no, bname)
}

func (s *Backer) IfaceStatus(bname, iface string) bridge.IfaceStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil || b.ports[iface] == nil {
		return bridge.IfaceStatus{Ofport: -1}
	}
	p := b.ports[iface]
	st := bridge.IfaceStatus{Ofport: p.ofport, AdminState: "up", LinkState: "up", Status: p.status}
	if p.bfd != nil {
		st.BFDStatus = p.bfd.Status()
	}
	st.CFM = cfmStatus(p) // cfm.go
	if p.dev == nil {     // patch and tunnel ports have no device
		if p.tunnel == nil && !s.patchPeered(b, p) {
			st.Error = fmt.Sprintf("No usable peer '%s' exists in '%s' datapath.", p.peer, b.cfgType)
		}
		st.MACInUse = macString(p.mac)
		// Packets cross a patch port inside OpenFlow translation, which
		// gvs does not have yet, so the counters are truthfully zero.
		st.Statistics = map[string]int64{"rx_packets": 0, "rx_bytes": 0, "tx_packets": 0, "tx_bytes": 0}
		return st
	}
	st.MACInUse = macString(p.dev.MAC())
	st.MTU = int64(p.dev.MTU())
	st.Ifindex = int64(p.dev.Ifindex())
	st.LinkState = p.dev.LinkState().String()
	if as, ok := p.dev.(netdev.AdminStater); ok && !as.AdminUp() {
		st.AdminState = "down"
	}
	if p.lastLink != "" && p.lastLink != st.LinkState {
		p.linkResets++
	}
	p.lastLink = st.LinkState
	st.LinkResets = p.linkResets
	if p.status != nil { // a kernel device: speed and duplex as ethtool reports them
		st.LinkSpeed, st.Duplex = linkSpeed(p.name)
	}
	ns := p.dev.Stats()
	st.Statistics = map[string]int64{
		"rx_packets": int64(ns.RxPackets), "rx_bytes": int64(ns.RxBytes), "rx_dropped": int64(ns.RxDropped), "rx_errors": int64(ns.RxErrors),
		"tx_packets": int64(ns.TxPackets), "tx_bytes": int64(ns.TxBytes), "tx_dropped": int64(ns.TxDropped), "tx_errors": int64(ns.TxErrors),
	}
	afxdpStatistics(p.dev, st.Statistics) // afxdp.go
	return st
}

// SetMTU applies an Interface.mtu_request change in place; clearing the
// request (0) keeps the current MTU, as Open vSwitch does.
func (s *Backer) SetMTU(bname, iface string, mtu int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil || b.ports[iface] == nil {
		return fmt.Errorf("no interface %s on bridge %s", iface, bname)
	}
	p := b.ports[iface]
	if p.dev == nil {
		return nil // patch ports have no MTU
	}
	p.mtuReq = mtu
	if mtu != 0 { // clearing the request leaves the MTU as it is
		if err := p.dev.SetMTU(int(mtu)); err != nil {
			return fmt.Errorf("setting MTU of %s: %w", iface, err)
		}
	}
	b.updateLocalMTU()
	return nil
}

// updateLocalMTU gives the bridge's local port, unless it has an MTU
// request of its own, the smallest MTU of the bridge's other non-internal
// ports, so that the host side never sends frames a port cannot carry.
// Open vSwitch does the same.
func (b *dpBridge) updateLocalMTU() {
	local := b.ports[b.name]
	if local == nil || local.dev == nil || local.ofport != bridge.OFPPLocal || local.mtuReq != 0 {
		return
	}
	lowest := 0
	for _, p := range b.ports {
		if p.dev == nil || p.typ == "internal" {
			continue
		}
		if m := p.dev.MTU(); m > 0 && (lowest == 0 || m < lowest) {
			lowest = m
		}
	}
	if lowest > 0 && lowest != local.dev.MTU() {
		local.dev.SetMTU(lowest) // best effort: a refused MTU leaves the old one
	}
}

// patchPeered reports whether a patch port's peer is a patch port, on a
// bridge of the same datapath, that names it back.
func (s *Backer) patchPeered(b *dpBridge, p *dpPort) bool {
	for _, ob := range s.bridges {
		if ob.dpTyp != b.dpTyp {
			continue
		}
		if q := ob.ports[p.peer]; q != nil && q.typ == "patch" && q.peer == p.name {
			return true
		}
	}
	return false
}

// driverStatus reports a kernel device's driver as Open vSwitch does in
// Interface.status (driver_name, driver_version, firmware_version), or
// nothing when the driver does not answer ethtool.
func driverStatus(name string) map[string]string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, name)
	if err != nil {
		return nil
	}
	return map[string]string{
		"driver_name":      unix.ByteSliceToString(info.Driver[:]),
		"driver_version":   unix.ByteSliceToString(info.Version[:]),
		"firmware_version": unix.ByteSliceToString(info.Fw_version[:]),
	}
}

// linkSpeed reads a kernel device's speed (in bits per second) and duplex
// from sysfs; both are unknown (0, "") while the link is down or the
// driver does not say.
func linkSpeed(name string) (int64, string) {
	var speed int64
	if b, err := os.ReadFile("/sys/class/net/" + name + "/speed"); err == nil {
		if mbps, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && mbps > 0 {
			speed = mbps * 1_000_000
		}
	}
	var duplex string
	if b, err := os.ReadFile("/sys/class/net/" + name + "/duplex"); err == nil {
		if d := strings.TrimSpace(string(b)); d == "full" || d == "half" {
			duplex = d
		}
	}
	return speed, duplex
}

func macString(m [6]byte) string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5])
}

func (s *Backer) BridgeStatus(bname string) bridge.BridgeStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bridges[bname]
	if b == nil {
		return bridge.BridgeStatus{}
	}
	return bridge.BridgeStatus{DatapathID: fmt.Sprintf("%016x", b.datapathIDLocked()), DatapathVersion: "<built-in>"}
}

// randomMAC makes a random locally administered unicast MAC.
func randomMAC(m *[6]byte) {
	rand.Read(m[:])
	m[0] = m[0]&^1 | 2
}

// inactivityProbes converts the Controller rows' inactivity_probe.
func inactivityProbes(cfg *bridge.BridgeConfig) map[string]*int64 {
	out := make(map[string]*int64, len(cfg.ControllerProbes))
	for t, ms := range cfg.ControllerProbes {
		out[t] = &ms
	}
	return out
}

// rateLimits converts the Controller rows' packet-in rate limits.
func rateLimits(cfg *bridge.BridgeConfig) map[string]ofswitch.RateLimit {
	if len(cfg.ControllerLimits) == 0 {
		return nil
	}
	out := make(map[string]ofswitch.RateLimit, len(cfg.ControllerLimits))
	for t, l := range cfg.ControllerLimits {
		out[t] = ofswitch.RateLimit{Rate: int(l[0]), Burst: int(l[1])}
	}
	return out
}

// flowTables converts the Bridge's flow_tables (Flow_Table rows) for the
// OpenFlow tables the bridge has; Open vSwitch ignores other ids.
func flowTables(cfg *bridge.BridgeConfig) map[uint8]ofswitch.TableSettings {
	out := make(map[uint8]ofswitch.TableSettings, len(cfg.FlowTables))
	for id, ft := range cfg.FlowTables {
		if id < 0 || id >= 254 {
			continue
		}
		ts := ofswitch.TableSettings{Name: ft.Name, MaxFlows: oftable.Unlimited, Evict: ft.OverflowPolicy == "evict", Groups: ft.Groups,
			Prefixes: ft.Prefixes}
		if ft.FlowLimit >= 0 && ft.FlowLimit < math.MaxUint32 {
			ts.MaxFlows = int(ft.FlowLimit)
		}
		out[uint8(id)] = ts
	}
	return out
}

// SyncAllPorts gives every bridge's OpenFlow switch its ports again, after
// devices changed state behind the backer (netdev-dummy/set-admin-state).
func (s *Backer) SyncAllPorts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range sortedKeys(s.bridges) {
		s.syncPorts(s.bridges[n])
	}
}

// flowLimitLocked returns the dynamic flow limit a new bridge of datapath
// type typ shares with the others (a new one for the first, bounded by
// the datapath's other_config:flow-limit). Called with s.mu held.
func (s *Backer) flowLimitLocked(typ string) *upcall.FlowLimit {
	if fl := s.view.sharedFlowLimitLocked(typ); fl != nil {
		return fl
	}
	return upcall.NewFlowLimit(s.Datapath(typ).ConfiguredFlowLimit())
}
