package ofswitch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/flowexport/ipfix"
	"github.com/gvs-project/gvs/ofproto/flowexport/netflow"
	"github.com/gvs-project/gvs/ofproto/flowexport/sflow"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// FlowExportConfig is a bridge's flow export configuration; nil members
// are off.
type FlowExportConfig struct {
	NetFlow *netflow.Config
	SFlow   *sflow.Config
	// IPFIX is the per-bridge sampling exporter, sampling 1 in
	// IPFIXSampling packets on reception (IPFIXInput) and before every
	// output (IPFIXOutput).
	IPFIX                   *ipfix.Config
	IPFIXSampling           uint32
	IPFIXInput, IPFIXOutput bool
	// CollectorSets are the per-flow sampling exporters by
	// Flow_Sample_Collector_Set id (OpenFlow sample actions).
	CollectorSets map[uint32]ipfix.Config
	// IfIndex returns a datapath port's ifindex, 0 if it has none (sFlow
	// and IPFIX interface numbers).
	IfIndex func(odp uint32) uint32
}

// flowExport holds a bridge's exporters. Upcalls read them under the
// read lock; reconfiguration replaces them under the write lock.
type flowExport struct {
	mu      sync.RWMutex
	ifindex func(odp uint32) uint32
	nf      *netflow.Exporter
	sf      *sflow.Exporter
	sfRate  uint32
	ipb     *ipfix.Exporter
	sets    map[uint32]*ipfix.Exporter
	targets map[string][]string // exporter name -> targets it was opened with
	ticking bool

	// What the exporters need of the bridge (set by New): its
	// translator (sampling actions, port names), datapath ID and ports
	// (sFlow), a way to revalidate its megaflows, and its lifetime for
	// the ticker.
	xl         *xlate.Xlator
	datapathID func() uint64
	ports      func() []Port
	portStats  PortCounters
	changed    func()
	ctx        context.Context
	wg         *sync.WaitGroup
}

// FlowExportTick is how often exporters run: queued records go out,
// active timeouts and counter polling are checked.
const FlowExportTick = time.Second

// SetFlowExport applies a flow export configuration (nil turns it all
// off): exporters are created, reconfigured in place (keeping sequence
// numbers and flows) or closed, and megaflows are revalidated so their
// sampling actions and NetFlow masks follow. The error lists what could
// not be applied (unreachable or malformed targets); the rest applies.
func (b *Bridge) SetFlowExport(cfg *FlowExportConfig) error { return b.fe.set(cfg) }

// set is SetFlowExport.
func (fe *flowExport) set(cfg *FlowExportConfig) error {
	if cfg == nil {
		cfg = &FlowExportConfig{}
	}
	fe.mu.Lock()
	if fe.targets == nil {
		fe.targets = map[string][]string{}
	}
	fe.ifindex = cfg.IfIndex
	var errs []error
	// NetFlow.
	switch {
	case cfg.NetFlow == nil:
		if fe.nf != nil {
			fe.nf.Flush()
			fe.nf.Close()
			fe.nf = nil
		}
	case fe.nf != nil:
		errs = append(errs, fe.nf.Reconfigure(*cfg.NetFlow))
	default:
		nf, err := netflow.New(*cfg.NetFlow, nil)
		fe.nf = nf
		errs = append(errs, err)
	}
	// sFlow.
	switch {
	case cfg.SFlow == nil:
		if fe.sf != nil {
			fe.sf.Close()
			fe.sf = nil
		}
	case fe.sf != nil:
		sc := *cfg.SFlow
		sc.DatapathID = fe.datapathID()
		errs = append(errs, fe.sf.Reconfigure(sc))
	default:
		sc := *cfg.SFlow
		sc.DatapathID = fe.datapathID()
		sf, err := sflow.New(sc, nil, fe.sflowCounters)
		fe.sf = sf
		errs = append(errs, err)
	}
	fe.sfRate = 0
	if cfg.SFlow != nil {
		fe.sfRate = max(cfg.SFlow.Sampling, 1)
	}
	// Per-bridge IPFIX.
	fe.ipb, errs = setIPFIX(fe.ipb, cfg.IPFIX, "bridge", errs)
	// Collector sets: reconfigure those that stay, close the others.
	old := fe.sets
	fe.sets = map[uint32]*ipfix.Exporter{}
	for _, id := range slices.Sorted(maps.Keys(cfg.CollectorSets)) {
		c := cfg.CollectorSets[id]
		var e *ipfix.Exporter
		e, errs = setIPFIX(old[id], &c, fmt.Sprintf("collector set %d", id), errs)
		delete(old, id)
		if e != nil {
			fe.sets[id] = e
		}
	}
	for _, e := range old {
		e.Flush()
		e.Close()
	}
	smp := &xlate.Sampling{NetFlow: fe.nf != nil, IfIndex: cfg.IfIndex,
		FlowSample: fe.ipb != nil || len(fe.sets) > 0}
	if fe.sf != nil {
		smp.SFlowProbability = xlate.SampleProbability(fe.sfRate)
	}
	if fe.ipb != nil {
		smp.IPFIXProbability = xlate.SampleProbability(max(cfg.IPFIXSampling, 1))
		smp.IPFIXInput, smp.IPFIXOutput = cfg.IPFIXInput, cfg.IPFIXOutput
	}
	on := fe.nf != nil || fe.sf != nil || smp.FlowSample
	if !on {
		smp = nil
	}
	startTicker := on && !fe.ticking
	if startTicker {
		fe.ticking = true
	}
	fe.mu.Unlock()
	fe.xl.SetSampling(smp)
	if startTicker {
		fe.wg.Add(1)
		go fe.ticker()
	}
	fe.changed()
	return errors.Join(errs...)
}

