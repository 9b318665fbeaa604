package xlate

import (
	"math"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Sampling is a bridge's flow export configuration as translation needs
// it: which sampling actions to compose and whether NetFlow needs its key
// fields exact in the megaflow. A nil *Sampling is all off.
type Sampling struct {
	// SFlowProbability is the chance (of math.MaxUint32) that sFlow
	// samples a packet on reception; 0: no sFlow.
	SFlowProbability uint32
	// IPFIXProbability is the per-bridge IPFIX sampling chance; 0: no
	// per-bridge IPFIX. IPFIXInput and IPFIXOutput sample on reception
	// and before every output.
	IPFIXProbability        uint32
	IPFIXInput, IPFIXOutput bool
	// FlowSample makes OpenFlow sample actions compose flow_sample
	// upcalls: the bridge has an IPFIX exporter (per-bridge or a
	// Flow_Sample_Collector_Set), as Open vSwitch requires.
	FlowSample bool
	// NetFlow makes the NetFlow key fields exact and records the output
	// port in Out.NetFlowOutput.
	NetFlow bool
	// IfIndex returns a datapath port's ifindex (0 if it has none), for
	// sFlow's output interface.
	IfIndex func(odp uint32) uint32
}

// NetFlow output values in Out.NetFlowOutput besides an OpenFlow port, as
// Open vSwitch's NF_OUT_*.
const (
	NetFlowOutFlood uint16 = 0xffff
	NetFlowOutMulti uint16 = 0xfffe
	NetFlowOutDrop  uint16 = 0xfffd
)

// sFlow's output values for samples without a single known ifindex
// (sFlow v5 flow_sample "output": the multiple-ports and discard
// formats).
const (
	sflowOutMultiple = 0x80000000
	sflowOutDiscard  = 0x40000000 | 256
)

// SetSampling publishes a bridge's flow export configuration; nil turns
// sampling off. Megaflows translated before keep their actions until
// revalidated.
func (x *Xlator) SetSampling(s *Sampling) { x.sampling.Store(s) }

// sampleState is a translation's flow export sampling (sFlow, IPFIX,
// NetFlow; Open vSwitch's compose_sflow_action and friends): the
// configuration it started with and the bookkeeping of the outputs the
// sFlow cookie and NetFlow report. c is the translation it belongs to.
type sampleState struct {
	c   *ctx
	cfg *Sampling
	// sflow is the sFlow cookie's userdata, rewritten at the end with
	// the outputs (nil without sFlow).
	sflow    []byte
	sflowN   int
	sflowODP uint32
	sflowMul bool // an output to an unknown set of ports (NORMAL)
}

// probabilityFor returns a sampling action's chance for a 1-in-n rate, as
// Open vSwitch: math.MaxUint32/n, at least 1.
func probabilityFor(n uint32) uint32 {
	if n == 0 {
		return 0
	}
	return max(1, math.MaxUint32/n)
}

// SampleProbability is the datapath sample chance for 1-in-n sampling.
func SampleProbability(n uint32) uint32 { return probabilityFor(n) }

// start composes the reception samplers at the start of the
// actions and makes the NetFlow key exact. Packets thawed from
// recirculation were sampled on reception already.
func (sm *sampleState) start() {
	c := sm.c
	s := c.x.sampling.Load()
	sm.cfg = s
	c.out.NetFlowOutput = NetFlowOutDrop
	if s == nil {
		return
	}
	if s.NetFlow && c.flow.EthType == flow.EthTypeIPv4 {
		w := &c.wc.Key
		w.NwSrc, w.NwDst, w.NwProto = ^uint32(0), ^uint32(0), 0xff
		w.NwTos |= 0xfc
		w.TpSrc, w.TpDst = 0xffff, 0xffff
	}
	if c.in.Key.RecircID != 0 || c.in.OFActions != nil || c.in.Resume != nil || c.flow.InPort == PortNone {
		return
	}
	inPort := uint16(c.flow.InPort)
	if s.SFlowProbability != 0 {
		ck := odp.Cookie{Type: odp.CookieSFlow, InPort: inPort}
		sm.sflow = sm.emit(s.SFlowProbability, &ck, true)
	}
	if s.IPFIXProbability != 0 && s.IPFIXInput {
		ck := odp.Cookie{Type: odp.CookieIPFIX, InPort: inPort, OutputPort: odp.PortNone}
		sm.emit(s.IPFIXProbability, &ck, false)
	}
}

// emit composes a userspace action with a sampling cookie, inside
// a sample action unless every packet is sampled, and returns the
// cookie's userdata.
func (sm *sampleState) emit(probability uint32, ck *odp.Cookie, withActions bool) []byte {
	return sm.emitTunnel(probability, ck, withActions, 0)
}

// emitTunnel is emit with the egress tunnel port (tunnel_out_port=) of
// a sample taken at a tunnel's egress, 0 for none.
func (sm *sampleState) emitTunnel(probability uint32, ck *odp.Cookie, withActions bool, tunnelOut uint32) []byte {
	c := sm.c
	ud := ck.Marshal()
	us := odp.Userspace(0, odp.UserspaceParams{Userdata: ud, WithActions: withActions, TunnelOutPort: tunnelOut})
	// The slowpath meter, when configured, limits what reaches userspace
	// (Open vSwitch's compose_sample_action).
	meter, metered := c.x.dpMeter(ofp.MeterSlowpath)
	switch {
	case metered:
		c.emit(odp.Sample(probability, odp.Actions{odp.Meter(meter), us}))
	case probability == math.MaxUint32:
		c.emit(us)
	default:
		c.emit(odp.Sample(probability, odp.Actions{us}))
	}
	return ud
}

// output is called before an output to datapath port no (after the
// header changes are committed): per-bridge IPFIX output sampling, and the
// sFlow and NetFlow output bookkeeping.
func (sm *sampleState) output(no uint32) {
	c := sm.c
	s := sm.cfg
	if s == nil {
		return
	}
	sm.sflowN++
	sm.sflowODP = no
	if s.NetFlow {
		var of uint16 = PortNone
		if p := c.snap.ByODP[no]; p != nil {
			of = p.OFPort
		}
		switch c.out.NetFlowOutput {
		case NetFlowOutDrop:
			c.out.NetFlowOutput = of
		case NetFlowOutFlood:
		default:
			c.out.NetFlowOutput = NetFlowOutMulti
		}
	}
	if s.IPFIXProbability != 0 && s.IPFIXOutput && c.flow.InPort != PortNone {
		ck := odp.Cookie{Type: odp.CookieIPFIX, InPort: uint16(c.flow.InPort), OutputPort: no}
		sm.emit(s.IPFIXProbability, &ck, false)
	}
}

// flood records a flood for NetFlow and sFlow: FLOOD and ALL
// (counted: their outputs went through output) or NORMAL's
// learn-and-forward, whose ports the datapath picks.
func (sm *sampleState) flood(counted bool) {
	c := sm.c
	if sm.cfg == nil {
		return
	}
	if !counted {
		sm.sflowMul = true
	}
	if sm.cfg.NetFlow {
		c.out.NetFlowOutput = NetFlowOutFlood
	}
}

// finish writes the outputs into the sFlow cookie: one ifindex,
// the number of ports, or a discard.
func (sm *sampleState) finish() {
	c := sm.c
	if sm.sflow == nil {
		return
	}
	var out uint32
	switch {
	case sm.sflowMul:
		out = sflowOutMultiple
	case sm.sflowN == 0:
		out = sflowOutDiscard
	case sm.sflowN == 1 && sm.cfg.IfIndex != nil && sm.cfg.IfIndex(sm.sflowODP) != 0:
		out = sm.cfg.IfIndex(sm.sflowODP)
	default:
		out = sflowOutMultiple | uint32(sm.sflowN)
	}
	odp.SetSFlowOutput(sm.sflow, c.base.VLANs[0].TCI, out)
}

// flowSample translates the OpenFlow sample action: a flow_sample upcall
// for the IPFIX collector set, taken with the action's probability.
func (sm *sampleState) flowSample(a *ofp.Sample) {
	c := sm.c
	s := sm.cfg
	if a == nil || s == nil || !s.FlowSample {
		c.tr.skipf("sample: no IPFIX exporter on this bridge")
		return
	}
	if a.Probability == 0 {
		return
	}
	out := odp.PortNone
	var tunnel *Port
	if a.SamplingPort != PortNone && uint32(a.SamplingPort) != c.flow.InPort {
		p := c.snap.Ports[a.SamplingPort]
		if p == nil || p.ODP == NoODP {
			c.tr.notef("can't use unknown port %d in flow sample action", a.SamplingPort)
			return
		}
		out = p.ODP
		if p.Tunnel != nil {
			// Tunnel sampling (the collector set's
			// enable-tunnel-sampling, on by default): the sample
			// carries the egress tunnel's metadata.
			tunnel = p
		}
	}
	c.commit()
	var tunnelOut uint32
	if tunnel != nil {
		// The tunnel port's settings, written before the sample
		// without native tunnelling; not seen by later actions.
		saved := c.flow
		c.tnl.portSend(tunnel)
		if !c.x.Recirc.TnlPushPop() {
			c.tnl.commitTunnel(tunnel.Tunnel.Type)
		}
		c.flow = saved
		tunnelOut = out
	}
	ck := odp.Cookie{Type: odp.CookieFlowSample, InPort: uint16(c.flow.InPort), Probability: a.Probability,
		CollectorSetID: a.CollectorSetID, ObsDomainID: a.ObsDomainID, ObsPointID: a.ObsPointID,
		OutputPort: out, Direction: a.Direction}
	// The 16-bit probability scaled to 32 bits keeps the percentage.
	sm.emitTunnel(uint32(a.Probability)<<16|uint32(a.Probability), &ck, false, tunnelOut)
}
