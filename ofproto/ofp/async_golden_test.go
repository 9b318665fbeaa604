package ofp_test

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// asyncRaws are the message types this codec decodes into typed bodies.
var asyncRaws = map[string]bool{}

func init() {
	for _, n := range []string{
		"OFPT10_PACKET_IN", "OFPT11_PACKET_IN", "OFPT12_PACKET_IN", "OFPT13_PACKET_IN", "NXT_PACKET_IN", "NXT_PACKET_IN2", "NXT_RESUME",
		"OFPT10_PACKET_OUT", "OFPT11_PACKET_OUT", "OFPT15_PACKET_OUT",
		"OFPT10_FLOW_REMOVED", "OFPT11_FLOW_REMOVED", "OFPT15_FLOW_REMOVED", "NXT_FLOW_REMOVED",
		"OFPT12_ROLE_REQUEST", "OFPT12_ROLE_REPLY", "NXT_ROLE_REQUEST", "NXT_ROLE_REPLY",
		"OFPT13_GET_ASYNC_REQUEST", "OFPT14_GET_ASYNC_REQUEST", "OFPT13_GET_ASYNC_REPLY", "OFPT14_GET_ASYNC_REPLY",
		"OFPT13_SET_ASYNC", "OFPT14_SET_ASYNC", "NXT_SET_ASYNC_CONFIG", "NXT_SET_ASYNC_CONFIG2",
		"OFPT14_BUNDLE_CONTROL", "ONFT13_BUNDLE_CONTROL", "OFPT14_BUNDLE_ADD_MESSAGE", "ONFT13_BUNDLE_ADD_MESSAGE",
		"NXT_SET_FLOW_FORMAT", "NXT_SET_PACKET_IN_FORMAT", "NXT_SET_CONTROLLER_ID", "NXT_FLOW_MOD_TABLE_ID", "NXT_FLOW_AGE",
		"NXT_TLV_TABLE_MOD", "NXT_TLV_TABLE_REQUEST", "NXT_TLV_TABLE_REPLY", "NXT_CT_FLUSH_ZONE", "NXT_CT_FLUSH",
	} {
		asyncRaws[n] = true
	}
}