// setIPFIX creates, reconfigures or closes one IPFIX exporter.
func setIPFIX(e *ipfix.Exporter, cfg *ipfix.Config, what string, errs []error) (*ipfix.Exporter, []error) {
	switch {
	case cfg == nil:
		if e != nil {
			e.Flush()
			e.Close()
		}
		return nil, errs
	case e != nil:
		if err := e.Reconfigure(*cfg); err != nil {
			errs = append(errs, fmt.Errorf("ipfix %s: %w", what, err))
		}
		return e, errs
	}
	n, err := ipfix.New(*cfg, nil)
	if err != nil {
		errs = append(errs, fmt.Errorf("ipfix %s: %w", what, err))
	}
	return n, errs
}

// ticker runs the exporters once a tick until the bridge closes.
func (fe *flowExport) ticker() {
	defer fe.wg.Done()
	t := time.NewTicker(FlowExportTick)
	defer t.Stop()
	for {
		select {
		case <-fe.ctx.Done():
			return
		case <-t.C:
			fe.run()
		}
	}
}

// run runs every exporter once.
func (fe *flowExport) run() {
	// The exporters run outside the lock: sFlow's Run calls back into
	// sflowCounters, which takes it again (a nested read lock deadlocks
	// once a reconfiguration waits for the write lock in between).
	fe.mu.RLock()
	nf, sf, ipb := fe.nf, fe.sf, fe.ipb
	sets := make([]interface{ Run() }, 0, len(fe.sets))
	for _, e := range fe.sets {
		sets = append(sets, e)
	}
	fe.mu.RUnlock()
	if nf != nil {
		nf.Run()
	}
	if sf != nil {
		sf.Run()
	}
	if ipb != nil {
		ipb.Run()
	}
	for _, e := range sets {
		e.Run()
	}
}

// Flush sends everything the exporters hold now (NetFlow records of live
// flows stay until they expire).
func (fe *flowExport) Flush() {
	fe.mu.RLock()
	defer fe.mu.RUnlock()
	if fe.nf != nil {
		fe.nf.Flush()
	}
	if fe.sf != nil {
		fe.sf.Flush()
	}
	if fe.ipb != nil {
		fe.ipb.Flush()
	}
	for _, e := range fe.sets {
		e.Flush()
	}
}

// close flushes and closes every exporter (Bridge.Close).
func (fe *flowExport) close() {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if fe.nf != nil {
		fe.nf.Flush()
		fe.nf.Close()
		fe.nf = nil
	}
	if fe.sf != nil {
		fe.sf.Close()
		fe.sf = nil
	}
	if fe.ipb != nil {
		fe.ipb.Flush()
		fe.ipb.Close()
		fe.ipb = nil
	}
	for id, e := range fe.sets {
		e.Flush()
		e.Close()
		delete(fe.sets, id)
	}
}

// IPFIXStats returns the per-bridge IPFIX exporter's statistics, false
// when there is none (`ovs-ofctl dump-ipfix-bridge`).
func (fe *flowExport) IPFIXStats() (ipfix.Stats, bool) {
	fe.mu.RLock()
	defer fe.mu.RUnlock()
	if fe.ipb == nil {
		return ipfix.Stats{}, false
	}
	return fe.ipb.Stats(), true
}

