package ofp_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// groupRaws are the group and meter message types.
var groupRaws = []string{
	"NXT_GROUP_MOD", "OFPT11_GROUP_MOD", "OFPT15_GROUP_MOD", "OFPT13_METER_MOD",
	"NXST_GROUP_DESC_REQUEST", "OFPST11_GROUP_DESC_REQUEST", "OFPST15_GROUP_DESC_REQUEST",
	"NXST_GROUP_DESC_REPLY", "OFPST11_GROUP_DESC_REPLY",
	"NXST_GROUP_REQUEST", "OFPST11_GROUP_REQUEST", "NXST_GROUP_REPLY", "OFPST11_GROUP_REPLY", "OFPST13_GROUP_REPLY",
	"NXST_GROUP_FEATURES_REQUEST", "OFPST12_GROUP_FEATURES_REQUEST", "NXST_GROUP_FEATURES_REPLY", "OFPST12_GROUP_FEATURES_REPLY",
	"OFPST13_METER_CONFIG_REQUEST", "OFPST13_METER_CONFIG_REPLY", "OFPST13_METER_REQUEST", "OFPST13_METER_REPLY",
	"OFPST13_METER_FEATURES_REQUEST", "OFPST13_METER_FEATURES_REPLY",
}

func isGroupRaw(name string) bool {
	for _, n := range groupRaws {
		if n == name {
			return true
		}
	}
	return false
}

// Every recorded group and meter message decodes to a typed body and
// re-encodes byte for byte; every group and meter type was recorded.
func TestGroupCapturesRoundTripByteIdentical(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range readGroupCaptures(t) {
		m, err := ofp.Decode(c.data)
		if err != nil {
			t.Errorf("%s: decode %x: %v", c.name, c.data, err)
			continue
		}
		if !isGroupRaw(m.Raw.String()) {
			continue
		}
		seen[m.Raw.String()] = true
		if _, ok := m.Body.(*ofp.Unknown); ok {
			t.Errorf("%s: %s decoded as Unknown", c.name, m.Raw)
			continue
		}
		out, err := ofp.EncodeMsg(nil, m)
		if err != nil {
			t.Errorf("%s: encode %s: %v", c.name, m.Raw, err)
			continue
		}
		if !bytes.Equal(out, c.data) {
			t.Errorf("%s: %s re-encoded differently\n got %x\nwant %x", c.name, m.Raw, out, c.data)
		}
	}
	for _, want := range groupRaws {
		if !seen[want] {
			t.Errorf("no captured %s", want)
		}
	}
}