// Every recorded asynchronous, packet and session message decodes to a
// typed body and re-encodes byte for byte.
func TestAsyncCapturesRoundTripByteIdentical(t *testing.T) {
	caps := readAsyncCaptures(t)
	seen := map[string]bool{}
	for _, c := range caps {
		m, err := ofp.Decode(c.data)
		if err != nil {
			if raw := rawNameOf(c.data); asyncRaws[raw] {
				t.Errorf("%s: decode %s %x: %v", c.name, raw, c.data, err)
			}
			continue
		}
		if !asyncRaws[m.Raw.String()] {
			continue
		}
		seen[m.Raw.String()] = true
		if _, ok := m.Body.(*ofp.Unknown); ok {
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
	for _, want := range []string{
		"OFPT10_PACKET_IN", "OFPT11_PACKET_IN", "OFPT12_PACKET_IN", "OFPT13_PACKET_IN", "NXT_PACKET_IN", "NXT_PACKET_IN2", "NXT_RESUME",
		"OFPT10_PACKET_OUT", "OFPT11_PACKET_OUT", "OFPT15_PACKET_OUT",
		"OFPT10_FLOW_REMOVED", "OFPT11_FLOW_REMOVED", "OFPT15_FLOW_REMOVED", "NXT_FLOW_REMOVED",
		"OFPT12_ROLE_REQUEST", "OFPT12_ROLE_REPLY", "NXT_ROLE_REQUEST", "NXT_ROLE_REPLY",
		"OFPT13_GET_ASYNC_REQUEST", "OFPT14_GET_ASYNC_REQUEST", "OFPT13_GET_ASYNC_REPLY", "OFPT14_GET_ASYNC_REPLY",
		"OFPT14_SET_ASYNC", "NXT_SET_ASYNC_CONFIG",
		"OFPT14_BUNDLE_CONTROL", "ONFT13_BUNDLE_CONTROL", "OFPT14_BUNDLE_ADD_MESSAGE", "ONFT13_BUNDLE_ADD_MESSAGE",
		"NXT_SET_FLOW_FORMAT", "NXT_SET_PACKET_IN_FORMAT", "NXT_SET_CONTROLLER_ID", "NXT_FLOW_MOD_TABLE_ID", "NXT_FLOW_AGE",
		"NXT_TLV_TABLE_MOD", "NXT_TLV_TABLE_REQUEST", "NXT_TLV_TABLE_REPLY", "NXT_CT_FLUSH_ZONE", "NXT_CT_FLUSH",
	} {
		if !seen[want] {
			t.Errorf("no captured %s", want)
		}
	}
}

// rawNameOf names a message's raw type from its header when it does not
// decode.
func rawNameOf(b []byte) string {
	if len(b) < 8 {
		return ""
	}
	return rawByHeader(b)
}

// rawByHeader maps the header fields of the captured message types to
// their names (enough for error reporting).
func rawByHeader(b []byte) string {
	v, typ := b[0], b[1]
	if typ == 4 && len(b) >= 16 {
		sub := uint32(b[12])<<24 | uint32(b[13])<<16 | uint32(b[14])<<8 | uint32(b[15])
		names := map[uint32]string{10: "NXT_ROLE_REQUEST", 11: "NXT_ROLE_REPLY", 12: "NXT_SET_FLOW_FORMAT", 14: "NXT_FLOW_REMOVED",
			15: "NXT_FLOW_MOD_TABLE_ID", 16: "NXT_SET_PACKET_IN_FORMAT", 17: "NXT_PACKET_IN", 18: "NXT_FLOW_AGE",
			19: "NXT_SET_ASYNC_CONFIG", 20: "NXT_SET_CONTROLLER_ID", 24: "NXT_TLV_TABLE_MOD", 25: "NXT_TLV_TABLE_REQUEST",
			26: "NXT_TLV_TABLE_REPLY", 27: "NXT_SET_ASYNC_CONFIG2", 28: "NXT_RESUME", 29: "NXT_CT_FLUSH_ZONE", 30: "NXT_PACKET_IN2",
			32: "NXT_CT_FLUSH", 2300: "ONFT13_BUNDLE_CONTROL", 2301: "ONFT13_BUNDLE_ADD_MESSAGE"}
		return names[sub]
	}
	switch typ {
	case 10:
		return map[uint8]string{1: "OFPT10_PACKET_IN", 2: "OFPT11_PACKET_IN", 3: "OFPT12_PACKET_IN"}[v] + map[bool]string{true: "OFPT13_PACKET_IN"}[v >= 4]
	case 11:
		return map[uint8]string{1: "OFPT10_FLOW_REMOVED", 6: "OFPT15_FLOW_REMOVED"}[v] + map[bool]string{true: "OFPT11_FLOW_REMOVED"}[v >= 2 && v <= 5]
	case 13:
		return map[uint8]string{1: "OFPT10_PACKET_OUT", 6: "OFPT15_PACKET_OUT"}[v] + map[bool]string{true: "OFPT11_PACKET_OUT"}[v >= 2 && v <= 5]
	case 24:
		return "OFPT12_ROLE_REQUEST"
	case 25:
		return "OFPT12_ROLE_REPLY"
	case 33:
		return "OFPT14_BUNDLE_CONTROL"
	case 34:
		return "OFPT14_BUNDLE_ADD_MESSAGE"
	}
	return ""
}

// asyncMsg returns the i'th message (0-based) of raw type raw in capture
// name, decoded.
func asyncMsg(t testing.TB, name, raw string, i int) *ofp.Msg {
	t.Helper()
	for _, c := range readAsyncCaptures(t) {
		if c.name != name {
			continue
		}
		m, err := ofp.Decode(c.data)
		if err != nil || m.Raw.String() != raw {
			continue
		}
		if i == 0 {
			return m
		}
		i--
	}
	t.Fatalf("no %s in capture %s", raw, name)
	return nil
}

func fieldHex(t *testing.T, m *mf.Match, name string) string {
	t.Helper()
	v, k := get(t, m, name)
	if m.IsWild(mf.ByName(name)) {
		return "*"
	}
	if k == "" || bytes.Count([]byte(k), []byte("f")) == len(k) {
		return v
	}
	return v + "/" + k
}

func wantFields(t *testing.T, m *mf.Match, want map[string]string) {
	t.Helper()
	for f, v := range want {
		if got := fieldHex(t, m, f); got != v {
			t.Errorf("%s = %s, want %s", f, got, v)
		}
	}
}

func TestCapturedPacketOutsDecodeToExpectedValues(t *testing.T) {
	pkt, _ := hex.DecodeString(asyncPacketHex)
	for _, tc := range []struct {
		capture string
		raw     string
		inPort  uint32
		outs    []uint16
		fields  map[string]string
	}{
		{"of10_packet_out", "OFPT10_PACKET_OUT", 1, []uint16{2}, map[string]string{"in_port": "0001"}},
		{"of13_packet_out", "OFPT11_PACKET_OUT", 0xfffffffd, []uint16{2, 1}, map[string]string{"in_port": "fffd"}},
		{"of15_packet_out", "OFPT15_PACKET_OUT", 1, []uint16{2}, map[string]string{"in_port": "0001",
			"reg0": "00000005", "metadata": "0000000000000007", "tun_id": "0000000000000009", "eth_type": "*"}},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			m := asyncMsg(t, tc.capture, tc.raw, 0)
			po := m.Body.(*ofp.PacketOut)
			if po.BufferID != ofp.BufferNone || po.InPort != tc.inPort || !bytes.Equal(po.Data, pkt) {
				t.Errorf("buffer %#x in_port %#x data %x", po.BufferID, po.InPort, po.Data)
			}
			acts, err := ofp.DecodeActions(po.Actions, m.Version)
			if err != nil {
				t.Fatal(err)
			}
			if len(acts) != len(tc.outs) {
				t.Fatalf("%d actions, want %d", len(acts), len(tc.outs))
			}
			for i, a := range acts {
				if a.Type != ofp.ActOutput || a.Port != uint32(tc.outs[i]) {
					t.Errorf("action %d: %+v, want output:%d", i, a, tc.outs[i])
				}
			}
			wantFields(t, &po.Match, tc.fields)
		})
	}
}