// IPFIXFlowStats returns each collector set's exporter statistics by id
// (`ovs-ofctl dump-ipfix-flow`).
func (fe *flowExport) IPFIXFlowStats() map[uint32]ipfix.Stats {
	fe.mu.RLock()
	defer fe.mu.RUnlock()
	out := make(map[uint32]ipfix.Stats, len(fe.sets))
	for id, e := range fe.sets {
		out[id] = e.Stats()
	}
	return out
}

// sampleUpcall hands a sampling userspace action's packet to the
// exporter its cookie names. It reports false for other userdata.
func (fe *flowExport) sampleUpcall(u *dpif.Upcall) bool {
	ck, ok := odp.ParseCookie(u.Action.Userspace.Userdata)
	if !ok || ck.Type == odp.CookieController {
		return false
	}
	if u.Packet == nil || u.Key == nil {
		return true
	}
	fe.mu.RLock()
	defer fe.mu.RUnlock()
	snap := fe.xl.Snapshot()
	inODP := u.Key.InPort
	switch ck.Type {
	case odp.CookieSFlow:
		if fe.sf == nil {
			return true
		}
		inTCI := u.Key.VLANs[0].TCI
		s := sflow.Sample{Packet: u.Packet.Data(), FrameLen: u.Packet.Len(), InIfindex: fe.ifindexOf(inODP),
			OutIfindex: ck.SFlowOutput, InVLAN: inTCI & 0xfff, OutVLAN: ck.VLANTCI & 0xfff,
			InPriority: uint8(inTCI >> 13), OutPriority: uint8(ck.VLANTCI >> 13)}
		if inTCI&flow.VLANCFI == 0 {
			s.InVLAN, s.InPriority = 0, 0
		}
		fe.sf.Sample(&s)
	case odp.CookieIPFIX:
		if fe.ipb == nil {
			return true
		}
		s := fe.ipfixSample(snap, u, inODP, ck.OutputPort, ck.OutputPort != odp.PortNone)
		fe.ipb.Sample(&s)
	case odp.CookieFlowSample:
		e := fe.sets[ck.CollectorSetID]
		if e == nil {
			return true
		}
		egress := ck.Direction == odp.SampleDirEgress ||
			ck.Direction == odp.SampleDirDefault && ck.OutputPort != odp.PortNone
		s := fe.ipfixSample(snap, u, inODP, ck.OutputPort, egress)
		s.ObsDomainID, s.ObsPointID = ck.ObsDomainID, ck.ObsPointID
		e.Sample(&s)
	}
	return true
}

// ifindexOf returns a datapath port's ifindex, 0 for ports without one
// (dummy ports), as Open vSwitch reports them.
func (fe *flowExport) ifindexOf(no uint32) uint32 {
	if fe.ifindex != nil {
		return fe.ifindex(no)
	}
	return 0
}

// ipfixSample describes a sampled packet for an IPFIX exporter.
func (fe *flowExport) ipfixSample(snap *xlate.Snapshot, u *dpif.Upcall, in, out uint32, egress bool) ipfix.Sample {
	s := ipfix.Sample{Packet: u.Packet.Data(), InPort: fe.ifindexOf(in), Egress: egress}
	if p := snap.ByODP[in]; p != nil {
		s.InName = p.Name
	}
	if out != odp.PortNone {
		s.OutPort = fe.ifindexOf(out)
		if p := snap.ByODP[out]; p != nil {
			s.OutName = p.Name
		}
	}
	return s
}

// sflowCounters reads the bridge's port counters for sFlow counter
// samples.
func (fe *flowExport) sflowCounters() []sflow.PortCounters {
	ports := fe.ports()
	fe.mu.RLock()
	ifindex := fe.ifindexOf
	fe.mu.RUnlock()
	out := make([]sflow.PortCounters, 0, len(ports))
	for _, p := range ports {
		if p.ODP == xlate.NoODP {
			continue
		}
		pc := sflow.PortCounters{Ifindex: ifindex(p.ODP), Name: p.Name, OFPort: uint32(p.OFPort),
			Speed: uint64(p.CurrSpeed) * 1000, Up: !p.LinkDown && !p.AdminDown}
		if fe.portStats != nil {
			if ps, ok := fe.portStats(p.ODP); ok {
				pc.RxPackets, pc.RxBytes, pc.RxDrops, pc.RxErrors = ps.RxPackets, ps.RxBytes, ps.RxDropped, ps.RxErrors
				pc.TxPackets, pc.TxBytes, pc.TxDrops, pc.TxErrors = ps.TxPackets, ps.TxBytes, ps.TxDropped, ps.TxErrors
			}
		}
		out = append(out, pc)
	}
	return out
}

