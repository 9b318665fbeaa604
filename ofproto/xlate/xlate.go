package xlate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/cfm"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/rstp"
	"github.com/gvs-project/gvs/ofproto/stp"
)

// OpenFlow special ports in Open vSwitch's internal 16-bit form
// (ofp_port_t), as the codec defines them.
const (
	PortMax        = ofp.PortMax
	PortInPort     = ofp.PortInPort
	PortTable      = ofp.PortTable
	PortNormal     = ofp.PortNormal
	PortFlood      = ofp.PortFlood
	PortAll        = ofp.PortAll
	PortController = ofp.PortController
	PortLocal      = ofp.PortLocal
	PortNone       = ofp.PortNone
)

// Port16 converts an OpenFlow 1.1+ 32-bit port number to the 16-bit
// internal form (0xffffff00 and up map to 0xff00 and up), as
// ofputil_port_from_ofp11. Other numbers above 0xffff map to PortNone.
func Port16(p uint32) uint16 {
	switch {
	case p < PortMax:
		return uint16(p)
	case p >= 0xffffff00:
		return uint16(p - 0xffff0000)
	case p <= 0xffff:
		return uint16(p)
	}
	return PortNone
}

// Limits, as Open vSwitch's xlate.
const (
	MaxDepth     = 64
	MaxResubmits = 4096
)

// Errors a translation can end with; the packet is dropped. Reason
// gives the words Open vSwitch's traces use for them.
var (
	ErrTooDeep        = errors.New("xlate: translation depth exceeds 64")
	ErrTooManyResubs  = errors.New("xlate: over 4096 resubmit actions")
	ErrNoRecirc       = errors.New("xlate: unknown recirculation id")
	ErrUnsupported    = errors.New("xlate: unsupported action")
	ErrStackUnderflow = errors.New("xlate: stack underflow")
	ErrStackTooDeep   = errors.New("xlate: over 64 kB of stack")
)

// NoODP marks a port without a datapath port (a patch port).
const NoODP = 0xffffffff

// Port is one bridge port as translation sees it.
type Port struct {
	OFPort  uint16
	ODP     uint32
	Name    string
	NoFlood bool
	// NoRecv, NoFwd and NoPacketIn are the port's OpenFlow configuration
	// (OFPPC_NO_RECV, OFPPC_NO_FWD, OFPPC_NO_PACKET_IN, set by port_mod):
	// packets received on it are dropped, output to it is skipped, and a
	// table miss on a packet from it sends no packet-in (where the table
	// asks for one).
	NoRecv, NoFwd, NoPacketIn bool
	// Down is Open vSwitch's !may_enable: the link is down, or a liveness
	// monitor on the port (BFD) says it does not forward. Fast-failover
	// buckets watching it and bundle members on it are not live.
	Down bool
	// BFD is the port's BFD session, nil when BFD is off: its control
	// packets are handled by the switch, not the pipeline (special.go).
	BFD *bfd.Session
	// CFM is the port's CFM maintenance point, nil when CFM is off: its
	// CCMs are handled by the switch, not the pipeline (special.go).
	CFM *cfm.Session
	// STP is the port's spanning tree port, nil when the port takes no
	// part in it: its state gates what the port receives and sends
	// (stp.go).
	STP *stp.Port
	// RSTP is the port's rapid spanning tree port, nil when the port
	// takes no part in it (stp.go).
	RSTP *rstp.Port
	// Tag is the access or native VLAN (Port.tag), -1 for none; Trunks
	// the trunked VLANs (all when empty); VLANMode says how NORMAL uses
	// them (vlan.go).
	Tag      int
	Trunks   []uint16
	VLANMode VLANMode
	// PeerBridge and PeerPort name the other end of a patch port:
	// output to it continues translation in the peer bridge.
	PeerBridge string
	PeerPort   uint16
	// MAC is the port's Ethernet address (the source of tunnel headers
	// sent through it, the destination of tunnel packets it terminates).
	MAC [6]byte
	// Tunnel, when not nil, makes this a native tunnel port (geneve,
	// vxlan): ODP is then the datapath's shared tunnel vport.
	Tunnel *TunnelConfig
	// Bundle, when not nil, makes this port a member of a bond
	// (bond.go): NORMAL treats the bond's members as one port.
	Bundle *Bundle
}

// Snapshot is the immutable bridge configuration a translation uses.
type Snapshot struct {
	Bridge string
	Ports  map[uint16]*Port // by OpenFlow port
	ByODP  map[uint32]*Port // by datapath port
	// Sorted lists the ports by OpenFlow number (flood order).
	Sorted []*Port
	// FDBTable identifies the bridge's MAC table for mac_learn.
	FDBTable uint32
	// Tunnels are the tunnel ports, in OpenFlow port order.
	Tunnels []*Port
	// TunMap places tun_metadata fields by the bridge's TLV table and
	// TLVs are its mappings (Geneve options <-> tun_metadata).
	TunMap *mf.TunMap
	TLVs   []mf.TunTLV
}

// SetTLVs installs the bridge's TLV table mappings.
func (s *Snapshot) SetTLVs(tlvs []mf.TunTLV) error {
	tm, err := mf.NewTunMap(tlvs)
	if err != nil {
		return err
	}
	s.TunMap, s.TLVs = tm, tlvs
	return nil
}

// NewSnapshot indexes ports.
func NewSnapshot(bridge string, fdb uint32, ports []*Port) *Snapshot {
	s := &Snapshot{Bridge: bridge, FDBTable: fdb, Ports: map[uint16]*Port{}, ByODP: map[uint32]*Port{}}
	for _, p := range ports {
		s.Ports[p.OFPort] = p
		switch {
		case p.Tunnel != nil:
			s.Tunnels = append(s.Tunnels, p)
		case p.ODP != NoODP:
			s.ByODP[p.ODP] = p
		}
		s.Sorted = append(s.Sorted, p)
	}
	slices.SortFunc(s.Sorted, func(a, b *Port) int { return cmp.Compare(a.OFPort, b.OFPort) })
	slices.SortFunc(s.Tunnels, func(a, b *Port) int { return cmp.Compare(a.OFPort, b.OFPort) })
	s.TunMap = &mf.TunMap{}
	return s
}

// Owner is the upcall side of the switch that owns an Xlator (set by
// it): a translation that starts in one bridge and crosses a patch port
// into another hands the work it did there to the other bridge's owner.
type Owner interface {
	// SendPacketIns sends packet-ins made in this bridge's pipeline to
	// its controllers.
	SendPacketIns(pis []PacketIn)
	// CreditPatch counts packets and bytes sent into patch port port of
	// this bridge (tx) or received into it from its peer.
	CreditPatch(port uint16, tx bool, packets, bytes uint64)
}

