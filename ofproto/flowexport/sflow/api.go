package sflow

import (
	"net/netip"
	"time"
)

// Config is one sFlow row (Bridge.sflow).
type Config struct {
	Targets  []string      // "host:port"; the port defaults to 6343
	Sampling uint32        // 1-in-N sampling rate reported in flow samples; 0 = 400
	Polling  time.Duration // counter polling interval; 0 = 30 s
	Header   uint32        // bytes of each sampled frame to send; 0 = 128
	// Agent is the agent address in every datagram, resolved by the
	// caller (Open vSwitch picks one from sFlow.agent or the collector
	// route). The zero Addr is sent as 0.0.0.0.
	Agent netip.Addr
	SubID uint32 // sub_agent_id; the flow sampler's data source is 2:(1000+SubID)
	// DatapathID is the bridge's datapath ID for the OpenFlow port counter
	// record (1004).
	DatapathID uint64
}

// Sample is one sampled packet.
type Sample struct {
	Packet   []byte // frame from Ethernet header (not retained)
	FrameLen int    // original length without FCS (0 = len(Packet)); 4 is added for the stripped FCS
	// InIfindex is the input port's ifindex (0 if unknown). OutIfindex
	// is the sFlow output encoding: the output port's ifindex for one
	// output port, OutputMultiple(n) for n > 1 ports (or one port without
	// an ifindex), OutputDropped when there is no output.
	InIfindex, OutIfindex uint32
	// SamplePool is the number of packets the sampler has seen; 0 means
	// "keep it here": Open vSwitch adds the sampling rate per sample.
	SamplePool              uint32
	Drops                   uint32 // samples dropped for lack of resources
	InVLAN, OutVLAN         uint16 // extended switch src_vlan/dst_vlan (VID, 0 if untagged)
	InPriority, OutPriority uint8  // extended switch src/dst priority (PCP)
	// SourceIfindex is ignored: every Open vSwitch flow sample comes from
	// the bridge sampler, data source 2:(1000+SubID).
	SourceIfindex uint32
}

// PortCounters are one port's counters for a counter sample. Ports with
// Ifindex 0 are not polled, as in Open vSwitch. A counter the port does not
// keep is math.MaxUint64 (Open vSwitch's netdev convention); 32-bit sFlow
// counters carry the low 32 bits, so it reads as "unknown" (0xffffffff).
type PortCounters struct {
	Ifindex                                                                      uint32
	Name                                                                         string
	OFPort                                                                       uint32
	Speed                                                                        uint64 // bits/s; 0 is sent as 100 Mb/s, as Open vSwitch does
	Up                                                                           bool   // admin and link up (ifStatus 3), else 0
	RxPackets, RxBytes, RxDrops, RxErrors, TxPackets, TxBytes, TxDrops, TxErrors uint64
	RxMulticast, RxBroadcast, TxMulticast, TxBroadcast                           uint64
}

// Defaults, as Open vSwitch's lib/sflow.h.
const (
	DefaultPort     = 6343
	DefaultSampling = 400
	DefaultPolling  = 30 * time.Second
	DefaultHeader   = 128
)

// OutputDropped is the flow sample output for a packet with no output
// port: format 1, "dropped for an unknown reason" (0x40000000 | 256).
const OutputDropped uint32 = 0x40000000 | 256

// OutputMultiple is the flow sample output for a packet sent to n ports:
// format 2 with the port count.
func OutputMultiple(n uint32) uint32 { return 0x80000000 | n&0x3fffffff }
