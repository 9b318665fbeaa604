package upcall

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// Switch is what the upcall layer needs of the OpenFlow switch that owns
// it: the work a translation leaves to the switch (packet-ins, learned
// flows, BFD, flow export). The switch implements it; the handler calls it
// on datapath worker goroutines (Miss, Userspace) and on the revalidator.
type Switch interface {
	// SendPacketIns delivers packet-ins to the controllers that want
	// them.
	SendPacketIns(pis []xlate.PacketIn)
	// ApplyFlowMods commits flow_mods (learned flows) in one transaction,
	// sending the flow_removed messages it causes.
	ApplyFlowMods(fms []*oftable.FlowMod) error
	// SlowPath handles a slow-path megaflow's packet
	// (userspace(slow_path(...)): BFD control packets).
	SlowPath(u *dpif.Upcall)
	// Sample hands a sampling userspace action's packet to its flow
	// exporter; it reports false if the userdata is not a sampling
	// cookie.
	Sample(u *dpif.Upcall) bool
	// NetFlowAccount credits a megaflow's packets (translated from key,
	// with NetFlow output port out) to its NetFlow flow; NetFlowExpire
	// exports and forgets it once the megaflow is deleted.
	NetFlowAccount(key *flow.Key, out uint16, packets, bytes uint64, tcpFlags uint16, used time.Time)
	NetFlowExpire(key *flow.Key)
}

// Config creates a Handler.
type Config struct {
	// Name is the bridge's name, for log messages.
	Name string
	// DP is the bridge's datapath; nil: misses are translated but no
	// revalidation runs (a switch without a datapath, in unit tests).
	DP dpif.Datapath
	// Xlator is the bridge's translator; Tables its flow tables
	// (Xlator.Tables).
	Xlator *xlate.Xlator
	// Recirc is shared by the bridges of one datapath: it finds a
	// frozen translation's state and the other bridges' translators.
	Recirc *xlate.RecircTable
	// FlowLimit is the datapath's dynamic megaflow limit, shared by the
	// bridges of one datapath; nil: the handler keeps its own.
	FlowLimit *FlowLimit
	// Changes is the datapath's change sequence, shared by the bridges
	// of one datapath (changes.go); nil: the handler keeps its own.
	Changes *Changes
	// RevalidateInterval bounds how stale megaflow statistics and
	// megaflows of unchanged tables get (default 500ms).
	RevalidateInterval time.Duration
	// Logf receives warnings; nil discards them.
	Logf func(format string, args ...any)
	// XlateWarn, if not nil, reports a packet whose translation failed
	// (at most one a second) instead of Logf.
	XlateWarn func(key *flow.Key, err error)
	// Switch receives the switch's share of the work; required.
	Switch Switch
}

// Handler is one bridge's upcall handler and revalidator, as Open
// vSwitch's udpif for one ofproto: it implements dpif.UpcallHandler for
// the misses and userspace upcalls of the bridge's ports, remembers the
// megaflows it installed (ukeys), and runs revalidation rounds.
type Handler struct {
	cfg    Config
	xl     *xlate.Xlator
	tables *oftable.Tables
	// misses recycles a miss's translation input and output (Miss runs
	// on every datapath worker).
	misses sync.Pool

	// revPaused is revalidator/pause; megaflowsOff upcall/disable-megaflows.
	revPaused, megaflowsOff atomic.Bool
	// fullDumps is upcall/disable-ufid: the revalidator's dumps carry
	// the flows' keys (only the dpif debug log shows the difference).
	fullDumps atomic.Bool
	// restoreWait is other_config:flow-restore-wait: no revalidation
	// round changes megaflows while it is set (restorewait.go).
	restoreWait atomic.Bool

	// revDone is the change sequence the last revalidation round
	// covered; barriers wait on revCond for it.
	revMu   sync.Mutex
	revCond *sync.Cond
	revDone uint64

	ukeys ukeyMap
	// patch are the bridge's patch ports' counters (patchstats.go).
	patch patchStats
	// flowLimit is the dynamic megaflow limit (flowlimit.go).
	flowLimit *FlowLimit
	// changes counts table and port changes of every bridge of the
	// datapath; revalidation compares it.
	changes *Changes
	wake    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	stats struct {
		upcalls, revalidated, deleted atomic.Uint64
	}
	// lastXlateWarn rate-limits translation warnings (UnixNano).
	lastXlateWarn atomic.Int64
}

var (
	_ dpif.UpcallHandler = (*Handler)(nil)
	_ xlate.Owner        = (*Handler)(nil)
)