// Xlator translates flows for one bridge.
type Xlator struct {
	// ctxs recycles translation contexts (a few kilobytes each): every
	// upcall translates, and a fresh one per upcall was most of what an
	// upcall left for the collector.
	ctxs sync.Pool
	// Owner is the bridge's upcall handler (set by it), so that work a
	// translation produced for another bridge reaches it.
	Owner  Owner
	Tables *oftable.Tables
	Recirc *RecircTable
	snap   atomic.Pointer[Snapshot]
	groups atomic.Pointer[map[uint32]*Group]
	meters atomic.Pointer[map[uint32]uint32]
	// sampling is the flow export configuration (sample.go).
	sampling atomic.Pointer[Sampling]
	// failOpen makes every packet go to NORMAL, above every flow: a
	// standalone bridge that lost its controllers (Open vSwitch's
	// fail-open rule).
	failOpen atomic.Bool
	// stp: the bridge runs the spanning tree (stp.go).
	stp atomic.Bool
	// rstp: the bridge runs the rapid spanning tree (stp.go).
	rstp atomic.Bool
	// missPacketIn says a connection wants packet-ins on table misses
	// (Open vSwitch's want_packet_in_on_miss: an OpenFlow 1.0–1.2
	// connection with controller id 0 is open).
	missPacketIn atomic.Bool
	// explicitDrop makes a translation without actions end in an
	// explicit drop action carrying why (SetExplicitDrop).
	explicitDrop atomic.Bool
	// mcast is the bridge's multicast snooping, nil when off (mcast.go).
	mcast atomic.Pointer[McastSnooping]
	// fragMode is the fragment handling mode: IP fragments are looked
	// up without L4 ports (normal, the default), dropped, or matched as
	// they are (nx-match).
	fragMode atomic.Uint32
	// tableMiss holds each table's miss behaviour; nil: all MissDefault.
	tableMiss atomic.Pointer[[oftable.NumTables]uint8]
	// mirrors are the bridge's port mirrors (mirror.go); nil: none.
	mirrors atomic.Pointer[mirrorSet]
	// normal chooses NORMAL's translation (normal.go).
	normal normalMode
}

// SetMissPacketIn says whether table misses (MissDefault) send
// packet-ins; it reports whether that changed.
func (x *Xlator) SetMissPacketIn(on bool) bool { return x.missPacketIn.Swap(on) != on }

// SetFragHandling sets the OpenFlow fragment handling mode
// (ofp.FragNormal, FragDrop or FragNXMatch); it reports whether that
// changed.
func (x *Xlator) SetFragHandling(mode uint16) bool {
	return x.fragMode.Swap(uint32(mode)) != uint32(mode)
}

// SetTableMiss sets table's miss behaviour (all tables for 255); it
// reports whether anything changed.
func (x *Xlator) SetTableMiss(table uint8, miss uint8) bool {
	var next [oftable.NumTables]uint8
	if cur := x.tableMiss.Load(); cur != nil {
		next = *cur
	}
	old := next
	for t := range next {
		if table == 255 || int(table) == t {
			next[t] = miss
		}
	}
	x.tableMiss.Store(&next)
	return next != old
}

// TableMiss returns table's miss behaviour.
func (x *Xlator) TableMiss(table uint8) uint8 {
	if cur := x.tableMiss.Load(); cur != nil && int(table) < len(cur) {
		return cur[table]
	}
	return MissDefault
}

// SetFailOpen turns fail-open mode on or off.
func (x *Xlator) SetFailOpen(on bool) { x.failOpen.Store(on) }

// FailOpen reports whether fail-open mode is on.
func (x *Xlator) FailOpen() bool { return x.failOpen.Load() }

// New returns a translator over tables with an empty snapshot.
func New(t *oftable.Tables, rt *RecircTable) *Xlator {
	x := &Xlator{Tables: t, Recirc: rt}
	x.snap.Store(NewSnapshot("", 0, nil))
	x.normal.above.Store(DefaultMACLearnActionThreshold)
	return x
}

// SetSnapshot publishes a new configuration; translations started before
// keep the old one.
func (x *Xlator) SetSnapshot(s *Snapshot) { x.snap.Store(s) }

// Snapshot returns the current configuration.
func (x *Xlator) Snapshot() *Snapshot { return x.snap.Load() }

// In is a translation's input.
type In struct {
	// Key is the datapath flow key: InPort is a datapath port, RecircID
	// names frozen state when not zero.
	Key flow.Key
	// Packet, if not nil, is the packet being translated (for
	// packet-ins); translation does not modify it.
	Packet *packet.Packet
	// SideEffects allows packet-ins and learned flows (a real packet,
	// not revalidation).
	SideEffects bool
	// OFActions, if not nil, are translated instead of the tables (a
	// packet-out); InPort is then the OpenFlow in_port to use.
	OFActions []ofp.Action
	InPort    uint16
	// Regs and Metadata are the initial pipeline state of a packet-out,
	// a resume or a traced flow (zero for a datapath packet).
	Regs     [mf.NumRegs]uint32
	Metadata uint64
	// Resume, if not nil, continues a paused translation (NXT_RESUME);
	// InPort is then the OpenFlow in_port.
	Resume *Continuation
	// Trace, if not nil, receives every step (ofproto/trace).
	Trace func(ev *TraceEvent)
	// Version, if not zero, is the flow table version to look up at
	// instead of the published one, and Groups, if not nil, replaces the
	// groups of bridge GroupsOf: a packet-out inside a bundle sees the
	// bundle's changes staged before it, and only those.
	Version  uint64
	Groups   map[uint32]*Group
	GroupsOf *Xlator
}

// TraceKind says what a TraceEvent reports.
type TraceKind uint8

// Trace event kinds.
const (
	TraceRule         TraceKind = iota // a rule matched in Table
	TraceMiss                          // no rule matched in Table
	TraceMissPacketIn                  // no rule matched in Table, and a packet-in is called for
	TraceFragDrop                      // an IP fragment, dropped by the fragment handling mode
	TraceActionSet                     // the action set runs (its actions follow)
	TraceActionSetIs                   // Actions is what the action set would run after a write ("is") or before a clear ("was": Text)
	TraceBucket                        // a group's bucket Bucket runs (its actions follow, ActIndent)
	TraceAction                        // Action is about to run
	TraceNote                          // Text explains what happened
	TraceSkip                          // Text says why an action did nothing
	TraceError                         // Text says why the translation failed
	TraceBridge                        // translation continues in bridge Text
	// TraceRecirc: ct froze the pipeline for recirculation RecircID;
	// Flow is the flow at the freeze and Ct the datapath ct action.
	TraceRecirc
	// TraceSubfield: an action loaded Sub, whose field now holds Value
	// (Open vSwitch's xlate_report_subfield: "-> SUB is now V").
	TraceSubfield
)

// TraceEvent is one step of a translation, for ofproto/trace. Indent is
// the column Open vSwitch prints the step at: a table's actions are
// indented ActIndent; a resubmit that is not its list's last action nests
// the next table 8 columns deeper, a last one (a tail call) does not.
type TraceEvent struct {
	Kind      TraceKind
	Actions   []ofp.Action
	Bucket    uint32
	Indent    int
	ActIndent int
	Table     uint8
	Rule      *oftable.Rule
	Action    *ofp.Action
	Text      string
	Flow      *mf.Flow
	RecircID  uint32
	Ct        *odp.CtParams
	Sub       *ofp.Subfield
	Value     []byte
	// Skipped says a lookup's actions do not run (OFPPC_NO_RECV, a
	// packet the switch handles itself): no "drop" line for them.
	Skipped bool
}