// describe renders a group or meter message body compactly for exact
// comparisons.
func describe(body ofp.Message) string {
	var sb strings.Builder
	acts := func(as []ofp.Action) string {
		var p []string
		for _, a := range as {
			switch a.Type {
			case ofp.ActOutput:
				p = append(p, fmt.Sprintf("output:%d", a.Port))
			case ofp.ActSetField:
				p = append(p, fmt.Sprintf("set_field:%x->%s", a.Value, a.Field.Name))
			default:
				p = append(p, a.Type.String())
			}
		}
		return strings.Join(p, ",")
	}
	buckets := func(bs []ofp.Bucket) {
		for _, b := range bs {
			fmt.Fprintf(&sb, " bucket(id=%d,w=%d,port=%#x,group=%#x,%s)", b.ID, b.Weight, b.WatchPort, b.WatchGroup, acts(b.Actions))
		}
	}
	sel := func(method string, param uint64, m *mf.Match, order []mf.ID) {
		if method == "" {
			return
		}
		fmt.Fprintf(&sb, " %s/%d", method, param)
		for _, id := range order {
			f := mf.ByID(id)
			val, mask := make([]byte, f.Bytes), make([]byte, f.Bytes)
			m.Get(f, val, mask)
			fmt.Fprintf(&sb, " %s/%x", f.Name, mask)
		}
	}
	switch m := body.(type) {
	case *ofp.GroupMod:
		fmt.Fprintf(&sb, "group_mod cmd=%d type=%d id=%d cbid=%#x", m.Command, m.Type, m.GroupID, m.CommandBucketID)
		buckets(m.Buckets)
		sel(m.SelectionMethod, m.SelectionParam, &m.Fields, m.FieldOrder)
	case *ofp.GroupDescRequest:
		fmt.Fprintf(&sb, "group_desc_request id=%#x", m.GroupID)
	case *ofp.GroupDescReply:
		sb.WriteString("group_desc")
		for _, g := range m.Groups {
			fmt.Fprintf(&sb, " [type=%d id=%d", g.Type, g.GroupID)
			buckets(g.Buckets)
			sel(g.SelectionMethod, g.SelectionParam, &g.Fields, g.FieldOrder)
			sb.WriteString("]")
		}
	case *ofp.GroupStatsRequest:
		fmt.Fprintf(&sb, "group_stats_request id=%#x", m.GroupID)
	case *ofp.GroupStatsReply:
		sb.WriteString("group_stats")
		for _, g := range m.Stats {
			fmt.Fprintf(&sb, " [id=%d ref=%d pkts=%d bytes=%d", g.GroupID, g.RefCount, g.PacketCount, g.ByteCount)
			for _, b := range g.Buckets {
				fmt.Fprintf(&sb, " %d/%d", b.PacketCount, b.ByteCount)
			}
			sb.WriteString("]")
		}
	case *ofp.GroupFeaturesRequest:
		sb.WriteString("group_features_request")
	case *ofp.GroupFeaturesReply:
		fmt.Fprintf(&sb, "group_features types=%#x caps=%#x max=%#x acts=%#x", m.Types, m.Capabilities, m.MaxGroups, m.Actions)
	case *ofp.MeterMod:
		fmt.Fprintf(&sb, "meter_mod cmd=%d flags=%#x id=%d bands=%v", m.Command, m.Flags, m.MeterID, m.Bands)
	case *ofp.MeterConfigRequest:
		fmt.Fprintf(&sb, "meter_config_request id=%#x", m.MeterID)
	case *ofp.MeterConfigReply:
		sb.WriteString("meter_config")
		for _, c := range m.Configs {
			fmt.Fprintf(&sb, " [flags=%#x id=%d bands=%v]", c.Flags, c.MeterID, c.Bands)
		}
	case *ofp.MeterStatsRequest:
		fmt.Fprintf(&sb, "meter_stats_request id=%#x", m.MeterID)
	case *ofp.MeterStatsReply:
		sb.WriteString("meter_stats")
		for _, s := range m.Stats {
			fmt.Fprintf(&sb, " [id=%d flows=%d pkts=%d bytes=%d bands=%v]", s.MeterID, s.FlowCount, s.PacketInCount, s.ByteInCount, s.Bands)
		}
	case *ofp.MeterFeaturesRequest:
		sb.WriteString("meter_features_request")
	case *ofp.MeterFeaturesReply:
		fmt.Fprintf(&sb, "meter_features max=%d bands=%#x caps=%#x maxbands=%d maxcolor=%d", m.MaxMeter, m.BandTypes, m.Capabilities, m.MaxBands, m.MaxColor)
	default:
		fmt.Fprintf(&sb, "%T", body)
	}
	return sb.String()
}

