package ofp

import "encoding/binary"

// IPFIXBridgeRequest is NXST_IPFIX_BRIDGE_REQUEST (ovs-ofctl
// dump-ipfix-bridge): the bridge's per-bridge IPFIX exporter statistics.
type IPFIXBridgeRequest struct{ Flags uint16 }

// IPFIXFlowRequest is NXST_IPFIX_FLOW_REQUEST (ovs-ofctl dump-ipfix-flow):
// the statistics of each flow-based sampling collector set.
type IPFIXFlowRequest struct{ Flags uint16 }

// IPFIXStats is one nx_ipfix_stats_reply (88 bytes): an exporter's
// counters; CollectorSetID is 0 for the bridge exporter.
type IPFIXStats struct {
	TotalFlows, CurrentFlows                uint64
	Pkts, IPv4Pkts, IPv6Pkts                uint64
	ErrorPkts, IPv4ErrorPkts, IPv6ErrorPkts uint64
	TxPkts, TxErrors                        uint64
	CollectorSetID                          uint32
}

// IPFIXBridgeReply is NXST_IPFIX_BRIDGE_REPLY.
type IPFIXBridgeReply struct {
	Flags uint16
	Stats IPFIXStats
}

// IPFIXFlowReply is NXST_IPFIX_FLOW_REPLY: one entry per collector set.
type IPFIXFlowReply struct {
	Flags uint16
	Stats []IPFIXStats
}

const ipfixStatsLen = 88

func (s *IPFIXStats) fields() []*uint64 {
	return []*uint64{&s.TotalFlows, &s.CurrentFlows, &s.Pkts, &s.IPv4Pkts, &s.IPv6Pkts,
		&s.ErrorPkts, &s.IPv4ErrorPkts, &s.IPv6ErrorPkts, &s.TxPkts, &s.TxErrors}
}

func appendIPFIXStats(b []byte, s *IPFIXStats) []byte {
	for _, f := range s.fields() {
		b = binary.BigEndian.AppendUint64(b, *f)
	}
	b = binary.BigEndian.AppendUint32(b, s.CollectorSetID)
	return append(b, 0, 0, 0, 0)
}

func readIPFIXStats(r *reader) IPFIXStats {
	var s IPFIXStats
	for _, f := range s.fields() {
		*f = r.u64()
	}
	s.CollectorSetID = r.u32()
	r.skip(4)
	return s
}

// RawFor returns NXST_IPFIX_BRIDGE_REQUEST.
func (*IPFIXBridgeRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_IPFIX_BRIDGE_REQUEST)
}
func (m *IPFIXBridgeRequest) multipartFlags() uint16                       { return m.Flags }
func (m *IPFIXBridgeRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// RawFor returns NXST_IPFIX_FLOW_REQUEST.
func (*IPFIXFlowRequest) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_IPFIX_FLOW_REQUEST)
}
func (m *IPFIXFlowRequest) multipartFlags() uint16                       { return m.Flags }
func (m *IPFIXFlowRequest) appendBody(b []byte, _ uint8) ([]byte, error) { return b, nil }

// RawFor returns NXST_IPFIX_BRIDGE_REPLY.
func (*IPFIXBridgeReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_IPFIX_BRIDGE_REPLY)
}
func (m *IPFIXBridgeReply) multipartFlags() uint16 { return m.Flags }
func (m *IPFIXBridgeReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	return appendIPFIXStats(b, &m.Stats), nil
}

// RawFor returns NXST_IPFIX_FLOW_REPLY.
func (*IPFIXFlowReply) RawFor(v uint8) (Raw, error) {
	return versionRange(v, RawNXST_IPFIX_FLOW_REPLY)
}
func (m *IPFIXFlowReply) multipartFlags() uint16 { return m.Flags }
func (m *IPFIXFlowReply) appendBody(b []byte, _ uint8) ([]byte, error) {
	for i := range m.Stats {
		b = appendIPFIXStats(b, &m.Stats[i])
	}
	return b, nil
}

func init() {
	decoders[RawNXST_IPFIX_BRIDGE_REQUEST] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		return &IPFIXBridgeRequest{Flags: r.statsFlags}, nil
	}
	decoders[RawNXST_IPFIX_FLOW_REQUEST] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		return &IPFIXFlowRequest{Flags: r.statsFlags}, nil
	}
	decoders[RawNXST_IPFIX_BRIDGE_REPLY] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		return &IPFIXBridgeReply{Flags: r.statsFlags, Stats: readIPFIXStats(r)}, nil
	}
	decoders[RawNXST_IPFIX_FLOW_REPLY] = func(r *reader, _ uint8, _ Raw) (Message, error) {
		m := &IPFIXFlowReply{Flags: r.statsFlags}
		for r.len() >= ipfixStatsLen {
			m.Stats = append(m.Stats, readIPFIXStats(r))
		}
		return m, nil
	}
}
