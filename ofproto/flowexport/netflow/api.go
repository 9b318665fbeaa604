package netflow

import "time"

// Config is one NetFlow row (Bridge.netflow).
type Config struct {
	Targets          []string      // "host:port"; the port is mandatory, as in Open vSwitch
	EngineType       uint8         // engine_type in every header
	EngineID         uint8         // engine_id in every header
	ActiveTimeout    time.Duration // 0 means the default 600 s; negative disables active timeouts
	AddIDToInterface bool          // put EngineID's low 7 bits in the top 7 bits of input/output
}

// FlowKey is NetFlow's flow identity, as Open vSwitch's netflow_flow:
// in_port, nw_src, nw_dst, nw_proto, nw_tos, tp_src, tp_dst. For ICMP,
// SrcPort holds the type and DstPort the code (as in a datapath flow key);
// the record carries them as dst_port = type<<8 | code.
//
// NetFlow reports only IPv4 flows: callers account IPv4 flows only.
type FlowKey struct {
	InPort           uint16
	Src, Dst         [4]byte
	Proto, TOS       uint8
	SrcPort, DstPort uint16
}

// Output interface values for Account's outPort besides an OpenFlow port
// number, as Open vSwitch's NF_OUT_* (ofproto/netflow.h). Translation
// starts from OutputDrop, sets the port on the first output, OutputMulti on
// a second one, and OutputFlood for flood/all.
const (
	OutputFlood uint16 = 0xffff // NF_OUT_FLOOD
	OutputMulti uint16 = 0xfffe // NF_OUT_MULTI: more than one output port
	OutputDrop  uint16 = 0xfffd // NF_OUT_DROP: no output
)

// DefaultActiveTimeout is Open vSwitch's NF_ACTIVE_TIMEOUT_DEFAULT.
const DefaultActiveTimeout = 600 * time.Second

// MaxRecords is the NetFlow v5 limit of records per message.
const MaxRecords = 30
