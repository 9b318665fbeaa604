package ofp_test

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

func encodeOrFatal(t *testing.T, v uint8, xid uint32, m ofp.Message) []byte {
	t.Helper()
	b, err := ofp.Encode(nil, v, xid, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestIsMultipartRequestMoreOnlyForOpenFlow13PlusRequestsWithTheFlag(t *testing.T) {
	more := &ofp.PortStatsRequest{Flags: ofp.StatsReqMore, PortNo: ofp.PortAny}
	for _, c := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"OF1.3 request with REQ_MORE", encodeOrFatal(t, mf.OF13, 1, more), true},
		{"OF1.5 request with REQ_MORE", encodeOrFatal(t, mf.OF15, 1, more), true},
		{"OF1.3 request without", encodeOrFatal(t, mf.OF13, 1, &ofp.PortStatsRequest{PortNo: ofp.PortAny}), false},
		{"OF1.0 request with the flag", encodeOrFatal(t, mf.OF10, 1, more), false},
		{"not a request", encodeOrFatal(t, mf.OF13, 1, &ofp.BarrierRequest{}), false},
		{"short", []byte{4, 18, 0, 8}, false},
	} {
		if got := ofp.IsMultipartRequestMore(c.b); got != c.want {
			t.Errorf("%s: IsMultipartRequestMore = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestMergeMultipartRequestJoinsPartsAsOneRequest(t *testing.T) {
	mon := func(id uint32) ofp.FlowMonitor {
		return ofp.FlowMonitor{ID: id, Command: ofp.FMCAdd, Flags: ofp.FMFAdd, OutPort: ofp.PortAny16, OutGroup: ofp.GroupAny, TableID: 0xff}
	}
	parts := [][]byte{
		encodeOrFatal(t, mf.OF14, 7, &ofp.FlowMonitorRequest{Flags: ofp.StatsReqMore, Monitors: []ofp.FlowMonitor{mon(1), mon(2)}}),
		encodeOrFatal(t, mf.OF14, 7, &ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{mon(3)}}),
	}
	m, err := ofp.MergeMultipartRequest(parts)
	if err != nil {
		t.Fatal(err)
	}
	req, ok := m.Body.(*ofp.FlowMonitorRequest)
	if !ok || m.XID != 7 || len(req.Monitors) != 3 || req.Monitors[2].ID != 3 || req.Flags != 0 {
		t.Fatalf("merged %v xid %d %+v, want one request of monitors 1, 2, 3 without REQ_MORE", m.Raw, m.XID, m.Body)
	}

	// Other requests: bodies after the first part's headers.
	ps := [][]byte{
		encodeOrFatal(t, mf.OF13, 8, &ofp.PortStatsRequest{Flags: ofp.StatsReqMore, PortNo: 1}),
		encodeOrFatal(t, mf.OF13, 8, &ofp.PortStatsRequest{PortNo: 2}),
	}
	if _, err := ofp.MergeMultipartRequest(ps); ofp.CodeOf(err) != ofp.OFPBRC_BAD_LEN {
		t.Errorf("two port stats bodies joined: error %v, want OFPBRC_BAD_LEN (one body only)", err)
	}

	mixed := [][]byte{parts[0], encodeOrFatal(t, mf.OF14, 7, &ofp.PortStatsRequest{PortNo: ofp.PortAny})}
	if _, err := ofp.MergeMultipartRequest(mixed); ofp.CodeOf(err) != ofp.OFPBRC_BAD_STAT {
		t.Errorf("parts of different types: error %v, want OFPBRC_BAD_STAT", err)
	}
	if _, err := ofp.MergeMultipartRequest(nil); ofp.CodeOf(err) != ofp.OFPBRC_BAD_STAT {
		t.Errorf("no parts: error %v, want OFPBRC_BAD_STAT", err)
	}
}