// PacketIn is a packet-in a translation produced.
type PacketIn struct {
	// Bridge is the bridge whose controllers get it (translation may
	// have crossed a patch port); empty means the translating bridge.
	Bridge       string
	Reason       uint8
	TableID      uint8
	Cookie       uint64
	MaxLen       uint16
	ControllerID uint16
	Userdata     []byte
	// Continuation, when not nil, makes this a paused packet-in
	// (NXT_PACKET_IN2 with NXPINT_CONTINUATION) for NXT_RESUME.
	Continuation *Continuation
	// Flow is the pipeline state at the controller action (in_port is an
	// OpenFlow port).
	Flow mf.Flow
	Data []byte
}

// Packet-in reasons (OFPR_*), with Open vSwitch's two internal ones: an
// explicit miss is a controller action in a table-miss flow (priority 0,
// matching everything), an implicit miss a table miss that calls for a
// packet-in. The switch maps them to wire reasons per version.
const (
	ReasonNoMatch      = 0
	ReasonAction       = 1
	ReasonInvalidTTL   = 2
	ReasonActionSet    = 3
	ReasonGroup        = 4
	ReasonPacketOut    = 5
	ReasonExplicitMiss = 6
	ReasonImplicitMiss = 7
)

// Table-miss behaviours, per table (OpenFlow 1.1 and 1.2 table_mod).
const (
	// MissDefault drops, or sends a packet-in when a connection wants
	// them on table misses (SetMissPacketIn).
	MissDefault uint8 = iota
	MissController
	MissContinue
	MissDrop
)

// Out is a translation's result.
type Out struct {
	Actions odp.Actions
	// Mask is the megaflow mask in datapath terms.
	Mask flow.Mask
	// TunMeta, in a trace of a packet with raw Geneve options, is the
	// megaflow's tunnel metadata as tun_metadata fields of the bridge's
	// TLV table (Open vSwitch prints megaflows that way).
	TunMeta *TunMetaMatch
	// Rules are the rules matched, in order (statistics are credited to
	// each).
	Rules []*oftable.Rule
	// Groups are the groups and buckets run (group statistics).
	Groups []GroupUse
	// FinTimeouts are the fin_timeout actions run: a TCP FIN or RST
	// through the megaflow reduces their rules' timeouts.
	FinTimeouts []FinTimeout
	// PacketIns are produced only with In.SideEffects.
	PacketIns []PacketIn
	// Slow is set when the actions send packets to userspace (controller
	// actions), so every packet reaches the switch.
	Slow bool
	// Tables are the table lookups made, in order (table statistics).
	Tables []TableLookup
	// Final is the pipeline's flow at the end (set only when tracing).
	Final mf.Flow
	// Learned are the flows learn actions ask for (with side effects).
	Learned []LearnedFlow
	// MACs are the sources NORMAL learned per MAC address: learned
	// again whenever the megaflow is used (normal.go).
	MACs []MACUse
	// Err is why the translation stopped early; Actions are then a drop.
	Err error
	// NetFlowOutput is the OpenFlow output port NetFlow reports, or one
	// of NetFlowOutDrop, NetFlowOutMulti, NetFlowOutFlood.
	NetFlowOutput uint16
	// Injects are packets to send through a bridge (tunnel neighbour
	// requests), produced whatever SideEffects says.
	Injects []Inject
	// Patches are the patch ports every packet of the megaflow crosses
	// (their counters are credited with the megaflow's).
	Patches []PatchCrossing
	// Transient says the result depends on state being resolved (a
	// tunnel neighbour that is not known yet): no megaflow should be
	// installed, so that later packets come back, retransmit the request
	// at its pace and take the path as soon as it is known.
	Transient bool
	// SlowPath says every packet must be translated by userspace
	// (debug_slow), as Open vSwitch's SLOW_ACTION: no megaflow is
	// installed (Transient is set too) and ofproto/trace says why.
	SlowPath bool
	// Mirrors are the port mirrors every packet of the megaflow is sent
	// to, for their statistics (mirror.go).
	Mirrors []MirrorUse
	// BFD are the sessions the packet is a control packet for (on the
	// input port, or a patch peer's): the switch hands them the packet.
	BFD []*bfd.Session
	// CFM are the maintenance points the packet is a CCM for: the switch
	// hands them the packet.
	CFM []*cfm.Session
	// Bonds are the balanced bonds the packets leave through, with their
	// bucket hash, for the bonds' load accounting (bond.go).
	Bonds []BondUse
	// LACP are the members (with their bonds' LACP) the packet is a
	// LACPDU for: the switch hands it to them (special.go).
	LACP []*Port
	// STP are the spanning tree ports the packet is a BPDU for: the
	// switch hands it to them (stp.go).
	STP []*stp.Port
	// RSTP are the rapid spanning tree ports the packet is a BPDU for.
	RSTP []*rstp.Port
	// BFDRx are the sessions of the interfaces that receive the packets
	// (a tunnel input port, a patch peer): forwarding_if_rx counts them
	// (Open vSwitch's bfd_account_rx).
	BFDRx []*bfd.Session
	// SlowReason is Open vSwitch's slow_path_reason (odp.SlowBFD): the
	// actions are then the slow-path userspace action alone, and
	// SlowActions what the translation made, which the switch runs on
	// each packet that comes up (a patch port's other outputs, say).
	SlowReason  uint32
	SlowActions odp.Actions
}

// PatchCrossing is a pass from patch port Port of Bridge into its peer,
// PeerPort of PeerBridge.
type PatchCrossing struct {
	Bridge     string
	Port       uint16
	PeerBridge string
	PeerPort   uint16
}

// FinTimeout is a fin_timeout action of Rule: the idle and hard
// timeouts a FIN or RST reduces the rule's to.
type FinTimeout struct {
	Rule       *oftable.Rule
	Idle, Hard uint16
}

// ApplyFinTimeouts reduces the rules' timeouts if tcpFlags has FIN or RST, as
// Open vSwitch does for the packets a megaflow counts.
func ApplyFinTimeouts(fts []FinTimeout, tcpFlags uint16) {
	const fin, rst = 0x01, 0x04
	if tcpFlags&(fin|rst) == 0 {
		return
	}
	for _, ft := range fts {
		ft.Rule.ReduceTimeouts(ft.Idle, ft.Hard)
	}
}

// TableLookup is one table lookup of a translation, in bridge Bridge
// (a patch port's peer looks up its own tables).
type TableLookup struct {
	Bridge  string
	Table   uint8
	Matched bool
}

