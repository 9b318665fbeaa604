package ofp_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// asyncMatch builds a match from field name/hex value pairs (exact).
func asyncMatch(t testing.TB, kv ...string) mf.Match {
	t.Helper()
	var m mf.Match
	for i := 0; i+1 < len(kv); i += 2 {
		f := mf.ByName(kv[i])
		v, err := hex.DecodeString(kv[i+1])
		if err != nil || f == nil {
			t.Fatalf("bad field %s=%s", kv[i], kv[i+1])
		}
		if err := m.SetMasked(f, v, nil); err != nil {
			t.Fatalf("%s: %v", kv[i], err)
		}
	}
	return m
}

type printCase struct {
	name string
	v    uint8
	msg  ofp.Message
	want []string // substrings of ovs-ofctl ofp-print's output, in order
}

func asyncPrintCases(t testing.TB) []printCase {
	pkt, _ := hex.DecodeString(asyncPacketHex)
	out2, err := ofp.AppendActions(nil, []ofp.Action{{Type: ofp.ActOutput, Port: 2}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	out2v4, err := ofp.AppendActions(nil, []ofp.Action{{Type: ofp.ActOutput, Port: 2}}, 4)
	if err != nil {
		t.Fatal(err)
	}
	meta := asyncMatch(t, "in_port", "0003", "reg0", "00000005", "metadata", "00000000000000ab", "tun_id", "0000000000000007")
	flowMatch := asyncMatch(t, "eth_type", "0800", "ip_proto", "06", "tcp_dst", "0050")
	fmBytes, err := ofp.Encode(nil, 5, 77, &ofp.FlowMod{Format: ofp.FormatOXM, TableID: 2, Command: ofp.FlowAdd, Priority: 9,
		BufferID: ofp.BufferNone, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny, Match: flowMatch})
	if err != nil {
		t.Fatal(err)
	}
	v4mapped := func(a, b, c, d byte) [16]byte { return [16]byte{10: 0xff, 11: 0xff, 12: a, 13: b, 14: c, 15: d} }
	return []printCase{
		{"of10 packet-out", 1, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 1, Actions: out2, Data: pkt},
			[]string{"OFPT_PACKET_OUT (xid=0x7): in_port=1 actions=output:2 data_len=46"}},
		{"of13 packet-out from controller", 4, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 0xfffffffd, Actions: out2v4, Data: pkt},
			[]string{"OFPT_PACKET_OUT (OF1.3) (xid=0x7): in_port=CONTROLLER actions=output:2 data_len=46"}},
		{"of15 packet-out with metadata", 6, &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: 3, Match: meta, Data: pkt},
			[]string{"OFPT_PACKET_OUT (OF1.5) (xid=0x7): reg0=0x5,tun_id=0x7,metadata=0xab,in_port=3 actions=drop data_len=46"}},
		{"of10 packet-in", 1, &ofp.PacketIn{BufferID: ofp.BufferNone, TotalLen: 46, Reason: ofp.OFPRNoMatch,
			Match: asyncMatch(t, "in_port", "0003"), Data: pkt, Cookie: ^uint64(0)},
			[]string{"OFPT_PACKET_IN (xid=0x7): total_len=46 in_port=3 (via no_match) data_len=46 (unbuffered)"}},
		{"of13 packet-in", 4, &ofp.PacketIn{BufferID: ofp.BufferNone, TotalLen: 46, Reason: ofp.OFPRAction, TableID: 4, Cookie: 0xfeed,
			Match: meta, Data: pkt},
			[]string{"OFPT_PACKET_IN (OF1.3) (xid=0x7): table_id=4 cookie=0xfeed total_len=46 reg0=0x5,tun_id=0x7,metadata=0xab,in_port=3 (via action) data_len=46 (unbuffered)"}},
		{"nxt packet-in truncated", 1, &ofp.PacketIn{Format: ofp.PacketInNXT, BufferID: ofp.BufferNone, TotalLen: 100, Reason: ofp.OFPRInvalidTTL,
			TableID: 1, Cookie: 0x5, Match: meta, Data: pkt},
			[]string{"NXT_PACKET_IN (xid=0x7): table_id=1 cookie=0x5 total_len=100 reg0=0x5,tun_id=0x7,metadata=0xab,in_port=3 (via invalid_ttl) data_len=46 (unbuffered) (***total_len != data_len***)"}},
		{"packet-in2 with userdata", 4, &ofp.PacketIn{Format: ofp.PacketIn2, BufferID: ofp.BufferNone, TotalLen: 46, Reason: ofp.OFPRAction,
			TableID: 3, Cookie: ^uint64(0), Match: meta, Data: pkt, Userdata: []byte{0xde, 0xad}},
			[]string{"NXT_PACKET_IN2 (OF1.3) (xid=0x7): table_id=3 total_len=46 reg0=0x5,tun_id=0x7,metadata=0xab,in_port=3 (via action) data_len=46 (unbuffered)",
				" userdata=de.ad"}},
		{"packet-in2 truncated, buffered", 6, &ofp.PacketIn{Format: ofp.PacketIn2, BufferID: 0x42, TotalLen: 1500, Reason: ofp.OFPRNoMatch,
			TableID: 0, Cookie: 0x7, Match: asyncMatch(t, "in_port", "0001"), Data: pkt},
			[]string{"NXT_PACKET_IN2 (OF1.5) (xid=0x7): cookie=0x7 total_len=1500 in_port=1 (via no_match) data_len=46 buffer=0x00000042"}},
		{"of14 packet-in group reason", 5, &ofp.PacketIn{BufferID: ofp.BufferNone, TotalLen: 46, Reason: ofp.OFPRGroup,
			Match: asyncMatch(t, "in_port", "0001"), Data: pkt},
			[]string{"(via group)"}},
		{"of13 packet-in group reason sent as action", 4, &ofp.PacketIn{BufferID: ofp.BufferNone, TotalLen: 46, Reason: ofp.OFPRGroup,
			Match: asyncMatch(t, "in_port", "0001"), Data: pkt}, []string{"(via action)"}},
		{"of13 flow removed meter delete sent as delete", 4, &ofp.FlowRemoved{Format: ofp.FormatOXM, Reason: ofp.OFPRRMeterDelete,
			Match: flowMatch}, []string{"reason=delete"}},
		{"of14 flow removed meter delete", 5, &ofp.FlowRemoved{Format: ofp.FormatOXM, Reason: ofp.OFPRRMeterDelete,
			Match: flowMatch}, []string{"reason=meter_delete"}},
		{"nxm flow removed", 1, &ofp.FlowRemoved{Format: ofp.FormatNXM, Cookie: 0x10, Priority: 7, Reason: ofp.OFPRRDelete, TableID: 4,
			DurationSec: 3, DurationNsec: 5000, IdleTimeout: 9, PacketCount: 11, ByteCount: 1234, Match: flowMatch},
			[]string{"NXT_FLOW_REMOVED (xid=0x7): priority=7,tcp,tp_dst=80 reason=delete table_id=4 cookie:0x10 duration3.000005s idle9 pkts11 bytes1234"}},
		{"of15 flow removed", 6, &ofp.FlowRemoved{Format: ofp.FormatOXM, Cookie: 0x10, Priority: 7, Reason: ofp.OFPRRIdleTimeout, TableID: 4,
			DurationSec: 3, DurationNsec: 5000, IdleTimeout: 9, HardTimeout: 20, PacketCount: 11, ByteCount: 1234, Match: flowMatch},
			[]string{"OFPT_FLOW_REMOVED (OF1.5) (xid=0x7): priority=7,tcp,tp_dst=80 reason=idle table_id=4 cookie:0x10 duration3.000005s idle9 hard20 pkts11 bytes1234"}},
		{"of10 flow removed", 1, &ofp.FlowRemoved{Format: ofp.FormatOF10, Cookie: 0x10, Priority: 7, Reason: ofp.OFPRRHardTimeout, TableID: 255,
			DurationSec: 3, PacketCount: 1, ByteCount: 60, Match: flowMatch},
			[]string{"OFPT_FLOW_REMOVED (xid=0x7): priority=7,tcp,tp_dst=80 reason=hard cookie:0x10 duration3s idle0 pkts1 bytes60"}},
		{"of13 role request", 4, &ofp.RoleRequest{Role: ofp.RoleSlave, GenerationID: 9},
			[]string{"OFPT_ROLE_REQUEST (OF1.3) (xid=0x7): role=secondary generation_id=9"}},
		{"nx role reply", 1, &ofp.RoleRequest{Nicira: true, Reply: true, Role: ofp.NXRoleMaster},
			[]string{"NXT_ROLE_REPLY (xid=0x7): role=primary"}},
		{"set flow format", 1, &ofp.SetFlowFormat{Format: ofp.NXFFNXM}, []string{"NXT_SET_FLOW_FORMAT (xid=0x7): format=nxm"}},
		{"set packet-in format", 1, &ofp.SetPacketInFormat{Format: ofp.PacketIn2}, []string{"NXT_SET_PACKET_IN_FORMAT (xid=0x7): format=nxt_packet_in2"}},
		{"set controller id", 1, &ofp.SetControllerID{ID: 77}, []string{"NXT_SET_CONTROLLER_ID (xid=0x7): id=77"}},
		{"flow mod table id", 1, &ofp.FlowModTableID{Enable: true}, []string{"NXT_FLOW_MOD_TABLE_ID (xid=0x7): enable"}},
		{"flow age", 1, &ofp.FlowAgeExt{}, []string{"NXT_FLOW_AGE (xid=0x7):"}},
		{"of13 set async", 4, &ofp.AsyncConfig{Master: [ofp.NumAsyncKinds]uint32{1, 7, 3}, Slave: [ofp.NumAsyncKinds]uint32{0, 7, 0}},
			[]string{"OFPT_SET_ASYNC (OF1.3) (xid=0x7):", " primary:", "       PACKET_IN: no_match", "     PORT_STATUS: add delete modify",
				"    FLOW_REMOVED: idle hard", " secondary:", "       PACKET_IN: (off)"}},
		{"of14 set async props", 5, &ofp.AsyncConfig{Master: [ofp.NumAsyncKinds]uint32{ofp.AsyncTableStatus: 0x18},
			Slave: [ofp.NumAsyncKinds]uint32{ofp.AsyncPacketIn: 0x3f}, Present: 1<<(2*ofp.AsyncTableStatus+1) | 1<<(2*ofp.AsyncPacketIn)},
			[]string{"OFPT_SET_ASYNC (OF1.4) (xid=0x7):", "    TABLE_STATUS: vacancy_down vacancy_up", " secondary:",
				"       PACKET_IN: no_match action invalid_ttl action_set group packet_out"}},
		{"nx set async config2", 1, &ofp.AsyncConfig{Nicira: true, Master: [ofp.NumAsyncKinds]uint32{ofp.AsyncRequestForward: 1},
			Present: 1 << (2*ofp.AsyncRequestForward + 1)},
			[]string{"NXT_SET_ASYNC_CONFIG2 (xid=0x7):", "  REQUESTFORWARD: group_mod"}},
		{"of13 default async reply", 4, withReply(ofp.DefaultAsyncConfig(4)),
			[]string{"OFPT_GET_ASYNC_REPLY (OF1.3) (xid=0x7):", " primary:", "       PACKET_IN: no_match action",
				"     PORT_STATUS: add delete modify", "    FLOW_REMOVED: idle hard delete group_delete", " secondary:",
				"       PACKET_IN: (off)", "     PORT_STATUS: add delete modify", "    FLOW_REMOVED: (off)"}},
		{"of15 default async reply", 6, withReply(ofp.DefaultAsyncConfig(6)),
			[]string{"OFPT_GET_ASYNC_REPLY (OF1.5) (xid=0x7):", " primary:", "       PACKET_IN: no_match action action_set group packet_out",
				"    FLOW_REMOVED: idle hard delete group_delete meter_delete eviction", "     ROLE_STATUS: (off)"}},
		{"get async request", 5, &ofp.GetAsyncRequest{}, []string{"OFPT_GET_ASYNC_REQUEST (OF1.4) (xid=0x7):"}},
		{"of14 bundle open", 5, &ofp.BundleCtrl{BundleID: 3, Type: ofp.BundleOpenRequest, Flags: ofp.BundleAtomic},
			[]string{"OFPT_BUNDLE_CONTROL (OF1.4) (xid=0x7):", " bundle_id=0x3 type=OPEN_REQUEST flags=atomic"}},
		{"of13 bundle commit reply", 4, &ofp.BundleCtrl{BundleID: 3, Type: ofp.BundleCommitReply, Flags: ofp.BundleOrdered},
			[]string{"ONFT_BUNDLE_CONTROL (OF1.3) (xid=0x7):", " bundle_id=0x3 type=COMMIT_REPLY flags=ordered"}},
		{"of14 bundle add", 5, &ofp.BundleAdd{BundleID: 3, Flags: ofp.BundleAtomic | ofp.BundleOrdered, Msg: withXID(fmBytes, 7)},
			[]string{"OFPT_BUNDLE_ADD_MESSAGE (OF1.4) (xid=0x7):", " bundle_id=0x3 flags=atomic ordered",
				"OFPT_FLOW_MOD (OF1.4) (xid=0x7): ADD table:2 priority=9,tcp,tp_dst=80 actions=drop"}},
		{"tlv table mod", 1, &ofp.TLVTableMod{Command: ofp.TLVAdd, Mappings: []ofp.TLVMap{{OptClass: 0x102, OptType: 0x80, OptLen: 8, Index: 5}}},
			[]string{"NXT_TLV_TABLE_MOD (xid=0x7):", " ADD mapping table:", "  0x102  0x80       8  tun_metadata5"}},
		{"tlv table reply", 4, &ofp.TLVTableReply{MaxOptionSpace: 256, MaxFields: 64,
			Mappings: []ofp.TLVMap{{OptClass: 0xffff, OptType: 1, OptLen: 4, Index: 0}}},
			[]string{"NXT_TLV_TABLE_REPLY (OF1.3) (xid=0x7):", " max option space=256 max fields=64", " allocated option space=4",
				" 0xffff   0x1       4  tun_metadata0"}},
		{"tlv table request", 1, &ofp.TLVTableRequest{}, []string{"NXT_TLV_TABLE_REQUEST (xid=0x7):"}},
		{"ct flush zone", 1, &ofp.CTFlushZone{Zone: 13}, []string{"NXT_CT_FLUSH_ZONE (xid=0x7): zone_id=13"}},
		{"ct flush", 4, &ofp.CTFlush{HasZone: true, Zone: 2, IPProto: 17,
			Orig:  ofp.CTTuple{Src: v4mapped(10, 0, 0, 1), Dst: v4mapped(10, 0, 0, 2), SrcPort: 5, DstPort: 6},
			Reply: ofp.CTTuple{Src: v4mapped(10, 0, 0, 2)}},
			[]string{"NXT_CT_FLUSH (OF1.3) (xid=0x7): zone=2 'ct_nw_src=10.0.0.1,ct_nw_dst=10.0.0.2,ct_tp_src=5,ct_tp_dst=6,ct_nw_proto=17' 'ct_nw_src=10.0.0.2,ct_nw_dst=::,ct_tp_src=0,ct_tp_dst=0'"}},
		{"resume", 4, &ofp.Resume{PacketIn: ofp.PacketIn{BufferID: ofp.BufferNone, TotalLen: 46, Reason: ofp.OFPRAction, Cookie: ^uint64(0),
			Match: asyncMatch(t, "in_port", "0002"), Data: pkt, Continuation: []byte{0x80, 0x08, 0x00, 0x08, 0, 0, 0, 2}}},
			[]string{"NXT_RESUME (OF1.3) (xid=0x7): total_len=46 in_port=2 (via action) data_len=46 (unbuffered)", " continuation.odp_port=2"}},
		{"table status", 5, &ofp.TableStatus{Reason: ofp.TableReasonVacancyDown, Desc: ofp.TableDesc{TableID: 1,
			Config: ofp.TableConfigVacancyEvents, EvictionFlags: &evictionAll, Vacancy: &ofp.TableVacancy{Down: 20, Up: 80, Vacancy: 10}}},
			[]string{"OFPT_TABLE_STATUS (OF1.4) (xid=0x7): reason=VACANCY_DOWN\ntable_desc:-\n  table 1:\n",
				"   eviction=off eviction_flags=OTHER|IMPORTANCE|LIFETIME\n   vacancy=on vacancy_down=20% vacancy_up=80% vacancy=10%\n"}},
	}
}