// New returns a bridge's handler, registered as its translator's owner.
// Start starts its revalidator.
func New(cfg Config) *Handler {
	if cfg.RevalidateInterval <= 0 {
		cfg.RevalidateInterval = 500 * time.Millisecond
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Recirc == nil {
		cfg.Recirc = cfg.Xlator.Recirc
	}
	h := &Handler{cfg: cfg, xl: cfg.Xlator, tables: cfg.Xlator.Tables, wake: make(chan struct{}, 1)}
	h.revCond = sync.NewCond(&h.revMu)
	h.ukeys.init()
	if cfg.DP != nil {
		if cfg.FlowLimit == nil {
			cfg.FlowLimit = NewFlowLimit(cfg.DP.ConfiguredFlowLimit())
			h.cfg.FlowLimit = cfg.FlowLimit
		}
		h.flowLimit = cfg.FlowLimit
	}
	h.changes = cfg.Changes
	if h.changes == nil {
		h.changes = NewChanges()
	}
	h.changes.join(h)
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.xl.Owner = h
	return h
}

// Changes returns the change sequence the handler shares.
func (h *Handler) Changes() *Changes { return h.changes }

// Start starts the revalidator goroutine.
func (h *Handler) Start() {
	h.wg.Add(1)
	go h.revalidator()
}

// Close stops the revalidator and waits for it.
func (h *Handler) Close() {
	h.changes.leave(h)
	h.cancel()
	h.wg.Wait()
}

// Changed bumps the change sequence and wakes the revalidators of every
// bridge of the datapath: every megaflow made before is translated again
// in the next round. The switch calls it after every table, port or
// setting change translation reads.
func (h *Handler) Changed() { h.changes.bump() }

// Counters are a handler's counts.
type Counters struct {
	Upcalls, Revalidated, MegaflowsDeleted uint64
	// Ukeys is the number of megaflows the handler tracks.
	Ukeys int
}

// Counters returns the handler's counts.
func (h *Handler) Counters() Counters {
	h.ukeys.mu.Lock()
	n := len(h.ukeys.m)
	h.ukeys.mu.Unlock()
	return Counters{Upcalls: h.stats.upcalls.Load(), Revalidated: h.stats.revalidated.Load(),
		MegaflowsDeleted: h.stats.deleted.Load(), Ukeys: n}
}

// FlowLimit returns the handler's (its datapath's) dynamic flow limit;
// nil without a datapath.
func (h *Handler) FlowLimit() *FlowLimit { return h.flowLimit }

// SendPacketIns implements xlate.Owner: packet-ins a translation that
// started in another bridge made in this one's pipeline.
func (h *Handler) SendPacketIns(pis []xlate.PacketIn) { h.cfg.Switch.SendPacketIns(pis) }

// ukey is what the switch remembers of an installed megaflow.
type ukey struct {
	key     flow.Key // the key it was translated from
	mask    flow.Mask
	actions odp.Actions
	rules   []*oftable.Rule
	tables  []xlate.TableLookup
	// learned are the flows the megaflow's learn actions install; they
	// are (re)applied whenever packets hit it.
	learned []xlate.LearnedFlow
	// fins are the megaflow's fin_timeout actions.
	fins []xlate.FinTimeout
	// groups are the groups (and buckets) its packets go through.
	groups []xlate.GroupUse
	// patches are the patch ports its packets cross.
	patches []xlate.PatchCrossing
	// mirrors are the port mirrors its packets are sent to.
	mirrors []xlate.MirrorUse
	// bonds are the balanced bonds its packets leave through.
	bonds []xlate.BondUse
	// bfdRx are the BFD sessions whose interfaces receive its packets.
	bfdRx []*bfd.Session
	// macs are the sources NORMAL learns from its packets.
	macs []xlate.MACUse
	seq  uint64 // change sequence at translation
	// pushed are the megaflow counters already credited to rules.
	pushedPackets, pushedBytes uint64
	// missed counts revalidation rounds that did not find the megaflow.
	missed int
	// nfOut is the NetFlow output port of the translation.
	nfOut uint16
	// created is when the miss made it (idle time of a megaflow never
	// used since).
	created time.Time
}

type ukeyMap struct {
	mu sync.Mutex
	m  map[dpif.UFID]*ukey
	// reval serializes revalidation rounds (the revalidator and
	// `revalidator/wait`): two at once would push the same statistics
	// twice.
	reval sync.Mutex
	// inflight counts misses being translated: their ukeys are not in m
	// yet, and may come from tables older than a change.
	inflight atomic.Int64
	// urgent makes the next round skip the coalescing delay (a barrier
	// is waiting for it).
	urgent atomic.Bool
}

// idle reports whether no megaflow exists or is being made, so that no
// megaflow can be stale.
func (u *ukeyMap) idle() bool {
	if u.inflight.Load() != 0 {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.m) == 0
}

func (u *ukeyMap) init() { u.m = map[dpif.UFID]*ukey{} }

// newUkey is the ukey of a megaflow translated from key at seq.
func newUkey(key *flow.Key, out *xlate.Out, seq uint64) *ukey {
	uk := &ukey{key: *key, mask: out.Mask, actions: out.Actions, seq: seq, created: time.Now()}
	uk.take(out)
	return uk
}

// take records what a translation of the ukey's megaflow credits and
// applies with its statistics.
func (uk *ukey) take(out *xlate.Out) {
	uk.rules, uk.tables, uk.learned, uk.fins, uk.nfOut, uk.patches = out.Rules, out.Tables, out.Learned, out.FinTimeouts, out.NetFlowOutput, out.Patches
	uk.mirrors, uk.groups, uk.bfdRx, uk.bonds, uk.macs = out.Mirrors, out.Groups, out.BFDRx, out.Bonds, out.MACs
}

// missScratch is a miss's translation input and output.
type missScratch struct {
	in  xlate.In
	out xlate.Out
}

// Miss handles a datapath miss (dpif.UpcallHandler): translate, reply with
// the megaflow, send the packet-ins the translation produced.
func (h *Handler) Miss(u *dpif.Upcall, r *dpif.MissReply) error {
	h.stats.upcalls.Add(1)
	h.ukeys.inflight.Add(1)
	defer h.ukeys.inflight.Add(-1)
	seq := h.changes.seq.Load()
	sc, _ := h.misses.Get().(*missScratch)
	if sc == nil {
		sc = new(missScratch)
	}
	defer func() {
		*sc = missScratch{} // the ukey and the reply keep what they need
		h.misses.Put(sc)
	}()
	in, out := &sc.in, &sc.out
	*in = xlate.In{Key: *u.Key, Packet: u.Packet, SideEffects: true}
	h.xl.Translate(in, out)
	if h.megaflowsOff.Load() {
		out.Mask = flow.PacketMask(u.Key)
	}
	if out.Err != nil {
		// At most one warning a second: a bad pipeline fails every
		// packet.
		now := time.Now().UnixNano()
		if last := h.lastXlateWarn.Load(); now-last > int64(time.Second) && h.lastXlateWarn.CompareAndSwap(last, now) {
			if h.cfg.XlateWarn != nil {
				h.cfg.XlateWarn(u.Key, out.Err)
			} else {
				h.cfg.Logf("%s: translation: %v", h.cfg.Name, out.Err)
			}
		}
	}
	r.Actions = out.Actions
	r.Mask = out.Mask
	r.Install = true

	m := flow.Match{Key: *u.Key, Mask: out.Mask}
	m.Normalize()
	r.UFID = dpif.UFIDFromMatch(&m)
	if out.Transient || (h.flowLimit != nil && !h.flowLimit.Admit(h.cfg.DP.FlowCount())) {
		// A tunnel neighbour being resolved, or over the dynamic flow
		// limit: the datapath executes the actions on this packet
		// without installing a megaflow.
		r.Install = false
	} else {
		h.ukeys.mu.Lock()
		uk := h.ukeys.m[r.UFID]
		if uk == nil {
			uk = newUkey(u.Key, out, seq)
			h.ukeys.m[r.UFID] = uk
		}
		h.ukeys.mu.Unlock()
		if u.Packet != nil {
			h.cfg.Switch.NetFlowAccount(&uk.key, uk.nfOut, 1, uint64(u.Packet.Len()), u.Key.TCPFlags, time.Now())
		}
	}
	// The datapath executes this packet without counting it in the
	// megaflow (as Open vSwitch's): its rules are credited here.
	h.creditUpcall(out, u)
	xlate.ApplyFinTimeouts(out.FinTimeouts, u.Key.TCPFlags)
	// A megaflow with controller actions sends its packets to userspace
	// (Userspace makes their packet-ins), this one included: the
	// datapath runs the installed actions on it.
	if !out.Slow {
		h.cfg.Switch.SendPacketIns(out.PacketIns)
	}
	h.ApplyLearned(out.Learned)
	h.Inject(out.Injects)
	if h.xl.MACTableChanged() {
		// NORMAL learned an address: megaflows that flooded to it, or
		// sent it elsewhere, are translated again.
		h.Changed()
	}
	return nil
}

// ApplyLearned installs the flows learn actions produced, remembering
// which learning rule made them (for delete_learned and limit).
func (h *Handler) ApplyLearned(lfs []xlate.LearnedFlow) {
	if len(lfs) == 0 {
		return
	}
	fms := make([]*oftable.FlowMod, 0, len(lfs))
	now := time.Now()
	for i := range lfs {
		lf := &lfs[i]
		if h.refresh(lf, now) || !h.underLimit(lf) {
			continue
		}
		fms = append(fms, flowMod(lf))
	}
	if len(fms) == 0 {
		return
	}
	if err := h.cfg.Switch.ApplyFlowMods(fms); err != nil {
		h.cfg.Logf("%s: learn: %v", h.cfg.Name, err)
	}
}

// Userspace handles a userspace() action's upcall: a controller action in
// an installed megaflow. The packet is translated again, with side
// effects, to produce its packet-ins (the datapath already ran the
// megaflow's other actions).
func (h *Handler) Userspace(u *dpif.Upcall) {
	if u.Action != nil && u.Action.Userspace != nil && xlate.IsSlowPathCookie(u.Action.Userspace.Userdata) {
		h.cfg.Switch.SlowPath(u)
		return
	}
	if u.Action != nil && u.Action.Userspace != nil && h.cfg.Switch.Sample(u) {
		return
	}
	if u.Action == nil || u.Action.Userspace == nil || !xlate.IsControllerCookie(u.Action.Userspace.Userdata) {
		return
	}
	if h.frozenPacketIn(u) {
		return
	}
	in := xlate.In{Key: *u.Key, Packet: u.Packet, SideEffects: true}
	var out xlate.Out
	h.xl.Translate(&in, &out)
	h.cfg.Switch.SendPacketIns(out.PacketIns)
	h.ApplyLearned(out.Learned)
}

// frozenPacketIn makes the packet-in of a datapath controller action
// from the state its cookie froze, as Open vSwitch's CONTROLLER_UPCALL:
// the packet as the datapath actions before it left it, the pipeline
// fields and userdata of the moment of the controller action. (Translating
// the packet again would start from its modified headers.) It reports
// false when the cookie needs a translation (a continuation). A freeze in
// a patch peer's pipeline sends the packet-in to that bridge's
// controllers.
func (h *Handler) frozenPacketIn(u *dpif.Upcall) bool {
	ck, ok := odp.ParseCookie(u.Action.Userspace.Userdata)
	if !ok || ck.Continuation {
		return false
	}
	if ck.DontSend {
		return true
	}
	fz, ok := h.cfg.Recirc.Get(ck.RecircID)
	if !ok {
		return false
	}
	pi := xlate.PacketIn{Bridge: fz.Bridge, Reason: uint8(ck.Reason), TableID: fz.Table, Cookie: ck.RuleCookie, MaxLen: ck.MaxLen,
		ControllerID: ck.ControllerID}
	if fz.Userdata != "" {
		pi.Userdata = []byte(fz.Userdata)
	}
	pi.Flow.Key = *u.Key
	if !fz.Conntracked {
		k := &pi.Flow.Key
		k.CtState, k.CtZone, k.CtMark, k.CtLabel = 0, 0, 0, [16]byte{}
		clearCtTuple(k)
	}
	fz.Restore(&pi.Flow)
	if u.Packet != nil {
		pi.Data = append([]byte(nil), u.Packet.Data()...)
	}
	h.cfg.Switch.SendPacketIns([]xlate.PacketIn{pi})
	return true
}

// clearCtTuple zeroes the original-direction tuple fields.
func clearCtTuple(k *flow.Key) {
	k.CtNwProto, k.CtNwSrc, k.CtNwDst, k.CtTpSrc, k.CtTpDst = 0, 0, 0, 0, 0
	k.CtIPv6Src, k.CtIPv6Dst = [16]byte{}, [16]byte{}
}

// Inject sends packets translation asked for (tunnel neighbour requests)
// through their bridges, as packet-outs to OFPP_TABLE from the given
// port.
func (h *Handler) Inject(injs []xlate.Inject) {
	for _, inj := range injs {
		x := h.cfg.Recirc.Bridge(inj.Bridge)
		if x == nil || h.cfg.DP == nil {
			continue
		}
		snap := x.Snapshot()
		p := snap.Ports[inj.InPort]
		if p == nil {
			continue
		}
		pkt := packet.FromBytes(inj.Data)
		var in xlate.In
		flow.Extract(pkt, &in.Key)
		in.Key.InPort = p.ODP
		pkt.Md.InPort = p.ODP
		in.Packet = pkt
		in.OFActions, in.InPort = []ofp.Action{{Type: ofp.ActOutput, Port: uint32(xlate.PortTable)}}, inj.InPort
		var out xlate.Out
		x.Translate(&in, &out)
		if out.Err == nil && len(out.Actions) > 0 {
			_ = h.cfg.DP.Execute(pkt, out.Actions)
		}
	}
}