// ctx is one translation's state.
type ctx struct {
	x    *Xlator
	snap *Snapshot
	in   *In
	out  *Out
	v    uint64

	flow mf.Flow  // the pipeline's view of the packet
	base flow.Key // the packet as the datapath actions so far leave it
	wc   mf.Flow  // bits consulted
	// inODP is the datapath in_port, never changed by the pipeline.
	inODP uint32

	table     uint8
	rule      *oftable.Rule
	depth     int
	resubmits int
	// ctOrigLookup makes the next table lookup use the conntrack
	// original tuple (resubmit's ct variant).
	ctOrigLookup bool
	// tr records the trace (ofproto/trace) and its layout.
	tr tracer
	// last says the action being translated is the last of its list.
	last bool
	// peerClone makes the next lookup translate a non-reversible
	// rule's actions in a datapath clone (a patch port that is not the
	// last action).
	peerClone bool
	// noTail makes the next action list's last action not a tail call
	// (trace layout of check_pkt_len's first branch, as Open vSwitch).
	noTail bool
	// frames are the action lists being translated, outermost first
	// (a pause continues with what is left of each).
	frames []frame
	stack  [][]byte
	exit   bool
	err    error
	// aset is the OpenFlow action set (actset.go).
	aset actionSet
	// resumeFrames are the outer action lists of a continuation being
	// resumed, still to run after the current one.
	resumeFrames []ContinuationFrame
	// grp is the group translation (group.go); grp.nest and
	// aset.running say where an output to the controller is, for its
	// packet-in reason.
	grp groupXlate
	// patchBase is len(frames) when translation entered the current
	// patch peer (0 outside one): a continuation holds frames from it on.
	patchBase int
	// skipActions makes the next table lookup run no actions (a packet
	// from an OFPPC_NO_RECV port).
	skipActions bool
	// firstLookup marks the first table lookup of a translation.
	firstLookup bool
	// conntracked says ct ran on the packet (this pass or before the
	// recirculation that started it): only then does ct_clear act.
	conntracked bool
	smp         sampleState
	// tnl is the native tunnelling of the translation (tunnel.go).
	tnl tunnelXlate
	// mpls is the MPLS label stack handling (mpls.go).
	mpls mplsXlate
	// stopList ends the current action list only (dec_mpls_ttl).
	stopList bool
	// mir is the port mirroring of the translation (mirror.go).
	mir mirrorXlate
}

// Translate runs in through the bridge's pipeline.
func (x *Xlator) Translate(in *In, out *Out) {
	*out = Out{}
	// Removed rules stay in the classifiers until no translation of
	// the datapath (any bridge: patch ports) is running.
	x.Recirc.Readers.RLock()
	defer x.Recirc.Readers.RUnlock()
	c, _ := x.ctxs.Get().(*ctx)
	if c == nil {
		c = new(ctx)
	}
	defer func() {
		*c = ctx{} // as new: nothing of this translation outlives it
		x.ctxs.Put(c)
	}()
	c.x, c.snap, c.in, c.out, c.v, c.inODP = x, x.snap.Load(), in, out, x.Tables.Version(), in.Key.InPort
	c.mir.c = c
	c.smp.c = c
	c.tnl.c = c
	c.mpls.c = c
	c.grp.c = c
	c.aset.c = c
	c.tr.fn = in.Trace
	if in.Version != 0 {
		c.v = in.Version
	}
	c.flow.Key = in.Key
	c.base = in.Key
	// Always exact: in_port, recirc_id, packet_type, dl_type, and the
	// fragment bits of IP packets (xlate_wc_init).
	c.wc.InPort = ^uint32(0)
	c.wc.RecircID = ^uint32(0)
	c.wc.PacketType = ^uint32(0)
	c.wc.EthType = 0xffff
	if isIP(&c.flow.Key) {
		c.wc.NwFrag = flow.FragMask
	}
	start := uint8(0)
	resumeGroup := false
	var frozen Frozen
	c.flow.ActsetOutput = PortUnset
	// Zero for a datapath packet; a packet-out's, a resume's, or those
	// ofproto/trace was given (a recirculation restores its own below).
	c.flow.Regs, c.flow.Metadata = in.Regs, in.Metadata
	if in.OFActions != nil || in.Resume != nil {
		c.flow.InPort = uint32(in.InPort)
	} else {
		p := c.snap.ByODP[in.Key.InPort]
		switch {
		case p != nil:
			c.flow.InPort = uint32(p.OFPort)
		case c.tnl.receive():
		default:
			c.flow.InPort = PortNone
		}
		if in.Key.RecircID != 0 {
			fz, ok := x.Recirc.Get(in.Key.RecircID)
			if !ok {
				c.fail(ErrNoRecirc)
				c.finish()
				return
			}
			if fz.Bridge != c.snap.Bridge {
				// The pass froze in a patch peer: resume there.
				px := x.Recirc.bridge(fz.Bridge)
				if px == nil {
					c.fail(ErrNoRecirc)
					c.finish()
					return
				}
				c.switchBridge(px)
			}
			if fz.FromBridge != "" {
				c.out.Patches = append(c.out.Patches, PatchCrossing{fz.FromBridge, fz.FromPort, fz.Bridge, uint16(fz.InPort)})
			}
			fz.Restore(&c.flow)
			if err := c.aset.restore(fz.ActionSet); err != nil {
				c.fail(err)
			}
			c.conntracked = fz.Conntracked
			start = fz.Table
			resumeGroup = fz.HasGroup
			frozen = fz
		} else if in.Key.CtState&flow.CsTracked != 0 {
			// A packet tracked before it reached the switch (e.g. by
			// another bridge's pass) counts as conntracked, as in Open
			// vSwitch.
			c.conntracked = true
		}
	}
	c.tnl.wcInit()
	c.tnl.fromUDPIF()
	// A pass that entered a patch peer through NORMAL's recirculation is
	// Open vSwitch's patch_port_output into that port.
	patchEntry := in.Key.RecircID != 0 && frozen.FromBridge != ""
	if p := c.snap.Ports[Port16(c.flow.InPort)]; in.OFActions == nil && in.Resume == nil && p != nil && p.BFD != nil &&
		(in.Key.RecircID == 0 && p.Tunnel != nil || patchEntry) {
		c.out.BFDRx = append(c.out.BFDRx, p.BFD)
	}
	if in.OFActions == nil && in.Resume == nil && (in.Key.RecircID == 0 || patchEntry) && c.processSpecial(c.snap.Ports[Port16(c.flow.InPort)]) {
		// Handled by the switch (BFD): no pipeline and no sampling, but
		// the first table's rule of an input port is looked up and
		// counted, as Open vSwitch looks it up before process_special.
		if !patchEntry {
			c.tr.ind = 4
			c.skipActions, c.firstLookup = true, true
			c.lookupTable(start, true)
		}
		c.finish()
		return
	}
	c.smp.start()
	mirrorDrop := c.mir.start()
	switch {
	case in.Resume != nil:
		if in.Resume.Bridge != c.snap.Bridge {
			px := x.Recirc.bridge(in.Resume.Bridge)
			if px == nil {
				c.fail(ErrBadContinuation)
				break
			}
			c.switchBridge(px)
		}
		c.tr.ind = 4
		c.resume(in.Resume)
	case in.OFActions != nil:
		c.tr.ind = 4
		if !mirrorDrop {
			c.doActions(in.OFActions)
		}
	case resumeGroup:
		c.tr.ind, c.table = 4, start
		c.grp.resume(&frozen)
	case frozen.Rest != "":
		// debug_recirc: the rest of the action list it interrupted.
		c.tr.ind, c.table = 4, start
		if acts, err := decodeRest(frozen.Rest); err != nil {
			c.fail(err)
		} else {
			c.doActions(acts)
		}
	case in.Key.RecircID == 0 && x.failOpen.Load():
		c.tr.notef("fail-open: the controllers are unreachable, NORMAL for every packet")
		c.normal()
	default:
		c.tr.ind = 4
		// OFPPC_NO_RECV: the first table's rule (or miss) is looked up
		// and counted, but its actions do not run, as in Open vSwitch.
		inPort := c.snap.Ports[Port16(c.flow.InPort)]
		c.skipActions = c.noRecv() || mirrorDrop || !stpMayReceive(inPort) || !c.tnl.processECN()
		c.firstLookup = true
		c.lookupTable(start, true)
		c.aset.run()
		c.stpInputBlocked(inPort) // stp.go
		c.finish()
		return
	}
	c.aset.run()
	c.finish()
}

