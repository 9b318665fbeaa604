package ofp

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// IsMultipartRequestMore reports whether the framed message b is an
// OpenFlow 1.3+ multipart request with OFPSF_REQ_MORE set: more parts with
// the same xid follow and the request is to be handled as one. Open
// vSwitch assembles parts in OpenFlow 1.3 and later only; earlier
// versions pass every part on as it comes.
func IsMultipartRequestMore(b []byte) bool {
	return len(b) >= 16 && b[0] >= mf.OF13 && b[1] == ofpt11StatsReq &&
		binary.BigEndian.Uint16(b[10:])&StatsReqMore != 0
}

// MergeMultipartRequest joins the parts of a multipart request sent with
// OFPSF_REQ_MORE (framed messages, in order, the last one without the
// flag) into one request, as Open vSwitch's multipart assembler does:
// the bodies are concatenated after the first part's headers. Flow
// monitor and table features requests are joined entry by entry, so they
// may exceed one message's 64 KiB; other requests fail with
// OFPBRC_MULTIPART_BUFFER_OVERFLOW if they do. Parts of different request
// types fail with OFPBRC_BAD_STAT, as from Open vSwitch.
func MergeMultipartRequest(parts [][]byte) (*Msg, error) {
	if len(parts) == 0 {
		return nil, errorf(OFPBRC_BAD_STAT, "empty multipart request")
	}
	msgs := make([]*Msg, len(parts))
	for i, p := range parts {
		m, err := Decode(p)
		if err != nil {
			return nil, err
		}
		if i > 0 && (m.Raw != msgs[0].Raw || m.Version != msgs[0].Version) {
			return nil, errorf(OFPBRC_BAD_STAT, "multipart request parts of different types %s and %s", msgs[0].Raw, m.Raw)
		}
		msgs[i] = m
	}
	out := *msgs[0]
	switch msgs[0].Body.(type) {
	case *FlowMonitorRequest:
		m := &FlowMonitorRequest{}
		for _, p := range msgs {
			m.Monitors = append(m.Monitors, p.Body.(*FlowMonitorRequest).Monitors...)
		}
		out.Body = m
		return &out, nil
	case *TableFeaturesRequest:
		m := &TableFeaturesRequest{}
		for _, p := range msgs {
			m.Tables = append(m.Tables, p.Body.(*TableFeaturesRequest).Tables...)
		}
		out.Body = m
		return &out, nil
	}
	_, _, hl, err := identify(parts[0])
	if err != nil {
		return nil, err
	}
	b := append([]byte(nil), parts[0][:hl]...)
	for _, p := range parts {
		b = append(b, p[hl:]...)
	}
	if len(b) > maxMessageLen {
		return nil, errorf(OFPBRC_MULTIPART_BUFFER_OVERFLOW, "%s of %d bytes in %d parts", msgs[0].Raw, len(b), len(parts))
	}
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	binary.BigEndian.PutUint16(b[10:], binary.BigEndian.Uint16(b[10:])&^StatsReqMore)
	return Decode(b)
}