// The packet-in that table 1's controller action sends, in every format.
func TestCapturedPacketInsDecodeToExpectedValues(t *testing.T) {
	pipeline := map[string]string{"in_port": "0001", "reg0": "00000005", "reg3": "0000abcd",
		"metadata": "0000000000000077", "pkt_mark": "00000009", "eth_type": "*", "ip_src": "*"}
	for _, tc := range []struct {
		capture, raw string
		format       uint8
		table        uint8
		cookie       uint64
		pipeline     bool
		dataLen      int
	}{
		{"of10_monitor_std", "OFPT10_PACKET_IN", ofp.PacketInStandard, 0, ^uint64(0), false, 106},
		{"of10_monitor_nxt", "NXT_PACKET_IN", ofp.PacketInNXT, 1, 0x1234, true, 106},
		{"of10_monitor_pin2", "NXT_PACKET_IN2", ofp.PacketIn2, 1, 0x1234, true, 106},
		{"of11_monitor_std", "OFPT11_PACKET_IN", ofp.PacketInStandard, 1, ^uint64(0), false, 106},
		{"of12_monitor_std", "OFPT12_PACKET_IN", ofp.PacketInStandard, 1, ^uint64(0), true, 106},
		{"of14_monitor_std", "OFPT13_PACKET_IN", ofp.PacketInStandard, 1, 0x1234, true, 106},
		{"of13_monitor_std", "OFPT13_PACKET_IN", ofp.PacketInStandard, 1, 0x1234, true, 106},
		{"of15_monitor_pin2", "NXT_PACKET_IN2", ofp.PacketIn2, 1, 0x1234, true, 106},
		{"nxt_packet_in_of13", "NXT_PACKET_IN", ofp.PacketInNXT, 1, 0x1234, true, 106},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			m := asyncMsg(t, tc.capture, tc.raw, 0)
			pin := m.Body.(*ofp.PacketIn)
			if pin.Format != tc.format || pin.TableID != tc.table || pin.Cookie != tc.cookie || pin.Reason != ofp.OFPRAction ||
				pin.BufferID != ofp.BufferNone || int(pin.TotalLen) != tc.dataLen || len(pin.Data) != tc.dataLen {
				t.Errorf("format %d table %d cookie %#x reason %d buffer %#x total %d data %d",
					pin.Format, pin.TableID, pin.Cookie, pin.Reason, pin.BufferID, pin.TotalLen, len(pin.Data))
			}
			if pin.Format == ofp.PacketIn2 && hex.EncodeToString(pin.Userdata) != "0102030405" {
				t.Errorf("userdata %x", pin.Userdata)
			}
			if tc.pipeline {
				wantFields(t, &pin.Match, pipeline)
			} else {
				wantFields(t, &pin.Match, map[string]string{"in_port": "0001", "reg0": "*", "metadata": "*"})
			}
		})
	}
}