// noRecv reports whether the packet came in on a port configured with
// OFPPC_NO_RECV (packet-outs from the controller have no such port).
func (c *ctx) noRecv() bool {
	p := c.snap.Ports[uint16(c.flow.InPort)]
	return p != nil && p.NoRecv && c.flow.InPort < uint32(PortMax)
}

func isIP(k *flow.Key) bool { return k.EthType == flow.EthTypeIPv4 || k.EthType == flow.EthTypeIPv6 }

// tracer records a translation's steps for ofproto/trace, when In.Trace
// asks for them, at the column Open vSwitch prints them: ind is the
// column of the current action list.
type tracer struct {
	fn  func(ev *TraceEvent) // In.Trace; nil when not tracing
	ind int
}

// notef reports a note.
func (t *tracer) notef(format string, args ...any) {
	if t.fn != nil {
		t.fn(&TraceEvent{Kind: TraceNote, Indent: t.ind + 1, Text: fmt.Sprintf(format, args...)})
	}
}

// skipf reports an action that did nothing.
func (t *tracer) skipf(format string, args ...any) {
	if t.fn != nil {
		t.fn(&TraceEvent{Kind: TraceSkip, Indent: t.ind + 1, Text: fmt.Sprintf(format, args...)})
	}
}

// errorf reports why the translation fails (Open vSwitch's
// xlate_report_error).
func (t *tracer) errorf(format string, args ...any) {
	if t.fn != nil {
		t.fn(&TraceEvent{Kind: TraceError, Indent: t.ind + 1, Text: fmt.Sprintf(format, args...)})
	}
}

// maxStackBytes bounds the field stack as Open vSwitch does (64 kB of
// its entries: each the pushed field's bytes plus one).
const maxStackBytes = 65536

// stackBytes is the stack's size as Open vSwitch counts it.
func (c *ctx) stackBytes() int {
	n := 0
	for _, e := range c.stack {
		size := 16 // an entry a continuation brought back
		if cap(e) > 16 {
			size = int(e[:17][16])
		}
		n += size + 1
	}
	return n
}

// dropReasons are the explicit drop reasons (Open vSwitch's enum
// xlate_error) of the errors it shares with gvs; any other error drops
// as the pipeline's.
var dropReasons = map[error]uint32{
	ErrTooDeep:       odp.DropRecursionTooDeep,
	ErrTooManyResubs: odp.DropTooManyResubmits,
	ErrStackTooDeep:  odp.DropStackTooDeep,
	ErrNoRecirc:      odp.DropNoRecircContext,
	ErrTooManyMPLS:   odp.DropTooManyMPLSLabels,
}

// SetExplicitDrop makes translations that leave no datapath action end
// in an explicit drop action with the reason (Open vSwitch's
// put_drop_action, when the datapath supports explicit drops): the
// datapath counts dropped packets by reason.
func (x *Xlator) SetExplicitDrop(on bool) { x.explicitDrop.Store(on) }

// dropAction is the explicit drop for a translation that ended with err.
func dropAction(err error) odp.Action {
	for e, r := range dropReasons {
		if errors.Is(err, e) {
			return odp.DropFor(r)
		}
	}
	return odp.DropFor(odp.DropPipeline)
}

// reasons are Open vSwitch's names (xlate_strerror) of the errors it
// shares with gvs.
var reasons = map[error]string{
	ErrTooDeep:       "Recursion too deep",
	ErrTooManyResubs: "Too many resubmits",
	ErrStackTooDeep:  "Stack too deep",
	ErrNoRecirc:      "No recirculation context",
	ErrTooManyMPLS:   "Too many MPLS labels",
}

// logTexts are Open vSwitch's warnings (xlate_report_error) for the
// errors it shares with gvs.
var logTexts = map[error]string{
	ErrTooDeep:       "over max translation depth 64",
	ErrTooManyResubs: "over 4096 resubmit actions",
	ErrStackTooDeep:  "resubmits yielded over 64 kB of stack",
	ErrTooManyMPLS:   "dropping packet on which an MPLS push action can't be performed as it would have more MPLS LSEs than the 3 supported.",
}

// LogText is the warning Open vSwitch logs for a packet whose
// translation failed with err (before " on bridge B while processing
// FLOW"), or err's own text.
func LogText(err error) string {
	for e, t := range logTexts {
		if errors.Is(err, e) {
			return t
		}
	}
	return err.Error()
}

// Reason names a translation error as Open vSwitch's traces do ("Too
// many resubmits"), or gives its text when Open vSwitch has no such
// error.
func Reason(err error) string {
	for e, r := range reasons {
		if errors.Is(err, e) {
			return r
		}
	}
	return err.Error()
}

func (c *ctx) fail(err error) {
	if c.err == nil {
		c.err = err
	}
	c.exit = true
}

// finish builds the mask and applies Open vSwitch's last adjustments
// (xlate_wc_finish).
func (c *ctx) finish() {
	c.smp.finish()
	if c.err != nil {
		c.out.Err = c.err
		c.out.Actions = nil
	}
	k := &c.wc.Key
	// ICMP type and code are 8-bit in the datapath.
	if (c.flow.EthType == flow.EthTypeIPv4 && c.flow.NwProto == flow.IPProtoICMP) ||
		(c.flow.EthType == flow.EthTypeIPv6 && c.flow.NwProto == flow.IPProtoICMPv6) {
		k.TpSrc &= 0xff
		k.TpDst &= 0xff
	}
	for i := range k.VLANs {
		if k.VLANs[i].TCI != 0 {
			k.VLANs[i].TCI |= flow.VLANCFI
		}
		// A tag the packet has is always matched by its TPID (Open
		// vSwitch's outer eth_type is exact).
		if c.in.Key.VLANs[i].TCI&flow.VLANCFI != 0 {
			k.VLANs[i].TPID = 0xffff
		}
	}
	if c.in.Key.NwFrag&flow.FragLater != 0 {
		k.TpSrc, k.TpDst, k.TCPFlags = 0, 0, 0
	}
	// The label stack is matched only on packets that came with one
	// (push_mpls and set_field may have consulted it).
	if !odp.IsMPLS(c.in.Key.EthType) {
		k.MPLSLSE = 0
	}
	// A packet that did not come from a tunnel matches no tunnel field
	// (set_field may have consulted some).
	if c.in.Key.TunDst == 0 && c.in.Key.TunIPv6Dst == [16]byte{} {
		clearTunnel(k)
	}
	c.out.Mask = flow.Mask(*k)
	c.out.Mask.InPort = ^uint32(0)
	c.tnl.maskUDPIF(&c.out.Mask)
	if len(c.out.Actions) == 0 && c.x.explicitDrop.Load() {
		c.out.Actions = append(c.out.Actions, dropAction(c.err))
	}
	c.slowPath()
	if c.in.Trace != nil {
		c.out.Final = c.flow
	}
}