// groupMsgs returns the decoded group and meter messages of a capture.
func groupMsgs(t *testing.T, caps []captured, name string) []string {
	var out []string
	for _, c := range caps {
		if c.name != name {
			continue
		}
		m, err := ofp.Decode(c.data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if isGroupRaw(m.Raw.String()) {
			out = append(out, describe(m.Body))
		}
	}
	return out
}

const (
	anyP = "0xffffffff"
)

// The recorded messages decode to the values ovs-ofctl was given and the
// switch holds.
func TestGroupCapturesDecodeToExpectedValues(t *testing.T) {
	caps := readGroupCaptures(t)
	none := ",port=" + anyP + ",group=" + anyP
	want := map[string][]string{
		"of10_add_group_all":      {"group_mod cmd=0 type=0 id=1 cbid=0xffffffff bucket(id=0,w=0" + none + ",output:1) bucket(id=1,w=0" + none + ",output:2)"},
		"of10_add_group_select":   {"group_mod cmd=0 type=1 id=2 cbid=0xffffffff bucket(id=0,w=10" + none + ",output:1) bucket(id=1,w=20" + none + ",output:2) dp_hash/0"},
		"of10_add_group_ff":       {"group_mod cmd=0 type=3 id=4 cbid=0xffffffff bucket(id=0,w=0,port=0x1,group=" + anyP + ",output:1) bucket(id=1,w=0,port=0x2,group=0x3,output:2)"},
		"of10_add_group_hash":     {"group_mod cmd=0 type=1 id=5 cbid=0xffffffff bucket(id=3,w=5" + none + ",output:1) bucket(id=9,w=1" + none + ",output:2) hash/7 eth_dst/ffffffffffff ip_dst/ffff0000 tcp_dst/ffff"},
		"of15_add_group_hash":     {"group_mod cmd=0 type=1 id=5 cbid=0xffffffff bucket(id=3,w=5" + none + ",output:1) bucket(id=9,w=1" + none + ",output:2) hash/7 eth_dst/ffffffffffff ip_dst/ffff0000 tcp_dst/ffff"},
		"of15_insert_buckets":     {"group_mod cmd=3 type=0 id=1 cbid=0xfffffffd bucket(id=7,w=0" + none + ",output:1)"},
		"of15_remove_buckets":     {"group_mod cmd=5 type=0 id=1 cbid=0x7"},
		"of10_remove_buckets":     {"group_mod cmd=5 type=0 id=1 cbid=0x7"},
		"of15_del_groups":         {"group_mod cmd=2 type=0 id=4294967292 cbid=0xffffffff"},
		"of13_del_group_3":        {"group_mod cmd=2 type=0 id=3 cbid=0xffffffff"},
		"of11_add_group_select":   {"group_mod cmd=0 type=1 id=2 cbid=0xffffffff bucket(id=0,w=10" + none + ",output:1) bucket(id=1,w=20" + none + ",output:2)"},
		"of13_add_group_indirect": {"group_mod cmd=0 type=2 id=3 cbid=0xffffffff bucket(id=0,w=0" + none + ",set_field:000000000009->eth_dst,output:2)"},
		"of13_mod_group":          {"group_mod cmd=1 type=0 id=1 cbid=0xffffffff bucket(id=0,w=0" + none + ",output:2) bucket(id=1,w=0" + none + ",output:1) bucket(id=2,w=0" + none + ",output:65534)"},
		"of15_dump_group_1": {"group_desc_request id=0x1",
			"group_desc [type=0 id=1 bucket(id=0,w=0" + none + ",output:2) bucket(id=1,w=0" + none + ",output:1) bucket(id=2,w=0" + none + ",output:65534)]"},
		"of11_dump_groups": {"group_desc_request id=0xfffffffc",
			"group_desc [type=2 id=3 bucket(id=0,w=0" + none + ",mod_dl_dst,output:2)] [type=3 id=4 bucket(id=0,w=0,port=0x1,group=" + anyP + ",output:1) bucket(id=1,w=0,port=0x2,group=0x3,output:2)] [type=1 id=2 bucket(id=0,w=10" + none + ",output:1) bucket(id=1,w=20" + none + ",output:2)] [type=0 id=1 bucket(id=0,w=0" + none + ",output:2) bucket(id=1,w=0" + none + ",output:1) bucket(id=2,w=0" + none + ",output:65534)]"},
		"of10_dump_group_stats_1":  {"group_stats_request id=0x1", "group_stats [id=1 ref=1 pkts=1 bytes=106 1/106 1/106 1/106]"},
		"of13_dump_group_features": {"group_features_request", "group_features types=0xf caps=0x7 max=[0xffffff00 0xffffff00 0xffffff00 0xffffff00] acts=[0x3ff8001 0x3ff8001 0x3ff8001 0x3ff8001]"},
		"of13_add_meter":           {"meter_mod cmd=0 flags=0xd id=1 bands=[{1 1000 100 0}]"},
		"of15_mod_meter":           {"meter_mod cmd=1 flags=0x9 id=1 bands=[{1 2000 0 0}]"},
		"of13_del_meters":          {"meter_mod cmd=2 flags=0x0 id=4294967295 bands=[]"},
		"of13_dump_meter_1":        {"meter_config_request id=0x1", "meter_config [flags=0x9 id=1 bands=[{1 2000 2000 0}]]"},
		"of15_meter_stats_2":       {"meter_stats_request id=0x2", "meter_stats [id=2 flows=0 pkts=0 bytes=0 bands=[{0 0}]]"},
		"of13_meter_features":      {"meter_features_request", "meter_features max=262144 bands=0x2 caps=0xf maxbands=8 maxcolor=0"},
	}
	for name, w := range want {
		got := groupMsgs(t, caps, name)
		for i := range got {
			got[i] = sortEntries(got[i])
		}
		for i := range w {
			w[i] = sortEntries(w[i])
		}
		if strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", name, got, w)
		}
	}
}