// A paused packet-in carries a continuation, which ovs-ofctl echoes back
// in NXT_RESUME.
func TestCapturedResumeEchoesContinuation(t *testing.T) {
	pin := asyncMsg(t, "of13_monitor_resume", "NXT_PACKET_IN2", 0).Body.(*ofp.PacketIn)
	rs := asyncMsg(t, "of13_monitor_resume", "NXT_RESUME", 0).Body.(*ofp.Resume)
	if len(pin.Continuation) == 0 || !bytes.Equal(pin.Continuation, rs.Continuation) {
		t.Fatalf("continuation %x, resume %x", pin.Continuation, rs.Continuation)
	}
	// Open vSwitch reports a paused packet-in with table 0 and cookie 0;
	// the rule's table and cookie travel inside the continuation.
	if pin.TableID != 0 || pin.Cookie != 0 || !bytes.Equal(rs.Data, pin.Data) || rs.TableID != 0 || rs.Cookie != 0 {
		t.Errorf("packet-in table %d cookie %#x; resume table %d cookie %#x", pin.TableID, pin.Cookie, rs.TableID, rs.Cookie)
	}
	wantFields(t, &rs.Match, map[string]string{"in_port": "0002", "reg1": "00000006"})
}

func TestCapturedFlowRemovedsDecodeToExpectedValues(t *testing.T) {
	for _, tc := range []struct {
		capture, raw string
		format       ofp.FlowFormat
		cookie       uint64
		prio         uint16
		table        uint8
		hard         uint16
		fields       map[string]string
	}{
		{"of10_monitor_flow_removed", "OFPT10_FLOW_REMOVED", ofp.FormatOF10, 0x42, 3, 255, 0, map[string]string{"ip_src": "0a090909", "eth_type": "0800"}},
		{"nxm_flow_removed", "NXT_FLOW_REMOVED", ofp.FormatNXM, 0x43, 3, 6, 0, map[string]string{"reg5": "00000005", "tcp_dst": "0016", "ip_proto": "06"}},
		{"of13_monitor_flow_removed", "OFPT11_FLOW_REMOVED", ofp.FormatOXM, 0x44, 4, 7, 1, map[string]string{"ipv6_src": "fd000000000000000000000000000005"}},
		{"of15_monitor_flow_removed", "OFPT15_FLOW_REMOVED", ofp.FormatOXM, 0x45, 5, 8, 1, map[string]string{"reg14": "00000001", "metadata": "0000000000000003"}},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			fr := asyncMsg(t, tc.capture, tc.raw, 0).Body.(*ofp.FlowRemoved)
			if fr.Format != tc.format || fr.Cookie != tc.cookie || fr.Priority != tc.prio || fr.TableID != tc.table ||
				fr.HardTimeout != tc.hard || fr.Reason != ofp.OFPRRHardTimeout || fr.PacketCount != 0 || fr.ByteCount != 0 ||
				fr.DurationSec > 3 || fr.DurationNsec >= 1e9 {
				t.Errorf("%+v", *fr)
			}
			wantFields(t, &fr.Match, tc.fields)
		})
	}
	// NXT: table 0 travels as 1.
	fr := asyncMsg(t, "nxm_flow_removed", "NXT_FLOW_REMOVED", 1).Body.(*ofp.FlowRemoved)
	if fr.TableID != 0 || fr.Cookie != 0x46 {
		t.Errorf("second NXT flow removed: table %d cookie %#x", fr.TableID, fr.Cookie)
	}
}