// lookupTable looks the flow up in table and runs the matching rule's
// actions; a miss applies the table-miss behaviour (drop, as Open vSwitch
// for OpenFlow 1.3+ and for tables other than 0; the switch reports
// no-match packet-ins through a controller action in its miss rule).
//
// A miss in a lookup that honours table-miss behaviour (everything but
// resubmit, as in Open vSwitch) applies the table's miss behaviour.
func (c *ctx) lookupTable(table uint8, tail bool) { c.lookupTableIn(table, tail, c.flow.InPort, true) }

// lookupTableIn is lookupTable with in_port inPort for the lookup only:
// the rule's actions see the pipeline's in_port (resubmit(port,table)).
func (c *ctx) lookupTableIn(table uint8, tail bool, inPort uint32, honorMiss bool) {
	if c.mpls.was {
		// The lookup could match the L3 header a pop_mpls exposed
		// (xlate_table_action): the next pass looks up instead.
		c.mpls.recircLookup()
		return
	}
	if c.depth >= MaxDepth {
		c.tr.errorf("over max translation depth %d", MaxDepth)
		c.fail(ErrTooDeep)
		return
	}
	if int(table) >= oftable.NumTables {
		return
	}
	oldIn := c.flow.InPort
	c.flow.InPort = inPort
	ctOrig := c.ctOrigLookup
	c.ctOrigLookup = false
	ipv4 := c.flow.Key.EthType == flow.EthTypeIPv4
	if ctOrig {
		swapCtTuple(&c.flow.Key, ipv4)
		swapCtTuple(&c.wc.Key, ipv4)
	}
	var r *oftable.Rule
	fragDrop := false
	if c.flow.Key.NwFrag&flow.FragAny != 0 && c.flow.Key.EthType != 0 {
		switch c.x.fragMode.Load() {
		case ofp.FragNormal:
			// Fragments are looked up as if they had no transport
			// ports (rule_dpif_lookup_from_table).
			sp, dp := c.flow.Key.TpSrc, c.flow.Key.TpDst
			c.flow.Key.TpSrc, c.flow.Key.TpDst = 0, 0
			r = c.x.Tables.Lookup(c.v, table, &c.flow, &c.wc)
			c.flow.Key.TpSrc, c.flow.Key.TpDst = sp, dp
		case ofp.FragDrop:
			fragDrop = true
		default:
			r = c.x.Tables.Lookup(c.v, table, &c.flow, &c.wc)
		}
	} else {
		r = c.x.Tables.Lookup(c.v, table, &c.flow, &c.wc)
	}
	packetIn := false
	// A trace names the table asked for, except for the first lookup of
	// a translation, which names the table that ended it (as Open
	// vSwitch, whose first lookup reports the table id it updated).
	shown := table
	if r == nil && honorMiss && !fragDrop {
		r, table, packetIn = c.miss(table)
	}
	if ctOrig {
		swapCtTuple(&c.flow.Key, ipv4)
		swapCtTuple(&c.wc.Key, ipv4)
	}
	if c.firstLookup {
		shown, c.firstLookup = table, false
	}
	c.out.Tables = append(c.out.Tables, TableLookup{Bridge: c.snap.Bridge, Table: table, Matched: r != nil || fragDrop})
	c.flow.InPort = oldIn
	oldInd := c.tr.ind
	line := c.tr.ind - 3
	if !tail {
		line, c.tr.ind = c.tr.ind+1, c.tr.ind+8
	}
	if c.in.Trace != nil {
		ev := &TraceEvent{Kind: TraceMiss, Indent: line, ActIndent: c.tr.ind, Table: shown, Rule: r, Skipped: c.skipActions}
		switch {
		case fragDrop:
			ev.Kind = TraceFragDrop
		case r != nil:
			ev.Kind = TraceRule
		case packetIn:
			ev.Kind = TraceMissPacketIn
		}
		c.in.Trace(ev)
	}
	skip, peerClone := c.skipActions, c.peerClone
	c.skipActions, c.peerClone = false, false
	if packetIn && !skip {
		oldTable, oldRule := c.table, c.rule
		c.table, c.rule = table, nil
		c.controller(ReasonImplicitMiss, 0xffff, 0, nil)
		c.table, c.rule = oldTable, oldRule
	}
	if r != nil {
		c.out.Rules = append(c.out.Rules, r)
		oldTable, oldRule := c.table, c.rule
		// As Open vSwitch, only going back to the same or an earlier
		// table deepens the recursion that the depth limit bounds.
		deepens := table <= c.table && c.rule != nil
		if deepens {
			c.depth++
		}
		c.table, c.rule = table, r
		switch {
		case skip:
		case peerClone && !reversible(r.Actions):
			c.dpClone(r.Actions)
		default:
			c.doActions(r.Actions)
		}
		if deepens {
			c.depth--
		}
		c.table, c.rule = oldTable, oldRule
	}
	c.tr.ind = oldInd
}

// miss applies the miss behaviour of table, where the lookup found
// nothing: continuing to the next tables (until one matches; the last
// table's behaviour applies after the last), a packet-in, or a drop. It
// returns the rule found, the table looked up last and whether a
// packet-in is called for.
func (c *ctx) miss(table uint8) (*oftable.Rule, uint8, bool) {
	for {
		switch c.x.TableMiss(table) {
		case MissContinue:
			// Table 254 is Open vSwitch's hidden internal table.
			if int(table)+1 < oftable.NumTables-1 {
				table++
				if r := c.x.Tables.Lookup(c.v, table, &c.flow, &c.wc); r != nil {
					return r, table, false
				}
				continue
			}
			fallthrough
		case MissController:
			p := c.snap.Ports[uint16(c.flow.InPort)]
			return nil, table, p != nil && !p.NoPacketIn
		case MissDefault:
			return nil, table, c.x.missPacketIn.Load()
		}
		return nil, table, false
	}
}