// evictionAll is the eviction flags Open vSwitch reports: OTHER,
// IMPORTANCE and LIFETIME.
var evictionAll = uint32(7)

func withReply(ac ofp.AsyncConfig) *ofp.AsyncConfig {
	ac.Reply = true
	return &ac
}

// withXID returns msg with its transaction ID replaced.
func withXID(msg []byte, xid uint32) []byte {
	b := append([]byte(nil), msg...)
	b[4], b[5], b[6], b[7] = byte(xid>>24), byte(xid>>16), byte(xid>>8), byte(xid)
	return b
}

// What gvs encodes is what Open vSwitch decodes: ovs-ofctl ofp-print
// prints each hand-built message as expected, and it round-trips.
func TestAsyncEncodingsPrintInOVSOfctl(t *testing.T) {
	ofctl := needOVSOfctl(t)
	for _, tc := range asyncPrintCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := ofp.Encode(nil, tc.v, 7, tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			out := runOfpPrint(t, ofctl, msg)
			rest := out
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("ovs-ofctl printed\n%s\nwant (in order) %q", out, w)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(out, "***decode error") || strings.Contains(out, "bad") {
				t.Errorf("ovs-ofctl complained:\n%s", out)
			}
			m, err := ofp.Decode(msg)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ofp.EncodeMsg(nil, m)
			if err != nil || !bytes.Equal(again, msg) {
				t.Errorf("round trip: %v\n got %x\nwant %x", err, again, msg)
			}
		})
	}
}