// netflowKey returns the NetFlow flow a megaflow's key belongs to; false
// for non-IPv4 flows, which NetFlow v5 does not report.
func (fe *flowExport) netflowKey(k *flow.Key) (netflow.FlowKey, bool) {
	if k.EthType != flow.EthTypeIPv4 {
		return netflow.FlowKey{}, false
	}
	var in uint16 = xlate.PortNone
	if p := fe.xl.Snapshot().ByODP[k.InPort]; p != nil {
		in = p.OFPort
	}
	nk := netflow.FlowKey{InPort: in, Proto: k.NwProto, TOS: k.NwTos, SrcPort: k.TpSrc, DstPort: k.TpDst}
	nk.Src = [4]byte{byte(k.NwSrc >> 24), byte(k.NwSrc >> 16), byte(k.NwSrc >> 8), byte(k.NwSrc)}
	nk.Dst = [4]byte{byte(k.NwDst >> 24), byte(k.NwDst >> 16), byte(k.NwDst >> 8), byte(k.NwDst)}
	return nk, true
}

// netflowAccount credits a megaflow's new packets to its NetFlow flow
// (from pushStats).
func (fe *flowExport) netflowAccount(key *flow.Key, out uint16, packets, bytes uint64, tcpFlags uint16, used time.Time) {
	fe.mu.RLock()
	defer fe.mu.RUnlock()
	if fe.nf == nil {
		return
	}
	if k, ok := fe.netflowKey(key); ok {
		fe.nf.Account(k, out, packets, bytes, uint8(tcpFlags), used)
	}
}

// netflowExpire exports and forgets a deleted megaflow's NetFlow flow.
func (fe *flowExport) netflowExpire(key *flow.Key) {
	fe.mu.RLock()
	defer fe.mu.RUnlock()
	if fe.nf == nil {
		return
	}
	if k, ok := fe.netflowKey(key); ok {
		fe.nf.Expire(k)
	}
}

// ipfixStats converts an exporter's counters to the reply's.
func ipfixStats(st ipfix.Stats, set uint32) ofp.IPFIXStats {
	return ofp.IPFIXStats{TotalFlows: st.Flows, CurrentFlows: st.CurrentFlows, Pkts: st.SampledPackets,
		IPv4Pkts: st.IPv4OK, IPv6Pkts: st.IPv6OK, ErrorPkts: st.Errors, IPv4ErrorPkts: st.IPv4Errors,
		IPv6ErrorPkts: st.IPv6Errors, TxPkts: st.TxPackets, TxErrors: st.TxErrors, CollectorSetID: set}
}

// ipfixBridgeStats answers dump-ipfix-bridge; without bridge IPFIX it is
// NXST_NOT_CONFIGURED, as Open vSwitch.
func (fe *flowExport) ipfixBridgeStats(s ofconn.Sender, m *ofp.Msg) error {
	fe.mu.RLock()
	e := fe.ipb
	fe.mu.RUnlock()
	if e == nil {
		return &ofp.Error{Code: ofp.NXST_NOT_CONFIGURED}
	}
	return replyMultipart(s, m, &ofp.IPFIXBridgeReply{Stats: ipfixStats(e.Stats(), 0)})
}

// ipfixFlowStats answers dump-ipfix-flow: one entry per collector set,
// by id; none configured is NXST_NOT_CONFIGURED.
func (fe *flowExport) ipfixFlowStats(s ofconn.Sender, m *ofp.Msg) error {
	fe.mu.RLock()
	ids := make([]uint32, 0, len(fe.sets))
	es := map[uint32]*ipfix.Exporter{}
	for id, e := range fe.sets {
		ids = append(ids, id)
		es[id] = e
	}
	fe.mu.RUnlock()
	if len(ids) == 0 {
		return &ofp.Error{Code: ofp.NXST_NOT_CONFIGURED}
	}
	slices.Sort(ids)
	rep := &ofp.IPFIXFlowReply{}
	for _, id := range ids {
		rep.Stats = append(rep.Stats, ipfixStats(es[id].Stats(), id))
	}
	return replyMultipart(s, m, rep)
}