// doActions runs an OpenFlow action list.
func (c *ctx) doActions(acts []ofp.Action) {
	var cookie uint64
	if c.rule != nil {
		cookie = c.rule.Cookie
	}
	c.frames = append(c.frames, frame{acts: acts, table: c.table, cookie: cookie})
	defer func() { c.frames = c.frames[:len(c.frames)-1] }()
	tailOK := !c.noTail
	c.noTail = false
	for i := range acts {
		if c.exit {
			return
		}
		a := &acts[i]
		c.last = i == len(acts)-1 && tailOK
		c.frames[len(c.frames)-1].i = i
		if c.mpls.was && needsMPLSRecirc(a) {
			c.mpls.recirc(i)
			return
		}
		if c.in.Trace != nil {
			c.in.Trace(&TraceEvent{Kind: TraceAction, Indent: c.tr.ind, Action: a})
		}
		if h := hookOf(a.Type); h != nil {
			h(c, a)
		} else {
			c.tr.notef("unsupported action %s", a.Raw)
			c.fail(fmt.Errorf("%w: %s", ErrUnsupported, a.Raw))
		}
		if c.stopList {
			c.stopList = false
			return
		}
	}
}

// resubmit implements resubmit(port,table) and its ct variant.
func resubmit(c *ctx, a *ofp.Action) {
	c.resubmits++
	if c.resubmits > MaxResubmits {
		c.tr.errorf("over %d resubmit actions", MaxResubmits)
		c.fail(ErrTooManyResubs)
		return
	}
	if len(c.stack)*17 >= maxStackBytes && c.stackBytes() >= maxStackBytes {
		c.tr.errorf("resubmits yielded over 64 kB of stack")
		c.fail(ErrStackTooDeep)
		return
	}
	table := a.Table
	if table == 255 {
		table = c.table
	}
	in := c.flow.InPort
	if port := Port16(a.Port); port != PortInPort {
		in = uint32(port)
	}
	if a.Raw == ofp.RawActNXAST_RESUBMIT_TABLE_CT {
		// resubmit(,T,ct): the lookup sees the conntrack original
		// tuple in place of the packet's L3/L4 fields.
		if c.flow.Key.CtNwProto == 0 || !isIP(&c.flow.Key) {
			c.tr.notef("resubmit(ct) with non-tracked or non-IP packet!")
			return
		}
		c.ctOrigLookup = true
	}
	c.lookupTableIn(table, c.last, in, false)
}

// swapCtTuple exchanges the packet's and the conntrack original tuple's
// L3/L4 fields, in the flow and in the consulted bits alike (so that
// bits the lookup consults on the tuple un-wildcard the ct_* fields).
func swapCtTuple(k *flow.Key, ipv4 bool) {
	k.NwProto, k.CtNwProto = k.CtNwProto, k.NwProto
	if ipv4 {
		k.NwSrc, k.CtNwSrc = k.CtNwSrc, k.NwSrc
		k.NwDst, k.CtNwDst = k.CtNwDst, k.NwDst
	} else {
		k.IPv6Src, k.CtIPv6Src = k.CtIPv6Src, k.IPv6Src
		k.IPv6Dst, k.CtIPv6Dst = k.CtIPv6Dst, k.IPv6Dst
	}
	k.TpSrc, k.CtTpSrc = k.CtTpSrc, k.TpSrc
	k.TpDst, k.CtTpDst = k.CtTpDst, k.TpDst
}

// emit appends a datapath action.
func (c *ctx) emit(a odp.Action) {
	if a.Kind == odp.KindSetMasked {
		// A masked set carries key&mask (the kernel refuses other bits).
		for i := range a.Set.Val {
			a.Set.Val[i] &= a.Set.Mask[i]
		}
	}
	c.out.Actions = append(c.out.Actions, a)
}

// output sends the packet to an OpenFlow port.
func (c *ctx) output(port uint16, maxLen uint16) {
	switch port {
	case PortInPort:
		p := c.snap.Ports[uint16(c.flow.InPort)]
		switch {
		case p != nil && p.NoFwd:
			c.tr.notef("OFPPC_NO_FWD set, skipping output")
		case p != nil && c.stpSkipOutput(p):
		case p != nil && p.PeerBridge != "":
			c.patch(p)
		case p != nil && p.Tunnel != nil:
			c.mir.tunnelOutput(p)
		case p != nil && p.ODP != NoODP:
			c.outputPort(p)
		default:
			c.tr.notef("IN_PORT: input port %d has no datapath port", c.flow.InPort)
		}
	case PortTable:
		if c.in.OFActions != nil {
			c.lookupTable(0, c.last)
		}
	case PortNormal:
		c.normal()
	case PortFlood, PortAll:
		c.commit()
		last := c.last
		c.last = false
		for _, p := range c.snap.Sorted {
			if (p.ODP == NoODP && p.PeerBridge == "") || uint32(p.OFPort) == c.flow.InPort || (port == PortFlood && p.NoFlood) {
				continue
			}
			if p.NoFwd {
				c.tr.notef("OFPPC_NO_FWD set, skipping output")
				continue
			}
			if c.stpSkipOutput(p) {
				continue
			}
			if p.PeerBridge != "" {
				c.patch(p)
				continue
			}
			if p.Tunnel != nil {
				c.mir.tunnelOutput(p)
				continue
			}
			c.smp.output(p.ODP)
			c.emit(odp.Output(p.ODP))
			c.mir.egress(p)
		}
		c.last = last
		c.smp.flood(true)
	case PortController:
		// OpenFlow 1.4's refinements of "action" (each connection's
		// version maps them back: ofswitch's wireReason).
		reason := uint8(ReasonAction)
		switch {
		case c.in.OFActions != nil:
			reason = ReasonPacketOut
		case c.grp.nest > 0 && len(c.frames) == c.grp.frames:
			// Only an output in the bucket's own actions; one in a
			// table a bucket resubmitted to is an "action".
			reason = ReasonGroup
		case c.aset.running:
			reason = ReasonActionSet
		}
		c.controller(reason, maxLen, 0, nil)
	case PortNone:
	default:
		if uint32(port) == c.flow.InPort {
			c.tr.skipf("skipping output to input port")
			return
		}
		p := c.snap.Ports[port]
		if p == nil {
			c.tr.skipf("Nonexistent output port")
			return
		}
		if p.NoFwd {
			c.tr.notef("OFPPC_NO_FWD set, skipping output")
			return
		}
		if c.stpSkipOutput(p) {
			return
		}
		if p.PeerBridge != "" {
			c.patch(p)
			return
		}
		if p.Tunnel != nil {
			c.mir.tunnelOutput(p)
			return
		}
		if p.ODP == NoODP {
			c.tr.notef("output to port %d without a datapath port", port)
			return
		}
		c.outputPort(p)
	}
}

// outputPort outputs to a port with a datapath port of its own, unless
// the packet is a tunnel packet arriving for the port's address.
func (c *ctx) outputPort(p *Port) {
	if c.tnl.terminate(p) {
		c.mir.egress(p)
		return
	}
	c.outputODP(p.ODP)
	c.mir.egress(p)
}

// switchBridge makes translation continue with another bridge's tables
// and ports.
func (c *ctx) switchBridge(x *Xlator) {
	c.x, c.snap, c.v = x, x.snap.Load(), x.Tables.Version()
}