func TestCapturedBundlesDecodeToExpectedValues(t *testing.T) {
	for _, tc := range []struct {
		capture, ctrl, add string
		innerRaw           string
	}{
		{"of14_bundle_add_flow", "OFPT14_BUNDLE_CONTROL", "OFPT14_BUNDLE_ADD_MESSAGE", "OFPT11_FLOW_MOD"},
		{"of13_bundle_add_flow", "ONFT13_BUNDLE_CONTROL", "ONFT13_BUNDLE_ADD_MESSAGE", "OFPT11_FLOW_MOD"},
		{"of15_bundle_del_flows", "OFPT14_BUNDLE_CONTROL", "OFPT14_BUNDLE_ADD_MESSAGE", "OFPT11_FLOW_MOD"},
	} {
		t.Run(tc.capture, func(t *testing.T) {
			wantTypes := []uint16{ofp.BundleOpenRequest, ofp.BundleOpenReply, ofp.BundleCommitRequest, ofp.BundleCommitReply}
			for i, want := range wantTypes {
				bc := asyncMsg(t, tc.capture, tc.ctrl, i).Body.(*ofp.BundleCtrl)
				flags := uint16(ofp.BundleAtomic | ofp.BundleOrdered)
				if want%2 == 1 {
					flags = 0 // replies
				}
				if bc.Type != want || bc.Flags != flags || bc.BundleID != 0 || len(bc.Properties) != 0 {
					t.Errorf("control %d: %+v, want type %d flags %d", i, *bc, want, flags)
				}
			}
			m := asyncMsg(t, tc.capture, tc.add, 0)
			ba := m.Body.(*ofp.BundleAdd)
			if ba.Inner == nil || ba.InnerErr != nil || ba.Inner.Raw.String() != tc.innerRaw || ba.Inner.XID != m.XID ||
				ba.Flags != ofp.BundleAtomic|ofp.BundleOrdered {
				t.Fatalf("bundle add %+v (inner err %v)", *ba, ba.InnerErr)
			}
		})
	}
	// A bundle file mixing flow mods and a packet-out.
	var inner []string
	for i := 0; i < 3; i++ {
		ba := asyncMsg(t, "of14_bundle_file", "OFPT14_BUNDLE_ADD_MESSAGE", i).Body.(*ofp.BundleAdd)
		inner = append(inner, ba.Inner.Raw.String())
	}
	if inner[0] != "OFPT11_FLOW_MOD" || inner[1] != "OFPT11_FLOW_MOD" || inner[2] != "OFPT11_PACKET_OUT" {
		t.Errorf("bundle file inner messages %v", inner)
	}
}

