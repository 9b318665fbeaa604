package ofp_test

import (
	"bytes"
	"encoding/binary"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Every message ovs-ofctl and ovs-vswitchd exchanged for the stats
// commands decodes (the stats ones to typed values, not *Unknown) and
// re-encodes byte for byte.
func TestStatsCapturesRoundTripByteIdentical(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range readStatsCaptures(t) {
		m, err := ofp.Decode(c.data)
		if err != nil {
			t.Errorf("%s: decode %x: %v", c.name, c.data, err)
			continue
		}
		seen[m.Raw.String()] = true
		if _, unknown := m.Body.(*ofp.Unknown); unknown && strings.Contains(m.Raw.String(), "ST") {
			t.Errorf("%s: %s decoded as Unknown", c.name, m.Raw)
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
	for _, want := range []string{"OFPST_DESC_REQUEST", "OFPST_DESC_REPLY",
		"OFPST10_FLOW_REQUEST", "OFPST11_FLOW_REQUEST", "NXST_FLOW_REQUEST",
		"OFPST10_FLOW_REPLY", "OFPST13_FLOW_REPLY", "OFPST15_FLOW_REPLY", "NXST_FLOW_REPLY",
		"OFPST10_AGGREGATE_REQUEST", "OFPST11_AGGREGATE_REQUEST", "OFPST15_AGGREGATE_REQUEST", "NXST_AGGREGATE_REQUEST",
		"OFPST_AGGREGATE_REPLY", "OFPST15_AGGREGATE_REPLY", "NXST_AGGREGATE_REPLY",
		"OFPST_TABLE_REQUEST", "OFPST10_TABLE_REPLY", "OFPST11_TABLE_REPLY", "OFPST12_TABLE_REPLY", "OFPST13_TABLE_REPLY",
		"OFPST10_PORT_REQUEST", "OFPST11_PORT_REQUEST", "OFPST10_PORT_REPLY", "OFPST11_PORT_REPLY",
		"OFPST13_PORT_REPLY", "OFPST14_PORT_REPLY", "OFPST10_PORT_DESC_REQUEST", "OFPST15_PORT_DESC_REQUEST",
		"OFPST10_PORT_DESC_REPLY", "OFPST11_PORT_DESC_REPLY", "OFPST14_PORT_DESC_REPLY",
		"OFPT10_PORT_STATUS", "OFPT11_PORT_STATUS", "OFPT14_PORT_STATUS",
		"OFPST13_TABLE_FEATURES_REQUEST", "OFPST13_TABLE_FEATURES_REPLY"} {
		if !seen[want] {
			t.Errorf("no captured %s", want)
		}
	}
}

// statsMsgs returns the decoded messages of a capture sent in one
// direction whose bodies have type T.
func statsMsgs[T ofp.Message](t *testing.T, name string, sent bool) []T {
	t.Helper()
	var out []T
	for _, c := range readStatsCaptures(t) {
		if c.name != name || c.sent != sent {
			continue
		}
		m, err := ofp.Decode(c.data)
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := m.Body.(T); ok {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no %T", name, *new(T))
	}
	return out
}

func TestCapturedStatsRequestsDecodeToExpectedValues(t *testing.T) {
	for _, tc := range []struct {
		capture string
		want    ofp.FlowStatsRequest
		fields  map[string]string // field -> value/mask hex
	}{
		{"of10_dump_flows", ofp.FlowStatsRequest{Format: ofp.FormatOF10, TableID: 0, OutPort: 0xffff}, nil},
		{"of10_dump_flows_port", ofp.FlowStatsRequest{Format: ofp.FormatOF10, TableID: 0xff, OutPort: 2},
			map[string]string{"in_port": "0001/ffff"}},
		{"nxm_dump_flows_cookie", ofp.FlowStatsRequest{Format: ofp.FormatNXM, TableID: 1, OutPort: 0xffff,
			Cookie: 0xabc, CookieMask: ^uint64(0)}, nil},
		{"nxm_dump_aggregate", ofp.FlowStatsRequest{Format: ofp.FormatNXM, Aggregate: true, TableID: 0xff, OutPort: 0xffff,
			Cookie: 5, CookieMask: ^uint64(0)}, nil},
		{"of13_dump_flows_cookie", ofp.FlowStatsRequest{Format: ofp.FormatOXM, TableID: 0xff, OutPort: 2, OutGroup: ofp.GroupAny,
			Cookie: 5, CookieMask: 0xff}, map[string]string{"eth_type": "0800/ffff"}},
		{"of15_dump_aggregate", ofp.FlowStatsRequest{Format: ofp.FormatOXM, Aggregate: true, TableID: 0, OutPort: ofp.PortAny,
			OutGroup: ofp.GroupAny}, nil},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			reqs := statsMsgs[*ofp.FlowStatsRequest](t, tc.capture, true)
			got := *reqs[0]
			for f, want := range tc.fields {
				if v, k := get(t, &got.Match, f); v+"/"+k != want {
					t.Errorf("%s = %s/%s, want %s", f, v, k, want)
				}
			}
			got.Match, tc.want.Match = mf.Match{}, mf.Match{}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	if r := statsMsgs[*ofp.PortStatsRequest](t, "of10_dump_ports", true)[0]; r.PortNo != ofp.PortAny {
		t.Errorf("OF1.0 port stats request for all ports: PortNo %#x", r.PortNo)
	}
	if r := statsMsgs[*ofp.PortStatsRequest](t, "of15_dump_ports_local", true)[0]; r.PortNo != 0xfffffffe {
		t.Errorf("OF1.5 port stats request for LOCAL: PortNo %#x", r.PortNo)
	}
	if r := statsMsgs[*ofp.PortDescRequest](t, "of15_dump_ports_desc_1", true)[0]; r.PortNo != 1 {
		t.Errorf("OF1.5 port desc request: PortNo %#x", r.PortNo)
	}
	if r := statsMsgs[*ofp.PortDescRequest](t, "of13_dump_ports_desc", true)[0]; r.PortNo != ofp.PortAny {
		t.Errorf("OF1.3 port desc request: PortNo %#x", r.PortNo)
	}
}

func TestCapturedStatsRepliesDecodeToExpectedValues(t *testing.T) {
	d := statsMsgs[*ofp.DescStatsReply](t, "of13_dump_desc", false)[0]
	if *d != (ofp.DescStatsReply{MfrDesc: "Nicira, Inc.", HWDesc: "Open vSwitch", SWDesc: "3.1.0", SerialNum: "None", DPDesc: "None"}) {
		t.Errorf("desc %+v", d)
	}

	// The flow added with in_port=1,actions=output:2 in OF1.0, NXM, OF1.3, OF1.5.
	for _, tc := range []struct {
		capture  string
		format   ofp.FlowFormat
		idleAge  int
		actions  string
		hardAges bool
	}{
		{"of10_dump_flows", ofp.FormatOF10, -1, "0000000800020000", false},
		{"nxm_dump_flows", ofp.FormatNXM, 0, "0000000800020000", true},
		{"of13_dump_flows", ofp.FormatOXM, -1, "00040018000000000000001000000002000000000000000000", false},
		{"of15_dump_flows", ofp.FormatOXM, 0, "00040018000000000000001000000002000000000000000000", false},
	} {
		r := statsMsgs[*ofp.FlowStatsReply](t, tc.capture, false)[0]
		fs := r.Stats[0]
		if r.Format != tc.format || fs.TableID != 0 || fs.Priority != 100 || fs.Cookie != 0 || fs.IdleAge != tc.idleAge ||
			fs.PacketCount == 0 || fs.ByteCount != 106*fs.PacketCount || !strings.HasPrefix(tc.actions, hexs(fs.Actions)) {
			t.Errorf("%s: %+v", tc.capture, fs)
		}
		if (fs.HardAge >= 0) != tc.hardAges {
			t.Errorf("%s: hard age %d", tc.capture, fs.HardAge)
		}
		if v, k := get(t, &fs.Match, "in_port"); v != "0001" || k != "ffff" {
			t.Errorf("%s: in_port %s/%s", tc.capture, v, k)
		}
	}
	// The table-1 flow with timeouts, flags, importance and cookie.
	f14 := statsMsgs[*ofp.FlowStatsReply](t, "of14_dump_flows", false)[0].Stats[0]
	if f14.TableID != 1 || f14.Priority != 7 || f14.IdleTimeout != 60 || f14.HardTimeout != 120 || f14.Flags != 1 ||
		f14.Importance != 3 || f14.Cookie != 0xabc {
		t.Errorf("of14 table 1 flow: %+v", f14)
	}
	if v, _ := get(t, &f14.Match, "eth_dst"); v != "000000000002" {
		t.Errorf("of14 table 1 flow: eth_dst %s", v)
	}

	for _, tc := range []struct {
		capture string
		want    ofp.AggregateStatsReply
	}{
		{"of10_dump_aggregate", ofp.AggregateStatsReply{Format: ofp.FormatOF10, PacketCount: 3, ByteCount: 318, FlowCount: 3}},
		{"nxm_dump_aggregate", ofp.AggregateStatsReply{Format: ofp.FormatNXM, FlowCount: 1}},
		{"of13_dump_aggregate", ofp.AggregateStatsReply{Format: ofp.FormatOXM, PacketCount: 3, ByteCount: 318, FlowCount: 804}},
		{"of15_dump_aggregate", ofp.AggregateStatsReply{Format: ofp.FormatOXM, PacketCount: 3, ByteCount: 318, FlowCount: 3}},
	} {
		if got := statsMsgs[*ofp.AggregateStatsReply](t, tc.capture, false)[0]; *got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.capture, *got, tc.want)
		}
	}

	// 254 tables; OF1.0–1.2 legacy columns are what SetOVSLegacy gives.
	for _, tc := range []struct {
		capture string
		v       uint8
	}{{"of10_dump_tables", 1}, {"of11_dump_tables", 2}, {"of12_dump_tables", 3}, {"of13_dump_tables", 4}, {"of15_dump_tables", 6}} {
		r := statsMsgs[*ofp.TableStatsReply](t, tc.capture, false)[0]
		if len(r.Stats) != 254 {
			t.Fatalf("%s: %d tables", tc.capture, len(r.Stats))
		}
		for i, ts := range r.Stats {
			want := ofp.TableStats{TableID: uint8(i), ActiveCount: ts.ActiveCount, LookupCount: ts.LookupCount, MatchedCount: ts.MatchedCount}
			if tc.v <= 3 {
				want.SetOVSLegacy(tc.v, i == 253)
			}
			if ts != want {
				t.Fatalf("%s: table %d: %+v\nwant %+v", tc.capture, i, ts, want)
			}
		}
		if r.Stats[0].ActiveCount != 3 || r.Stats[5].ActiveCount != 800 {
			t.Errorf("%s: active counts %d %d", tc.capture, r.Stats[0].ActiveCount, r.Stats[5].ActiveCount)
		}
	}

	// Port 1 received the three 106-byte packets; port 2 sent them.
	for _, tc := range []struct {
		capture string
		port    uint32
	}{{"of10_dump_ports_1", 1}, {"of11_dump_ports", 2}, {"of13_dump_ports", 1}, {"of14_dump_ports", 1}} {
		var ps *ofp.PortStats
		for _, s := range statsMsgs[*ofp.PortStatsReply](t, tc.capture, false)[0].Stats {
			if s.PortNo == tc.port {
				ps = &s
			}
		}
		if ps == nil {
			t.Fatalf("%s: no port %d", tc.capture, tc.port)
		}
		rx, tx := ps.RxPackets, ps.TxPackets
		if tc.port == 2 {
			rx, tx = tx, rx
		}
		if rx != 3 || tx != 0 || ps.RxDropped != ^uint64(0) || ps.Collisions != ^uint64(0) {
			t.Errorf("%s: %+v", tc.capture, *ps)
		}
	}
	ps14 := statsMsgs[*ofp.PortStatsReply](t, "of14_dump_ports", false)[0].Stats
	if len(ps14) != 3 || ps14[0].PortNo != 0xfffffffe || len(ps14[0].ExtraProps) != 184+160 {
		t.Errorf("of14 port stats: %d ports, first %#x with %d bytes of extra properties", len(ps14), ps14[0].PortNo, len(ps14[0].ExtraProps))
	}
	if ps := statsMsgs[*ofp.PortStatsReply](t, "of10_dump_ports", false)[0].Stats; ps[0].PortNo != 0xfffffffe {
		t.Errorf("OF1.0 LOCAL port stats: PortNo %#x, want the 32-bit form", ps[0].PortNo)
	}

	for _, tc := range []struct {
		capture string
		state   uint32
	}{{"of10_dump_ports_desc", 0}, {"of13_dump_ports_desc", 4}, {"of14_dump_ports_desc", 4}, {"of15_dump_ports_desc", 4}} {
		ports := statsMsgs[*ofp.PortDescReply](t, tc.capture, false)[0].Ports
		if len(ports) != 3 {
			t.Fatalf("%s: %d ports", tc.capture, len(ports))
		}
		for i, want := range []struct {
			no   uint32
			name string
		}{{0xfffffffe, "br0"}, {1, "p1"}, {2, "p2"}} {
			p := ports[i]
			if p.PortNo != want.no || strings.TrimRight(string(p.Name[:]), "\x00") != want.name || p.State != tc.state {
				t.Errorf("%s: port %d: %+v", tc.capture, i, p)
			}
		}
		if ports[1].HWAddr != [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 2} {
			t.Errorf("%s: p1 address %x", tc.capture, ports[1].HWAddr)
		}
	}
}

// The port status messages ovs-vswitchd sent while p3 was added, brought
// down and deleted decode with the 32-bit port number in every version.
func TestCapturedPortStatusDecodesInEveryVersion(t *testing.T) {
	for _, name := range []string{"of10_monitor_port_status", "of13_monitor_port_status",
		"of14_monitor_port_status", "of15_monitor_port_status"} {
		ps := statsMsgs[*ofp.PortStatus](t, name, false)
		var reasons []uint8
		for _, m := range ps {
			reasons = append(reasons, m.Reason)
			if m.Desc.PortNo != 3 || strings.TrimRight(string(m.Desc.Name[:]), "\x00") != "p3" || m.Desc.HWAddr[0] != 0xaa {
				t.Errorf("%s: %+v", name, m.Desc)
			}
		}
		if len(reasons) < 3 || reasons[0] != ofp.PortAdd || reasons[len(reasons)-1] != ofp.PortDelete || reasons[1] != ofp.PortModify {
			t.Errorf("%s: reasons %v, want add, modify..., delete", name, reasons)
		}
		if last := ps[len(ps)-1].Desc; last.Config != 1 || last.State != 1 { // OFPPC_PORT_DOWN, OFPPS_LINK_DOWN
			t.Errorf("%s: deleted port config %#x state %#x", name, last.Config, last.State)
		}
	}
}

// Open vSwitch's table features: 254 tables, each listing the five
// instructions (no goto_table in the last) and the tables after it.
func TestCapturedTableFeaturesDecode(t *testing.T) {
	for _, name := range []string{"of13_dump_flows_big", "of15_dump_aggregate"} {
		var tables []ofp.TableFeatures
		for _, r := range statsMsgs[*ofp.TableFeaturesReply](t, name, false) {
			tables = append(tables, r.Tables...)
		}
		if len(tables) != 254 {
			t.Fatalf("%s: %d tables", name, len(tables))
		}
		for _, i := range []int{0, 1, 253} {
			tf := tables[i]
			if tf.TableID != uint8(i) || tf.MaxEntries != 1000000 || tf.MetadataMatch != ^uint64(0) || tf.MetadataWrite != ^uint64(0) {
				t.Errorf("%s: table %d: %+v", name, i, tf)
			}
			props := map[uint16][]byte{}
			for _, p := range tf.Props {
				props[p.Type] = p.Data
			}
			// goto_table (not in the last table), write_metadata,
			// write/apply/clear_actions, and meter until OpenFlow 1.5
			// made it an action.
			wantInst := "0001000400020004000300040004000400050004"
			if i == 253 {
				wantInst = wantInst[8:]
			}
			if name == "of13_dump_flows_big" {
				wantInst += "00060004"
			}
			if got := hexs(props[ofp.TFPInstructions]); got != wantInst {
				t.Errorf("%s: table %d instructions %s, want %s", name, i, got, wantInst)
			}
			if next := props[ofp.TFPNextTables]; len(next) != 253-i || (i < 253 && (next[0] != uint8(i+1) || next[len(next)-1] != 253)) {
				t.Errorf("%s: table %d next tables %x", name, i, next)
			}
			if len(props[ofp.TFPMatch]) == 0 || len(props[ofp.TFPApplyActions]) == 0 {
				t.Errorf("%s: table %d lacks match or apply-actions properties", name, i)
			}
		}
	}
	if r := statsMsgs[*ofp.TableFeaturesRequest](t, "of13_dump_flows_big", true)[0]; len(r.Tables) != 0 {
		t.Errorf("ovs-ofctl's table features request carries %d tables", len(r.Tables))
	}
}

func hexs(b []byte) string {
	const digits = "0123456789abcdef"
	var sb strings.Builder
	for _, c := range b {
		sb.WriteByte(digits[c>>4])
		sb.WriteByte(digits[c&15])
	}
	return sb.String()
}

// replyGroups returns, per capture, the runs of switch replies of one
// multipart type with the same transaction ID, in order.
func replyGroups(t *testing.T, name string) [][][]byte {
	var groups [][][]byte
	var last uint64
	for _, c := range readStatsCaptures(t) {
		if c.name != name || c.sent || len(c.data) < 16 || (c.data[1] != 17 && c.data[1] != 19) {
			continue
		}
		key := uint64(binary.BigEndian.Uint32(c.data[4:]))<<16 | uint64(binary.BigEndian.Uint16(c.data[8:]))
		if len(groups) == 0 || key != last {
			groups = append(groups, nil)
		}
		last = key
		groups[len(groups)-1] = append(groups[len(groups)-1], c.data)
	}
	return groups
}

// Replies Open vSwitch split across messages (OF1.0 and OF1.3 flow stats
// of 800+ flows, OF1.5 flow stats, table features) are split the same way by
// EncodeReplies: gathering the entries of every part and re-encoding
// them gives the same messages, MORE flags included.
func TestEncodeRepliesSplitsAsOVS(t *testing.T) {
	split := 0
	for _, name := range []string{"of10_dump_flows_big", "nxm_dump_flows_big", "of13_dump_flows_big", "of13_dump_flows",
		"of14_dump_flows", "of15_dump_aggregate",
		"of15_dump_flows", "of10_dump_tables", "of12_dump_tables", "of14_dump_ports", "of14_dump_ports_desc"} {
		for _, g := range replyGroups(t, name) {
			first, err := ofp.Decode(g[0])
			if err != nil {
				t.Fatal(err)
			}
			var all ofp.Message
			switch b := first.Body.(type) {
			case *ofp.FlowStatsReply:
				r := &ofp.FlowStatsReply{Format: b.Format}
				for _, p := range g {
					m, _ := ofp.Decode(p)
					r.Stats = append(r.Stats, m.Body.(*ofp.FlowStatsReply).Stats...)
				}
				all = r
			case *ofp.TableFeaturesReply:
				r := &ofp.TableFeaturesReply{}
				for _, p := range g {
					m, _ := ofp.Decode(p)
					r.Tables = append(r.Tables, m.Body.(*ofp.TableFeaturesReply).Tables...)
				}
				all = r
			case *ofp.TableStatsReply:
				all = &ofp.TableStatsReply{Stats: b.Stats}
			case *ofp.PortStatsReply:
				all = &ofp.PortStatsReply{Stats: b.Stats}
			case *ofp.PortDescReply:
				all = &ofp.PortDescReply{Ports: b.Ports}
			default:
				continue
			}
			out, err := ofp.EncodeReplies(first.Version, first.XID, all)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(out) != len(g) {
				t.Errorf("%s: %s in %d messages, Open vSwitch sent %d", name, first.Raw, len(out), len(g))
				continue
			}
			if len(g) > 1 {
				split++
			}
			for i := range g {
				if !bytes.Equal(out[i], g[i]) {
					t.Errorf("%s: part %d differs\n got %x...\nwant %x...", name, i, out[i][:32], g[i][:32])
				}
			}
		}
	}
	if split < 3 {
		t.Errorf("only %d split replies checked", split)
	}
}

func TestEncodeRepliesKeepsSmallRepliesWhole(t *testing.T) {
	out, err := ofp.EncodeReplies(4, 9, &ofp.PortStatsReply{})
	if err != nil || len(out) != 1 || hexs(out[0]) != "04130010000000090004000000000000" {
		t.Errorf("empty port stats reply: %x, %v", out, err)
	}
	out, err = ofp.EncodeReplies(4, 9, &ofp.AggregateStatsReply{Format: ofp.FormatOXM, FlowCount: 1})
	if err != nil || len(out) != 1 || len(out[0]) != 40 {
		t.Errorf("aggregate reply: %x, %v", out, err)
	}
	// An entry that cannot fit in any message is an error, not a panic.
	_, err = ofp.EncodeReplies(1, 9, &ofp.FlowStatsReply{Stats: []ofp.FlowStats{{Actions: make([]byte, 65500)}}})
	if ofp.CodeOf(err) != ofp.OFPBRC_BAD_LEN {
		t.Errorf("oversized entry: %v", err)
	}
}

func inPort1() mf.Match {
	var m mf.Match
	if err := m.SetMasked(mf.ByName("in_port"), []byte{0, 1}, []byte{0xff, 0xff}); err != nil {
		panic(err)
	}
	return m
}

// ovs-ofctl ofp-print prints gvs's encodings of hand-built stats messages
// as expected.
func TestEncodedStatsPrintInOVSOfctl(t *testing.T) {
	ofctl := needOVSOfctl(t)
	out10 := mustHex("0000000800020000")                                 // output:2
	out13 := mustHex("00040018000000000000001000000002ffe5000000000000") // apply_actions(output:2)
	flow := func(actions []byte) ofp.FlowStats {
		return ofp.FlowStats{TableID: 0, DurationSec: 5, DurationNsec: 250000000, Priority: 100, IdleTimeout: 10,
			IdleAge: 3, HardAge: 4, Cookie: 0x1234, PacketCount: 7, ByteCount: 700, Match: inPort1(), Actions: actions}
	}
	eth := ofp.Port{PortNo: 1, HWAddr: [6]byte{0, 0, 0, 0, 0, 1}, Name: [16]byte{'p', '1'}, State: 4, Curr: 0x1040, CurrSpeed: 10000000, MaxSpeed: 10000000}
	for _, tc := range []struct {
		name string
		v    uint8
		m    ofp.Message
		want []string
	}{
		{"of10 flow", 1, &ofp.FlowStatsReply{Format: ofp.FormatOF10, Stats: []ofp.FlowStats{flow(out10)}},
			[]string{"OFPST_FLOW reply (xid=0x7):", " cookie=0x1234, duration=5.250s, table=0, n_packets=7, n_bytes=700, idle_timeout=10, priority=100,in_port=1 actions=output:2"}},
		{"nxm flow", 1, &ofp.FlowStatsReply{Format: ofp.FormatNXM, Stats: []ofp.FlowStats{flow(out10)}},
			[]string{"NXST_FLOW reply (xid=0x7):", " cookie=0x1234, duration=5.250s, table=0, n_packets=7, n_bytes=700, idle_timeout=10, idle_age=3, hard_age=4, priority=100,in_port=1 actions=output:2"}},
		{"of13 flow", 4, &ofp.FlowStatsReply{Format: ofp.FormatOXM, Flags: ofp.StatsReplyMore, Stats: []ofp.FlowStats{flow(out13)}},
			[]string{"OFPST_FLOW reply (OF1.3) (xid=0x7): flags=[more]", " cookie=0x1234, duration=5.250s, table=0, n_packets=7, n_bytes=700, idle_timeout=10, priority=100,in_port=1 actions=output:2"}},
		{"of15 flow", 6, &ofp.FlowStatsReply{Format: ofp.FormatOXM, Stats: []ofp.FlowStats{flow(out13)}},
			[]string{"OFPST_FLOW reply (OF1.5) (xid=0x7):", " cookie=0x1234, duration=5.250s, table=0, n_packets=7, n_bytes=700, idle_timeout=10, idle_age=3, priority=100,in_port=1 actions=output:2"}},
		{"of10 flow request", 1, &ofp.FlowStatsRequest{Format: ofp.FormatOF10, TableID: 3, OutPort: 2, Match: inPort1()},
			[]string{"OFPST_FLOW request (xid=0x7): table=3 out_port=2 in_port=1"}},
		// ovs-ofctl does not print a request's cookie; the captures check its encoding.
		{"nxm aggregate request", 1, &ofp.FlowStatsRequest{Format: ofp.FormatNXM, Aggregate: true, TableID: 0xff, OutPort: 0xffff, Cookie: 5, CookieMask: 0xff, Match: inPort1()},
			[]string{"NXST_AGGREGATE request (xid=0x7): in_port=1"}},
		{"of15 aggregate request", 6, &ofp.FlowStatsRequest{Format: ofp.FormatOXM, Aggregate: true, TableID: 0xff, OutPort: 2, OutGroup: ofp.GroupAny, Match: inPort1()},
			[]string{"OFPST_AGGREGATE request (OF1.5) (xid=0x7): out_port=2 in_port=1"}},
		{"of15 aggregate", 6, &ofp.AggregateStatsReply{Format: ofp.FormatOXM, PacketCount: 7, ByteCount: 700, FlowCount: 2},
			[]string{"OFPST_AGGREGATE reply (OF1.5) (xid=0x7): packet_count=7 byte_count=700 flow_count=2"}},
		{"nxm aggregate", 1, &ofp.AggregateStatsReply{Format: ofp.FormatNXM, PacketCount: 7, ByteCount: 700, FlowCount: 2},
			[]string{"NXST_AGGREGATE reply (xid=0x7): packet_count=7 byte_count=700 flow_count=2"}},
		{"desc", 4, &ofp.DescStatsReply{MfrDesc: "gvs project", HWDesc: "gvs", SWDesc: "0.1", SerialNum: "None", DPDesc: "br0"},
			[]string{"Manufacturer: gvs project", "Hardware: gvs", "Software: 0.1", "Serial Num: None", "DP Description: br0"}},
		{"of14 port stats", 5, &ofp.PortStatsReply{Stats: []ofp.PortStats{{PortNo: 1, RxPackets: 3, TxPackets: 4, RxBytes: 300, TxBytes: 400,
			RxDropped: 1, TxDropped: 2, RxErrors: 5, TxErrors: 6, RxFrameErr: 7, RxOverErr: 8, RxCRCErr: 9, Collisions: 10, DurationSec: 2, DurationNsec: 500000000}}},
			[]string{"OFPST_PORT reply (OF1.4) (xid=0x7): 1 ports", "  port  1: rx pkts=3, bytes=300, drop=1, errs=5, frame=7, over=8, crc=9",
				"           tx pkts=4, bytes=400, drop=2, errs=6, coll=10", "           duration=2.500s"}},
		{"of10 port stats local", 1, &ofp.PortStatsReply{Stats: []ofp.PortStats{{PortNo: 0xfffffffe, RxPackets: 1}}},
			[]string{"OFPST_PORT reply (xid=0x7): 1 ports", "  port LOCAL: rx pkts=1, bytes=0, drop=0, errs=0, frame=0, over=0, crc=0"}},
		{"of10 port stats request", 1, &ofp.PortStatsRequest{PortNo: ofp.PortAny}, []string{"OFPST_PORT request (xid=0x7): port_no=ANY"}},
		{"of14 port desc", 5, &ofp.PortDescReply{Ports: []ofp.Port{eth}},
			[]string{"OFPST_PORT_DESC reply (OF1.4) (xid=0x7):", " 1(p1): addr:00:00:00:00:00:01", "     current:    10GB-FD FIBER", "     speed: 10000 Mbps now, 10000 Mbps max"}},
		{"of15 port desc request", 6, &ofp.PortDescRequest{PortNo: 1}, []string{"OFPST_PORT_DESC request (OF1.5) (xid=0x7): port=1"}},
		{"of10 port status", 1, &ofp.PortStatus{Reason: ofp.PortAdd, Desc: ofp.Port{PortNo: 0xfffffffe, Name: [16]byte{'b', 'r', '0'}}},
			[]string{"OFPT_PORT_STATUS (xid=0x7): ADD: LOCAL(br0): addr:00:00:00:00:00:00"}},
		{"of13 port status", 4, &ofp.PortStatus{Reason: ofp.PortModify, Desc: eth},
			[]string{"OFPT_PORT_STATUS (OF1.3) (xid=0x7): MOD: 1(p1): addr:00:00:00:00:00:01", "     state:      LIVE"}},
		{"of15 port status", 6, &ofp.PortStatus{Reason: ofp.PortDelete, Desc: eth},
			[]string{"OFPT_PORT_STATUS (OF1.5) (xid=0x7): DEL: 1(p1): addr:00:00:00:00:00:01", "     speed: 10000 Mbps now, 10000 Mbps max"}},
		{"of13 table features", 4, &ofp.TableFeaturesReply{Tables: []ofp.TableFeatures{{TableID: 0, Name: "classifier", MaxEntries: 1000,
			MetadataMatch: ^uint64(0), MetadataWrite: ^uint64(0), Props: []ofp.TableFeatureProp{
				{Type: ofp.TFPInstructions, Data: mustHex("00010004 00040004")}, {Type: ofp.TFPInstructions + 1, Data: mustHex("00040004")},
				{Type: ofp.TFPNextTables, Data: []byte{1, 2}}, {Type: ofp.TFPNextTables + 1, Data: []byte{1}},
				{Type: ofp.TFPWriteActions, Data: mustHex("00000004")}, {Type: ofp.TFPWriteActions + 1},
				{Type: ofp.TFPApplyActions, Data: mustHex("00000004")}, {Type: ofp.TFPApplyActions + 1},
				{Type: ofp.TFPWriteSetfield, Data: mustHex("80000606")}, {Type: ofp.TFPApplySetfield, Data: mustHex("80000606")},
				{Type: ofp.TFPMatch, Data: mustHex("80000004 8000070c")}, {Type: ofp.TFPWildcards, Data: mustHex("80000004 80000606")}}}}},
			[]string{"OFPST_TABLE_FEATURES reply (OF1.3) (xid=0x7):", "  table 0 (\"classifier\"):", "    max_entries=1000",
				"      next tables: 1-2", "      instructions: apply_actions goto_table", "        actions: output",
				"        supported on Set-Field: eth_dst", "      next tables: 1", "      instructions: apply_actions",
				"    matching:", "      arbitrary mask: eth_dst", "      exact match or wildcard: in_port_oxm"}},
		{"of13 tables", 4, &ofp.TableStatsReply{Stats: []ofp.TableStats{{TableID: 0, ActiveCount: 4, LookupCount: 10, MatchedCount: 8}}},
			[]string{"OFPST_TABLE reply (OF1.3) (xid=0x7):", "  table 0:", "    active=4, lookup=10, matched=8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := ofp.Encode(nil, tc.v, 7, tc.m)
			if err != nil {
				t.Fatal(err)
			}
			out := runOfpPrint(t, ofctl, msg)
			for _, w := range tc.want {
				if !strings.Contains(out, w+"\n") {
					t.Errorf("ovs-ofctl printed:\n%s\nwant a line %q", out, w)
				}
			}
			m, err := ofp.Decode(msg)
			if err != nil {
				t.Fatalf("decode own encoding: %v", err)
			}
			again, err := ofp.EncodeMsg(nil, m)
			if err != nil || !bytes.Equal(again, msg) {
				t.Errorf("round trip: %v\n got %x\nwant %x", err, again, msg)
			}
		})
	}
}

// malformedStats are bad stats messages with the error Open vSwitch's
// decoder reports for them (checked by TestMalformedStatsMatchOVSOfctl);
// the header length is set to the bytes given.
var malformedStats = []struct {
	name string
	msg  string
	want ofp.ErrCode
}{
	{"desc reply short", "04130018 00000001 00000000 00000000 4e696369 72610000", ofp.OFPBRC_BAD_LEN},
	{"of13 flow entry shorter than fixed part", "04130048 00000001 00010000 00000000 0010" + z(54), ofp.OFPBRC_BAD_LEN},
	{"of13 flow trailing byte", "04130011 00000001 00010000 00000000 00", ofp.OFPBRC_BAD_LEN},
	{"of13 flow match beyond body", "04130000 00000001 00010000 00000000 0038" + z(46) + "00010010 00000000", ofp.OFPBMC_BAD_LEN},
	{"of13 flow length beyond body", "04130000 00000001 00010000 00000000 0080" + z(46) + "00010004 00000000", ofp.OFPBIC_BAD_LEN},
	{"of13 flow length short of match", "04130000 00000001 00010000 00000000 0030" + z(46) + "00010004 00000000", ofp.OFPBIC_BAD_LEN},
	{"of10 flow length beyond body", "01110000 00000001 00010000 0080" + z(86), ofp.OFPBRC_BAD_LEN},
	{"of10 flow actions not a multiple of 8", "01110000 00000001 00010000 005c" + z(86) + z(6), ofp.OFPBRC_BAD_LEN},
	{"nxst flow length short of match", "01110000 00000001 ffff0000 00002320 00000000 00000000 0030 0000 00000000 00000000 0000 0000 0000 0008" + z(36), ofp.OFPBRC_BAD_LEN},
	{"of15 flow length beyond body", "06130000 00000001 00010000 00000000 0080" + z(22) + "00010004 00000000 00000004 00000000", ofp.OFPBIC_BAD_LEN},
	// Open vSwitch reports a bad OXS stat with an invalid error code.
	{"of15 oxs stat beyond body", "06130000 00000001 00010000 00000000 0028" + z(22) + "00010004 00000000 00000040 00000000", ofp.OFPBMC_BAD_LEN},
	{"of14 port stats length beyond body", "05130000 00000001 00040000 00000000 0080" + z(78), ofp.OFPBRC_BAD_LEN},
	{"of14 port stats entry short", "05130020 00000001 00040000 00000000 0010 0000 00000001 00000000 00000000", ofp.OFPBRC_BAD_LEN},
	{"of14 port stats ethernet property short", "05130070 00000001 00040000 00000000 0060 0000 00000001" + z(72) + "0000 0010 00000000 00000000 00000000", ofp.OFPBPC_BAD_LEN},
	{"of14 port desc length beyond body", "05130000 00000001 000d0000 00000000 00000001 0080" + z(34), ofp.OFPBRC_BAD_LEN},
	{"of14 port desc bad property length", "05130058 00000001 000d0000 00000000 00000001 00480000" + z(32) + "0000 0030" + z(28), ofp.OFPBPC_BAD_LEN},
	{"table features length beyond body", "04130000 00000001 000c0000 00000000 0080" + z(62), ofp.OFPBPC_BAD_LEN},
	{"table features bad property length", "04130000 00000001 000c0000 00000000 0048" + z(62) + "0000 0010 00000000", ofp.OFPBPC_BAD_LEN},
	{"port status truncated", "0405 0048 00000001 00" + z(60), ofp.OFPBRC_BAD_LEN},
	{"of10 port stats request short", "0110000e 00000001 00040000 0001", ofp.OFPBRC_BAD_LEN},
}

func z(n int) string { return strings.Repeat("00", n) }

func malformedStatsBytes(msg string) []byte {
	b := mustHex(msg)
	binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
	return b
}

// Malformed stats bodies fail with Open vSwitch's error code, never a
// panic.
func TestMalformedStatsGiveOVSErrors(t *testing.T) {
	for _, tc := range malformedStats {
		t.Run(tc.name, func(t *testing.T) {
			b := malformedStatsBytes(tc.msg)
			_, err := ofp.Decode(b)
			if got := ofp.CodeOf(err); got != tc.want {
				t.Errorf("%x: got %v (%s), want %s", b, err, got, tc.want)
			}
		})
	}
}

var decodeErrorLine = regexp.MustCompile(`\*\*\*decode error: (\S+)\*\*\*`)

// ovs-ofctl ofp-print reports the same error for each malformed message.
func TestMalformedStatsMatchOVSOfctl(t *testing.T) {
	ofctl := needOVSOfctl(t)
	for _, tc := range malformedStats {
		out, _ := exec.Command(ofctl, "ofp-print", hexs(malformedStatsBytes(tc.msg))).CombinedOutput()
		m := decodeErrorLine.FindStringSubmatch(string(out))
		switch {
		case m == nil:
			t.Errorf("%s: ovs-ofctl printed no decode error:\n%s", tc.name, out)
		case m[1] == "<invalid>" && strings.HasPrefix(tc.name, "of15 oxs"):
		case m[1] != tc.want.String():
			t.Errorf("%s: ovs-ofctl reports %s, gvs %s", tc.name, m[1], tc.want)
		}
	}
}

// Every stats capture cut short (header length adjusted) decodes or fails
// with a length error; none panics.
func TestTruncatedStatsCapturesFailWithLengthErrors(t *testing.T) {
	for _, c := range readStatsCaptures(t) {
		if len(c.data) > 2048 {
			continue
		}
		for n := 0; n < len(c.data); n++ {
			p := append([]byte(nil), c.data[:n]...)
			if n >= 4 {
				binary.BigEndian.PutUint16(p[2:], uint16(n))
			}
			_, err := ofp.Decode(p)
			switch ofp.CodeOf(err) {
			case 0:
				if err != nil {
					t.Fatalf("%s[:%d]: error without a code: %v", c.name, n, err)
				}
			case ofp.OFPBRC_BAD_LEN, ofp.OFPBMC_BAD_LEN, ofp.OFPBPC_BAD_LEN, ofp.OFPBIC_BAD_LEN:
			default:
				t.Fatalf("%s[:%d]: %v, want a length error", c.name, n, err)
			}
		}
	}
}

// FuzzDecodeStats is FuzzDecodeMessage seeded with the stats captures.
func FuzzDecodeStats(f *testing.F) {
	seen := map[string]bool{}
	for _, c := range readStatsCaptures(f) {
		if len(c.data) > 4096 || seen[string(c.data)] {
			continue
		}
		seen[string(c.data)] = true
		f.Add(c.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ofp.Decode(data)
		if err != nil {
			if ofp.CodeOf(err) == 0 {
				t.Fatalf("error without OpenFlow code: %v", err)
			}
			return
		}
		out, err := ofp.EncodeMsg(nil, m)
		if err != nil {
			return
		}
		m2, err := ofp.Decode(out)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v\nin  %x\nout %x", m.Raw, err, data, out)
		}
		out2, err := ofp.EncodeMsg(nil, m2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("%s not stable: %v\n1 %x\n2 %x", m.Raw, err, out, out2)
		}
		if _, err := ofp.EncodeReplies(m.Version, m.XID, m.Body); err != nil && ofp.CodeOf(err) == 0 {
			t.Fatalf("EncodeReplies error without code: %v", err)
		}
	})
}

// A writer leaves out an entry no message can hold and counts it, as Open
// vSwitch excludes such a flow from a dump (and warns): the others are sent.
func TestMultipartWriterLeavesOutAnEntryNoMessageHolds(t *testing.T) {
	var msgs [][]byte
	w, err := ofp.NewMultipartWriter(1, 9, &ofp.FlowStatsReply{}, func(b []byte) error { msgs = append(msgs, b); return nil })
	if err != nil {
		t.Fatal(err)
	}
	rep := &ofp.FlowStatsReply{Stats: []ofp.FlowStats{{Priority: 1}, {Priority: 2, Actions: make([]byte, 65500)}, {Priority: 3}}}
	if err := w.Add(rep); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if w.Excluded() != 1 || len(msgs) != 1 {
		t.Fatalf("excluded %d, %d messages; want 1 excluded, 1 message", w.Excluded(), len(msgs))
	}
	m, err := ofp.Decode(msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	got := m.Body.(*ofp.FlowStatsReply).Stats
	if len(got) != 2 || got[0].Priority != 1 || got[1].Priority != 3 {
		t.Errorf("sent entries %+v, want priorities 1 and 3", got)
	}
}