// sortEntries sorts the bracketed entries of a description: the switch
// dumps its groups in hash order.
func sortEntries(s string) string {
	parts := strings.Split(s, " [")
	sort.Strings(parts[1:])
	return strings.Join(parts, " [")
}

// OVSGroupFeatures and OVSMeterFeatures encode exactly the replies Open
// vSwitch sent in every version.
func TestOVSFeaturesMatchRecordedReplies(t *testing.T) {
	for _, c := range readGroupCaptures(t) {
		m, err := ofp.Decode(c.data)
		if err != nil {
			continue
		}
		var body ofp.Message
		switch m.Body.(type) {
		case *ofp.GroupFeaturesReply:
			body = ofp.OVSGroupFeatures(m.Version)
		case *ofp.MeterFeaturesReply:
			body = ofp.OVSMeterFeatures()
		default:
			continue
		}
		out := mustEncode(t, m.Version, m.XID, body)
		if !bytes.Equal(out, c.data) {
			t.Errorf("%s: features for version %d\n got %x\nwant %x", c.name, m.Version, out, c.data)
		}
	}
}

// Replies too big for one message are split into whole entries, every
// part but the last flagged OFPSF_REPLY_MORE, in every version.
func TestGroupAndMeterRepliesSplitAcrossMessages(t *testing.T) {
	out := []ofp.Action{{Type: ofp.ActOutput, Port: 1}, {Type: ofp.ActOutput, Port: 2}}
	var groups []ofp.GroupDesc
	var gstats []ofp.GroupStats
	var configs []ofp.MeterConfig
	var mstats []ofp.MeterStats
	for i := 0; i < 2000; i++ {
		groups = append(groups, ofp.GroupDesc{Type: ofp.GroupTypeSelect, GroupID: uint32(i), Buckets: []ofp.Bucket{
			{ID: 0, Weight: 1, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: out},
			{ID: 1, Weight: 2, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: out}}})
		gstats = append(gstats, ofp.GroupStats{GroupID: uint32(i), Buckets: make([]ofp.BucketStats, 2)})
		configs = append(configs, ofp.MeterConfig{MeterID: uint32(i + 1), Flags: ofp.MeterFlagKbps, Bands: []ofp.MeterBand{{Type: 1, Rate: 5}, {Type: 1, Rate: 9}}})
		mstats = append(mstats, ofp.MeterStats{MeterID: uint32(i + 1), Bands: make([]ofp.BandStats, 2)})
	}
	cases := []struct {
		v   uint8
		msg ofp.Message
		n   func(ofp.Message) int
	}{
		{1, &ofp.GroupDescReply{Groups: groups}, func(m ofp.Message) int { return len(m.(*ofp.GroupDescReply).Groups) }},
		{4, &ofp.GroupDescReply{Groups: groups}, func(m ofp.Message) int { return len(m.(*ofp.GroupDescReply).Groups) }},
		{6, &ofp.GroupDescReply{Groups: groups}, func(m ofp.Message) int { return len(m.(*ofp.GroupDescReply).Groups) }},
		{2, &ofp.GroupStatsReply{Stats: gstats}, func(m ofp.Message) int { return len(m.(*ofp.GroupStatsReply).Stats) }},
		{4, &ofp.GroupStatsReply{Stats: gstats}, func(m ofp.Message) int { return len(m.(*ofp.GroupStatsReply).Stats) }},
		{4, &ofp.MeterConfigReply{Configs: configs}, func(m ofp.Message) int { return len(m.(*ofp.MeterConfigReply).Configs) }},
		{6, &ofp.MeterStatsReply{Stats: mstats}, func(m ofp.Message) int { return len(m.(*ofp.MeterStatsReply).Stats) }},
	}
	for _, tc := range cases {
		parts, err := ofp.EncodeReplies(tc.v, 9, tc.msg)
		if err != nil {
			t.Fatalf("%T v%d: %v", tc.msg, tc.v, err)
		}
		if len(parts) < 2 {
			t.Errorf("%T v%d: %d message(s), want a split", tc.msg, tc.v, len(parts))
		}
		total := 0
		for i, p := range parts {
			if len(p) > 65535 {
				t.Fatalf("%T v%d: part %d has %d bytes", tc.msg, tc.v, i, len(p))
			}
			m, err := ofp.Decode(p)
			if err != nil {
				t.Fatalf("%T v%d part %d: %v", tc.msg, tc.v, i, err)
			}
			if more := binary.BigEndian.Uint16(p[10:])&ofp.StatsReplyMore != 0; more != (i < len(parts)-1) {
				t.Errorf("%T v%d part %d: more=%v", tc.msg, tc.v, i, more)
			}
			total += tc.n(m.Body)
		}
		if total != tc.n(tc.msg) {
			t.Errorf("%T v%d: %d entries after the split, want %d", tc.msg, tc.v, total, tc.n(tc.msg))
		}
	}
}