// patch crosses a patch port: the peer bridge's pipeline runs from table
// 0 with in_port the peer port and fresh registers and metadata, as Open
// vSwitch's patch_port_output; afterwards this bridge's state returns.
func (c *ctx) patch(p *Port) {
	px := c.x.Recirc.bridge(p.PeerBridge)
	if px == nil {
		c.tr.notef("patch port %s: peer bridge %s not found", p.Name, p.PeerBridge)
		return
	}
	c.out.Patches = append(c.out.Patches, PatchCrossing{c.snap.Bridge, p.OFPort, p.PeerBridge, p.PeerPort})
	last := c.last
	saveX, saveSnap, saveV := c.x, c.snap, c.v
	saveFlow, saveTable, saveRule, saveStack := c.flow, c.table, c.rule, c.stack
	saveDeep, saveWasMPLS := c.mpls.deep, c.mpls.was
	saveMirrors, ownMirrors := c.mir.enterPeer(px)
	// A pause in the peer freezes only the peer's actions; this bridge
	// goes on after the patch port (Open vSwitch finishes freezing in
	// patch_port_output).
	savePatchBase := c.patchBase
	c.patchBase = len(c.frames)
	c.switchBridge(px)
	saveInd := c.tr.ind
	c.tr.ind = 4
	if c.in.Trace != nil {
		c.in.Trace(&TraceEvent{Kind: TraceBridge, Text: px.snap.Load().Bridge})
	}
	c.flow.InPort = uint32(p.PeerPort)
	c.flow.Regs, c.flow.Metadata, c.flow.ActsetOutput = [mf.NumRegs]uint32{}, 0, PortUnset
	c.stack = nil
	// The peer's pipeline has an action set of its own.
	saveSet, saveSetGroup := c.aset.acts, c.aset.hasGroup
	c.aset.acts, c.aset.hasGroup = nil, false
	pp := c.snap.Ports[p.PeerPort]
	if pp != nil && pp.BFD != nil {
		c.out.BFDRx = append(c.out.BFDRx, pp.BFD)
	}
	if c.processSpecial(pp) {
		// A BFD control packet for the peer port: the switch takes it.
	} else if pp == nil || !pp.NoRecv && stpMayReceive(pp) {
		// Unless the patch port is the last output, the first rule's
		// actions go into a datapath clone when later set actions could
		// not undo them (ct, meter, nat: Open vSwitch's
		// clone_xlate_actions for patch ports).
		c.peerClone = !last
		n := len(c.out.Actions)
		c.lookupTable(0, true)
		c.aset.run()
		if !stpForwards(pp) {
			// Learning, not forwarding: NORMAL looked, nothing goes.
			c.out.Actions = c.out.Actions[:n]
		}
	}
	c.aset.acts, c.aset.hasGroup = saveSet, saveSetGroup
	c.patchBase = savePatchBase
	c.x, c.snap, c.v = saveX, saveSnap, saveV
	c.mir.leavePeer(saveMirrors, ownMirrors)
	// This bridge's view of the packet comes back; what the peer
	// committed stays in the datapath actions, and a later commit here
	// restores headers the peer changed, as Open vSwitch does.
	c.flow, c.mpls.deep, c.mpls.was = saveFlow, saveDeep, saveWasMPLS
	c.table, c.rule, c.stack = saveTable, saveRule, saveStack
	c.tr.ind = saveInd
	if c.err == nil {
		c.exit = false
	}
}

func (c *ctx) outputODP(no uint32) {
	c.commit()
	c.smp.output(no)
	if n := c.mir.snaplen; n != 0 && n != 0xffff {
		// A mirror's snaplen truncates this copy only.
		c.emit(odp.Trunc(uint32(n)))
	}
	c.emit(odp.Output(no))
}

// controller sends the packet to the controllers: with side effects a
// packet-in is produced now, and the datapath actions get a userspace
// action so that every later packet of the megaflow comes back here.
func (c *ctx) controller(reason uint8, maxLen uint16, id uint16, userdata []byte) {
	c.controllerPause(reason, maxLen, id, userdata, false, ofp.NoMeter)
}

// controllerPause is controller(); with pause the translation stops here
// and the packet-in carries a continuation of the rest. An unpaused
// packet-in passes through the datapath meter of meterID or of the
// controller meter (controllerMeter): sample(100%,actions(meter,userspace)).
func (c *ctx) controllerPause(reason uint8, maxLen uint16, id uint16, userdata []byte, pause bool, meterID uint32) {
	c.commit()
	if reason == ReasonAction && c.rule != nil && c.rule.Priority == 0 && c.rule.IsCatchAll() {
		reason = ReasonExplicitMiss
	}
	c.out.Slow = true
	// The datapath action is Open vSwitch's: a userspace action whose
	// controller cookie names a frozen copy of the pipeline state. A
	// trace marks it dont_send; a paused translation has none in a trace
	// (as Open vSwitch, which emits it only when it may send).
	if !pause || c.in.Trace == nil {
		fz := freeze(c.snap.Bridge, c.table, &c.flow)
		fz.Conntracked = c.conntracked
		if !pause {
			fz.Userdata = string(userdata)
		}
		ck := odp.Cookie{Type: odp.CookieController, InPort: 0xffff, DontSend: c.in.Trace != nil, Continuation: pause,
			Reason: uint16(reason), RecircID: c.x.Recirc.ID(fz), ControllerID: id, MaxLen: maxLen}
		if c.rule != nil {
			ck.RuleCookie = c.rule.Cookie
		}
		us := odp.Userspace(0, odp.UserspaceParams{Userdata: ck.Marshal()})
		if dp, ok := c.x.controllerMeter(meterID); ok && !pause {
			c.emit(odp.Sample(math.MaxUint32, odp.Actions{odp.Meter(dp), us}))
		} else {
			c.emit(us)
		}
	}
	var cont *Continuation
	if pause {
		cont = c.continuation()
		c.exit = true
	}
	if !c.in.SideEffects || c.in.Packet == nil {
		return
	}
	pi := PacketIn{Bridge: c.snap.Bridge, Reason: reason, TableID: c.table, MaxLen: maxLen, ControllerID: id, Userdata: userdata, Flow: c.flow, Continuation: cont}
	switch {
	case c.rule != nil:
		pi.Cookie = c.rule.Cookie
	case c.in.OFActions != nil && reason != ReasonImplicitMiss:
		// A packet-out's own actions come from no rule: all ones, as
		// in Open vSwitch. A table miss is its miss rule's (cookie 0).
		pi.Cookie = ^uint64(0)
	}
	pi.Data = c.packetNow()
	c.out.PacketIns = append(c.out.PacketIns, pi)
}

// IsControllerCookie reports whether userspace userdata came from a
// controller action (the switch then translates the packet again with
// side effects to make its packet-ins).
func IsControllerCookie(b []byte) bool {
	ck, ok := odp.ParseCookie(b)
	return ok && ck.Type == odp.CookieController
}

// packetNow returns the packet's bytes with the header changes made so far
// applied.
func (c *ctx) packetNow() []byte {
	var acts odp.Actions
	for _, a := range c.out.Actions {
		switch a.Kind {
		case odp.KindSet, odp.KindSetMasked, odp.KindPushVLAN, odp.KindPopVLAN, odp.KindPushMPLS, odp.KindPopMPLS:
			acts = append(acts, a)
		}
	}
	return applyHeaderActions(c.in.Packet, acts)
}
