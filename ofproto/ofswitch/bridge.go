package ofswitch

import (
	"context"
	"github.com/gvs-project/gvs/datapath/l2fib"
	"github.com/gvs-project/gvs/datapath/meter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/connmgr"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// Port is one bridge port as OpenFlow describes it.
type Port struct {
	xlate.Port
	HWAddr [6]byte
	// LinkDown and AdminDown give OFPPS_LINK_DOWN and OFPPC_PORT_DOWN.
	LinkDown, AdminDown bool
	// NoForward is set while a liveness monitor on the port (BFD) says it
	// must not forward: with LinkDown it makes the port not live
	// (xlate.Port.Down, no OFPPS_LIVE), as Open vSwitch's may_enable.
	NoForward bool
	// STPBits are the OpenFlow 1.0 port state's spanning tree bits
	// (OFPPS_STP_*), set by the switch from the port's STP state.
	STPBits uint32
	// OFConfig is the rest of the port's OpenFlow configuration
	// (ofp.PCNoRecv, PCNoFwd, PCNoPacketIn, PCNoFlood, ...), set by
	// port_mod and kept by the bridge across SetPorts.
	OFConfig uint32
	// CurrSpeed and MaxSpeed are in kbps (OpenFlow 1.1+), 0 if unknown.
	CurrSpeed, MaxSpeed uint32
	Created             time.Time
}

// Config creates a Bridge.
type Config struct {
	Name string
	DP   dpif.Datapath
	// Recirc is shared by the bridges of one datapath.
	Recirc *xlate.RecircTable
	// FDBTable is the bridge's MAC table id in the datapath (mac_learn).
	FDBTable uint32
	// MACTables are the datapath's MAC tables, which NORMAL translated
	// per MAC address reads and learns in (xlate's normal.go); nil:
	// NORMAL is always the datapath's mac_learn action.
	MACTables *l2fib.Registry
	// MACLearnActionThreshold is how many entries the MAC table holds
	// before NORMAL becomes the mac_learn action (0: xlate's default;
	// negative: always the action); see SetMACLearnActionThreshold.
	MACLearnActionThreshold int
	// DatapathID returns the bridge's datapath ID for features replies.
	DatapathID func() uint64
	// RunDir holds the <name>.mgmt socket; empty: no listener.
	RunDir string
	// SocketPerm is the mode and group of the bridge's unix sockets
	// (<name>.mgmt, <name>.snoop, punix: controller targets).
	SocketPerm unixsock.Perm
	// SetPortAdmin brings OpenFlow port no's device up or down (port_mod's
	// OFPPC_PORT_DOWN) and returns whether its link is down afterwards;
	// nil: ports cannot be brought down.
	SetPortAdmin func(no uint16, up bool) (linkDown bool, err error)
	// DebugActions accepts the testing actions debug_slow and
	// debug_recirc, as Open vSwitch does with --enable-dummy.
	DebugActions bool
	// Logf receives warnings; nil discards them.
	Logf func(format string, args ...any)
	// ModuleWarnf, if not nil, receives the warnings about packets
	// whose translation failed, in Open vSwitch's words and log modules
	// (ofproto_dpif_xlate, and ofproto_dpif_upcall for the trace of a
	// packet that recursed too deep); else they go to Logf.
	ModuleWarnf func(module, format string, args ...any)
	// BFDProcessed is called after a port's BFD session processed a
	// received control packet (bfd.go): the switch answers a poll at once
	// and updates the port's liveness.
	BFDProcessed func(*bfd.Session)
	// LACPProcessed is called after a bond member's LACP processed a
	// LACPDU, so that the switch runs its bonds (processLACP).
	LACPProcessed func()
	// STPProcessed is called after a spanning tree port processed a
	// received BPDU (stp.go), so that the switch updates port states.
	STPProcessed func()
	// Debugf receives per-message detail (OpenFlow requests refused with
	// an error reply): Open vSwitch does not warn about those, and its
	// test suite fails on unexpected warnings. nil discards them.
	Debugf func(format string, args ...any)
	// RevalidateInterval bounds how stale megaflow statistics and
	// megaflows of unchanged tables get (default 500ms).
	RevalidateInterval time.Duration
	// Version is the software description in desc stats.
	Version string
	// PortStats returns a datapath port's counters (port stats).
	PortStats PortCounters
	// CTFlush flushes conntrack entries (NXT_CT_FLUSH_ZONE: match nil;
	// NXT_CT_FLUSH: zone nil when the message names none). As in Open
	// vSwitch, the controller gets no error back when nothing matched.
	CTFlush func(zone *uint16, match *ofp.CTFlush)
	// Meters is the datapath's meter table, shared by the bridges of a
	// datapath; nil: meters are accepted and reported but not enforced.
	Meters *meter.Table
	// TLS is the SSL configuration for ssl: and pssl: controller targets
	// (the Open_vSwitch SSL table); nil: such targets fail.
	TLS *ofconn.TLSSettings
	// FlowLimit is the datapath's dynamic megaflow limit, shared by the
	// bridges of one datapath; nil: the bridge keeps its own.
	FlowLimit *upcall.FlowLimit
	// Changes is the datapath's change sequence, shared by the bridges of
	// one datapath so that a change in one re-translates the megaflows
	// others keep; nil: the bridge keeps its own.
	Changes *upcall.Changes
	// OFDebug, if set, sees the messages of every OpenFlow connection of
	// the bridge (management, controllers, snoops excepted) for the
	// vconn debug log.
	OFDebug ofconn.Debugger
	// BundleIdleTimeout returns how long a bundle may go without a
	// message before it is discarded (Open_vSwitch
	// other_config:bundle-idle-timeout); nil or 0: Open vSwitch's 10 s.
	BundleIdleTimeout func() time.Duration
}

// Bridge is one OpenFlow switch.
type Bridge struct {
	cfg    Config
	tables *oftable.Tables
	xl     *xlate.Xlator
	// up handles the datapath's upcalls for the bridge and revalidates
	// its megaflows (ofproto/upcall).
	up *upcall.Handler

	// ports are the bridge's ports and TLV table (ports.go).
	ports *portTable

	mu sync.Mutex // settings
	// standalone is fail_mode standalone (the default); hasCtrl says
	// controllers are configured. Without controllers a standalone
	// bridge has the "priority=0 actions=NORMAL" flow.
	standalone, hasCtrl bool
	normalFlow          bool
	// configured: SetConfig has run (the first one flushes nothing).
	configured   bool
	fragHandling uint16
	genID        uint64
	genIDSet     bool

	// conns are the bridge's OpenFlow connections (ofproto/connmgr).
	conns *connmgr.Manager[connExt]
	// notify sends the asynchronous messages to them (async.go).
	notify *notifier
	// fmd decodes and checks flow_mods (flowmod.go).
	fmd *fmDecoder
	// exec runs packet-outs, resumes and the switch's own packets
	// (packetout.go).
	exec *executor
	// bundles are the connections' OpenFlow bundles (bundle.go).
	bundles *bundler
	// tracer writes ofproto/trace reports (trace.go).
	tracer *tracer

	// mons are the connections' flow monitors (flowmonitor.go).
	mons monitorSet
	// tabs are the per-table settings (tablefeatures.go).
	tabs tableSet
	// gmu guards the group and meter tables.
	gmu sync.Mutex
	// meters are the bridge's meters (meters.go).
	meters meterTable
	// groups are the bridge's groups (groups.go).
	groups groupTable

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	stats struct {
		// msgs counts the OpenFlow messages received, by raw type;
		// errors the error replies the handler sent.
		msgs   [ofp.NumRaws]atomic.Uint64
		errors atomic.Uint64
	}
	// fe are the NetFlow, sFlow and IPFIX exporters (flowexport.go).
	fe flowExport
}

// New creates a bridge and starts its listener, revalidator and rule
// expiry.
func New(cfg Config) (*Bridge, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Debugf == nil {
		cfg.Debugf = func(string, ...any) {}
	}
	if cfg.DatapathID == nil {
		cfg.DatapathID = func() uint64 { return 0 }
	}
	if cfg.Recirc == nil {
		cfg.Recirc = xlate.NewRecircTable()
	}
	b := &Bridge{cfg: cfg, standalone: true}
	t, err := oftable.New(oftable.Config{OutputsTo: outputsTo, Readers: &cfg.Recirc.Readers})
	if err != nil {
		return nil, err
	}
	b.tables = t
	b.xl = xlate.New(t, cfg.Recirc)
	b.xl.SetMACTables(cfg.MACTables)
	b.SetMACLearnActionThreshold(cfg.MACLearnActionThreshold)
	b.up = upcall.New(upcall.Config{Name: cfg.Name, DP: cfg.DP, Xlator: b.xl, Recirc: cfg.Recirc, FlowLimit: cfg.FlowLimit, Changes: cfg.Changes,
		RevalidateInterval: cfg.RevalidateInterval, Logf: cfg.Logf, XlateWarn: b.xlateWarn(), Switch: upcallSwitch{b}})
	t.OnChange(b.up.Changed)
	b.ctx, b.cancel = context.WithCancel(context.Background())
	// One commit hook for the flow monitors and delete_learned's
	// learned cookies (learncookies.go).
	hooks := &commitHooks{tables: t, cookies: &learnedCookies{}}
	b.notify = &notifier{cookies: hooks.cookies, name: cfg.Name, xl: b.xl, recirc: cfg.Recirc, tables: t, up: b.up, logf: cfg.Logf, debugf: cfg.Debugf}
	b.conns = connmgr.New(connmgr.Config[connExt]{Name: cfg.Name, RunDir: cfg.RunDir, SocketPerm: cfg.SocketPerm,
		TLS: cfg.TLS, OFDebug: cfg.OFDebug, Logf: cfg.Logf, Debugf: cfg.Debugf,
		Serve: b.serveConn, OnChange: b.notify.updateMissPacketIn,
		Init: func(x *connExt) { x.bundles = map[uint32]*bundle{} }})
	b.notify.conns = b.conns
	b.ports = &portTable{name: cfg.Name, fdbTable: cfg.FDBTable, xl: b.xl, up: b.up, notify: b.notify,
		setAdmin: cfg.SetPortAdmin, counters: cfg.PortStats, logf: cfg.Logf, ports: map[uint16]*Port{}}
	b.meters = meterTable{mu: &b.gmu, m: map[uint32]*meterEntry{}, dp: cfg.Meters, xl: b.xl, tables: t, changed: b.up.Changed,
		flowsRemoved: b.notify.sendFlowRemoved}
	b.groups = groupTable{mu: &b.gmu, m: map[uint32]*groupEntry{}, xl: b.xl, tables: t, meters: &b.meters, changed: b.up.Changed,
		flowsRemoved: b.notify.sendFlowRemoved}
	b.fmd = &fmDecoder{xl: b.xl, groups: &b.groups, debugActions: cfg.DebugActions, hooks: hooks, share: t.ShareActions}
	b.exec = &executor{name: cfg.Name, dp: cfg.DP, xl: b.xl, up: b.up, groups: &b.groups, notify: b.notify,
		debugActions: cfg.DebugActions, bfdProcessed: cfg.BFDProcessed, lacpProcessed: cfg.LACPProcessed,
		stpProcessed: cfg.STPProcessed}
	b.bundles = &bundler{name: cfg.Name, conns: b.conns, idleTimeout: cfg.BundleIdleTimeout, groups: &b.groups, tables: t,
		xl: b.xl, up: b.up, fmd: b.fmd, exec: b.exec, notify: b.notify, debugf: cfg.Debugf}
	b.tracer = &tracer{name: cfg.Name, xl: b.xl, recirc: cfg.Recirc, learn: b.up.ApplyLearned}
	b.mons = monitorSet{tables: t, xl: b.xl, conns: b.conns, hooks: hooks}
	hooks.monitors = b.mons.monitorCommit
	b.tabs.tables, b.tabs.xl, b.tabs.changed, b.tabs.flowsRemoved = t, b.xl, b.up.Changed, b.notify.sendFlowRemoved
	b.tabs.vacancyOn, b.tabs.tableStatus = hooks.enableVacancy, b.notify.sendTableStatus
	hooks.vacancy = b.tabs.vacancyCommit
	b.tabs.name, b.tabs.logf = cfg.Name, cfg.Logf
	b.fe.xl, b.fe.datapathID, b.fe.ports, b.fe.portStats = b.xl, cfg.DatapathID, b.Ports, cfg.PortStats
	b.fe.changed, b.fe.ctx, b.fe.wg = b.up.Changed, b.ctx, &b.wg
	// Connections are served from here on: everything they use is set.
	if err := b.conns.Listen(); err != nil {
		return nil, err
	}
	b.applyDefaultFlow()
	b.up.Start()
	b.wg.Add(1)
	go b.expirer()
	return b, nil
}

// Counters are a bridge's switch-level counts: its upcall handler's
// and the packet-ins it sent.
type Counters struct {
	upcall.Counters
	PacketIns uint64
}

// MessagesReceived calls f for each OpenFlow message type the bridge has
// received (handled by it, on any connection), with its count.
func (b *Bridge) MessagesReceived(f func(name string, n uint64)) {
	for r := range b.stats.msgs {
		if n := b.stats.msgs[r].Load(); n != 0 {
			f(ofp.Raw(r).String(), n)
		}
	}
}

// ErrorsSent is the number of OpenFlow error replies the bridge sent.
func (b *Bridge) ErrorsSent() uint64 { return b.stats.errors.Load() }

// Counters returns the bridge's counts.
func (b *Bridge) Counters() Counters {
	return Counters{Counters: b.up.Counters(), PacketIns: b.notify.packetIns.Load()}
}

// Name returns the bridge's name.
func (b *Bridge) Name() string { return b.cfg.Name }

// Tables returns the bridge's flow tables.
func (b *Bridge) Tables() *oftable.Tables { return b.tables }

// Xlator returns the bridge's translator (ofproto/trace).
func (b *Bridge) Xlator() *xlate.Xlator { return b.xl }

// Upcalls returns the bridge's upcall handler: the datapath's
// dpif.UpcallHandler for the bridge's ports, its revalidator, flow limit,
// flow-restore-wait and patch port counters.
func (b *Bridge) Upcalls() *upcall.Handler { return b.up }

// Close stops the bridge: its listener, connections and goroutines.
func (b *Bridge) Close() {
	b.cancel()
	b.conns.Close()
	b.up.Close()
	b.wg.Wait()
	b.meters.releaseMeters()
	b.fe.close()
}

// TunnelReceives reports whether one of the bridge's tunnel ports
// receives a packet with datapath key k (in_port a tunnel vport).
func (b *Bridge) TunnelReceives(k *flow.Key) bool { return b.xl.Snapshot().TunnelReceive(k) != nil }

// TunnelStateChanged makes every megaflow be re-translated: the tunnel
// routes or neighbours that native tunnel output depends on changed.
func (b *Bridge) TunnelStateChanged() { b.up.Changed() }

// SetPorts replaces the bridge's port set. Ports that appear, disappear
// or change are announced to controllers with port-status.
func (b *Bridge) SetPorts(ports []Port) { b.ports.set(ports) }

// Ports returns the ports sorted by number.
func (b *Bridge) Ports() []Port { return b.ports.list() }

// Settings are a bridge's OpenFlow-relevant configuration.
type Settings struct {
	// FailMode is "secure" or "standalone" ("" is standalone).
	FailMode string
	// Controllers are Controller.target values ("tcp:IP:PORT",
	// "unix:PATH", "ptcp:PORT", "punix:PATH").
	Controllers []string
	// HoldControllers keeps the controllers configured but neither
	// connects to nor listens for them (flow-restore-wait).
	HoldControllers bool
	// RateLimits are the targets' packet-in rate limits
	// (controller_rate_limit, controller_burst_limit); none: unlimited.
	RateLimits map[string]RateLimit
	// InactivityProbes are the targets' Controller.inactivity_probe in
	// milliseconds; a target not in the map has the default (probe.go).
	InactivityProbes map[string]*int64
}

// SetConfig applies settings: controllers are connected or listened for,
// and the default NORMAL flow follows Open vSwitch's rule (present only
// in standalone mode without controllers). A bridge that gets its first
// controller or loses its last one is flushed, as Open vSwitch's
// connmgr_set_controllers does: its flows, groups and meters go (the
// flows the bridge had were set up for another master), and the default
// flow comes back where the rule says. The first configuration flushes
// nothing: the bridge is new, or took its flows over from a predecessor.
// SetMACLearnActionThreshold sets how many entries the bridge's MAC
// table holds before NORMAL becomes the datapath's mac_learn action (0:
// xlate.DefaultMACLearnActionThreshold; negative: always); the megaflows
// are revalidated if that changes how NORMAL translates.
func (b *Bridge) SetMACLearnActionThreshold(n int) {
	switch {
	case n == 0:
		n = xlate.DefaultMACLearnActionThreshold
	case n < 0:
		n = 0
	}
	b.xl.SetMACLearnActionThreshold(n)
}

func (b *Bridge) SetConfig(s Settings) {
	b.mu.Lock()
	b.standalone = s.FailMode != "secure"
	had := b.hasCtrl
	b.hasCtrl = len(s.Controllers) > 0
	flush := b.configured && had != b.hasCtrl
	b.configured = true
	b.mu.Unlock()
	b.conns.SetControllers(connmgr.Controllers{Targets: s.Controllers, Hold: s.HoldControllers,
		RateLimits: s.RateLimits, InactivityProbes: s.InactivityProbes})
	if flush {
		b.flush()
	}
	b.applyDefaultFlow()
}

// flush deletes every flow (but the internal table's), group and meter,
// as Open vSwitch's ofproto_flush_flows.
func (b *Bridge) flush() {
	x := b.tables.Begin()
	for t := 0; t < oftable.TableInternal; t++ {
		fm := &oftable.FlowMod{Command: ofp.FlowDelete, Table: uint8(t), OutPort: oftable.PortAny, OutGroup: oftable.GroupAny}
		if err := x.Apply(fm); err != nil {
			x.Abort()
			b.cfg.Logf("%s: flushing flows: %v", b.cfg.Name, err)
			return
		}
	}
	b.notify.sendFlowRemoved(x.Commit())
	if err := b.groups.groupMod(&ofp.GroupMod{Command: ofp.GroupDelete, GroupID: ofp.GroupAll}); err != nil {
		b.cfg.Logf("%s: flushing groups: %v", b.cfg.Name, err)
	}
	if err := b.meters.meterMod(&ofp.MeterMod{Command: ofp.MeterDelete, MeterID: ofp.MeterAll}); err != nil {
		b.cfg.Logf("%s: flushing meters: %v", b.cfg.Name, err)
	}
	b.mu.Lock()
	b.normalFlow = false // gone with the rest
	b.mu.Unlock()
}

// applyDefaultFlow adds or removes the "priority=0 actions=NORMAL" flow
// of a standalone bridge without controllers.
func (b *Bridge) applyDefaultFlow() {
	b.mu.Lock()
	want := b.standalone && !b.hasCtrl
	had := b.normalFlow
	b.normalFlow = want
	b.mu.Unlock()
	if want == had {
		return
	}
	fm := &oftable.FlowMod{Command: ofp.FlowAdd, Table: 0, NewCookie: 0, OutPort: oftable.PortAny, OutGroup: oftable.GroupAny,
		Actions: []ofp.Action{{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: xlate.PortNormal}}}
	if !want {
		fm.Command = ofp.FlowDeleteStrict
	}
	x := b.tables.Begin()
	if err := x.Apply(fm); err != nil {
		x.Abort()
		b.cfg.Logf("%s: default flow: %v", b.cfg.Name, err)
		return
	}
	x.Commit()
}

// outputsTo implements the out_port/out_group filters over actions
// (16-bit port form, oftable.PortAny for none).
func outputsTo(acts []ofp.Action, port, group uint32) bool {
	// With both filters a rule must output to the port and to the group
	// (Open vSwitch's rule_has_out_port and rule_has_out_group).
	if port != oftable.PortAny && group != oftable.GroupAny {
		return outputsTo(acts, port, oftable.GroupAny) && outputsTo(acts, oftable.PortAny, group)
	}
	for i := range acts {
		a := &acts[i]
		if port != oftable.PortAny && a.Type == ofp.ActOutput && uint32(xlate.Port16(a.Port)) == port {
			return true
		}
		if extOutputsTo(a, port, group) {
			return true
		}
	}
	return false
}

// inPortField is the in_port field, for matches built in code.
var inPortField = mf.ByName("in_port")

// expirer removes rules whose idle or hard timeout passed, once a second.
func (b *Bridge) expirer() {
	defer b.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case now := <-t.C:
			b.notify.sendFlowRemoved(b.tables.Expire(now))
			b.checkFailOpen(now)
			b.bundles.expire(now)
		}
	}
}