// Buckets without an ID get the ones ovs-ofctl allocates: a group mod
// built as ovs-ofctl parsed add-group encodes to the bytes it sent.
func TestUnsetBucketIDsAreAllocatedAsOVSOfctlDoes(t *testing.T) {
	unset := func(p uint32) ofp.Bucket {
		return ofp.Bucket{ID: ofp.BucketAll, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: []ofp.Action{{Type: ofp.ActOutput, Port: p}}}
	}
	for _, name := range []string{"of15_add_group_all", "of10_add_group_all"} {
		var want []byte
		var v uint8
		for _, c := range readGroupCaptures(t) {
			if c.name == name && c.sent && (c.data[1] == 15 || c.data[1] == 4) {
				want, v = c.data, c.data[0]
			}
		}
		gm := &ofp.GroupMod{Command: ofp.GroupAdd, Type: ofp.GroupTypeAll, GroupID: 1, CommandBucketID: ofp.BucketAll,
			Buckets: []ofp.Bucket{unset(1), unset(2)}}
		if got := mustEncode(t, v, binary.BigEndian.Uint32(want[4:]), gm); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %x\nwant %x", name, got, want)
		}
	}
	// Explicit IDs after the first unset bucket are skipped; the
	// allocated ones are 0, 2 here.
	gm := &ofp.GroupMod{Type: ofp.GroupTypeAll, GroupID: 1, CommandBucketID: ofp.BucketAll, Buckets: []ofp.Bucket{unset(1), unset(2), unset(3)}}
	gm.Buckets[1].ID = 1
	m, err := ofp.Decode(mustEncode(t, 6, 1, gm))
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint32
	for _, b := range m.Body.(*ofp.GroupMod).Buckets {
		ids = append(ids, b.ID)
	}
	if fmt.Sprint(ids) != "[0 1 2]" {
		t.Errorf("bucket ids %v, want [0 1 2]", ids)
	}
}