func TestCapturedSessionMessagesDecodeToExpectedValues(t *testing.T) {
	tm := asyncMsg(t, "add_tlv_map", "NXT_TLV_TABLE_MOD", 0).Body.(*ofp.TLVTableMod)
	wantMaps := []ofp.TLVMap{{OptClass: 0xffff, OptType: 0, OptLen: 4, Index: 0}, {OptClass: 0x0102, OptType: 0x80, OptLen: 8, Index: 5}}
	if tm.Command != ofp.TLVAdd || len(tm.Mappings) != 2 || tm.Mappings[0] != wantMaps[0] || tm.Mappings[1] != wantMaps[1] {
		t.Errorf("tlv mod %+v", *tm)
	}
	tr := asyncMsg(t, "dump_tlv_map", "NXT_TLV_TABLE_REPLY", 0).Body.(*ofp.TLVTableReply)
	if tr.MaxOptionSpace != 256 || tr.MaxFields != 64 || len(tr.Mappings) != 2 || tr.Mappings[1] != wantMaps[1] {
		t.Errorf("tlv reply %+v", *tr)
	}
	if td := asyncMsg(t, "del_tlv_map", "NXT_TLV_TABLE_MOD", 0).Body.(*ofp.TLVTableMod); td.Command != ofp.TLVDelete {
		t.Errorf("tlv delete %+v", *td)
	}
	if z := asyncMsg(t, "ct_flush_zone", "NXT_CT_FLUSH_ZONE", 0).Body.(*ofp.CTFlushZone); z.Zone != 5 {
		t.Errorf("ct flush zone %d", z.Zone)
	}
	cf := asyncMsg(t, "ct_flush", "NXT_CT_FLUSH", 0).Body.(*ofp.CTFlush)
	v4 := func(s string) [16]byte {
		var a [16]byte
		b, _ := hex.DecodeString("00000000000000000000ffff" + s)
		copy(a[:], b)
		return a
	}
	if !cf.HasZone || cf.Zone != 7 || cf.IPProto != 6 || cf.Orig.Src != v4("0a010101") || cf.Orig.Dst != v4("0a010102") ||
		cf.Orig.SrcPort != 1024 || cf.Orig.DstPort != 80 || cf.Reply != (ofp.CTTuple{}) {
		t.Errorf("ct flush %+v", *cf)
	}
	ci := asyncMsg(t, "ct_flush_icmp6", "NXT_CT_FLUSH", 0).Body.(*ofp.CTFlush)
	if ci.HasZone || ci.IPProto != 58 || ci.Orig.ICMPID != 7 || ci.Orig.ICMPType != 128 || ci.Reply.Dst[15] != 1 || ci.Reply.Dst[0] != 0xfd {
		t.Errorf("ct flush icmp6 %+v", *ci)
	}

	rr := asyncMsg(t, "of13_role_request", "OFPT12_ROLE_REPLY", 0).Body.(*ofp.RoleRequest)
	if !rr.Reply || rr.Nicira || rr.Role != ofp.RoleMaster || rr.GenerationID != 5 {
		t.Errorf("role reply %+v", *rr)
	}
	if rr := asyncMsg(t, "of13_role_request", "OFPT12_ROLE_REPLY", 1).Body.(*ofp.RoleRequest); rr.Role != ofp.RoleMaster {
		t.Errorf("nochange role reply %+v", *rr)
	}
	em := asyncMsg(t, "of13_role_request", "OFPT_ERROR", 0)
	if c := em.Body.(*ofp.ErrorMsg).ErrCode(em.Version); c != ofp.OFPRRFC_STALE {
		t.Errorf("stale generation answered with %s", c)
	}
	nr := asyncMsg(t, "nx_role_request", "NXT_ROLE_REPLY", 0).Body.(*ofp.RoleRequest)
	if !nr.Nicira || nr.Role != ofp.NXRoleSlave || nr.OFRole() != ofp.RoleSlave {
		t.Errorf("nx role reply %+v", *nr)
	}

	ga := asyncMsg(t, "of13_get_async", "OFPT13_GET_ASYNC_REPLY", 0).Body.(*ofp.AsyncConfig)
	if !ga.Reply || ga.Master[ofp.AsyncPacketIn] != 3 || ga.Slave[ofp.AsyncPacketIn] != 0 || ga.Master[ofp.AsyncPortStatus] != 7 ||
		ga.Slave[ofp.AsyncPortStatus] != 7 || ga.Master[ofp.AsyncFlowRemoved] != 0xf || ga.Slave[ofp.AsyncFlowRemoved] != 0 {
		t.Errorf("OF1.3 get async reply %+v", *ga)
	}
	g4 := asyncMsg(t, "of14_set_get_async", "OFPT14_GET_ASYNC_REPLY", 0).Body.(*ofp.AsyncConfig)
	if g4.Present != 0xfff || g4.Master[ofp.AsyncPacketIn] != 3 || g4.Master[ofp.AsyncRoleStatus] != 7 {
		t.Errorf("OF1.4 get async reply %+v", *g4)
	}
}

// The port-status messages recorded in the monitor sessions (decoded by
// the port codec) round-trip too.
func TestCapturedPortStatusRoundTrips(t *testing.T) {
	n := 0
	for _, c := range readAsyncCaptures(t) {
		if len(c.data) < 2 || c.data[1] != 12 {
			continue
		}
		m, err := ofp.Decode(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out, err := ofp.EncodeMsg(nil, m)
		if err != nil || !bytes.Equal(out, c.data) {
			t.Errorf("%s: %s: %v\n got %x\nwant %x", c.name, m.Raw, err, out, c.data)
		}
		n++
	}
	if n < 2 {
		t.Errorf("%d port-status messages recorded", n)
	}
}

// DefaultAsyncConfig, encoded as a get-async reply, is what a fresh Open
// vSwitch connection reports.
func TestDefaultAsyncConfigMatchesOVSReply(t *testing.T) {
	m := asyncMsg(t, "of13_get_async", "OFPT13_GET_ASYNC_REPLY", 0)
	want, _ := ofp.EncodeMsg(nil, m)
	ac := ofp.DefaultAsyncConfig(m.Version)
	ac.Reply = true
	got, err := ofp.Encode(nil, m.Version, m.XID, &ac)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%v\n got %x\nwant %x", err, got, want)
	}
}
