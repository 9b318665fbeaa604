package ofctl

import (
	"bufio"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/ofprint"
	"github.com/gvs-project/gvs/ofproto/ofptext"
)

// liveCaptureFiles are ofp's capture files of conversations between
// ovs-ofctl and Open vSwitch: "> HEX" sent, "< HEX" received.
var liveCaptureFiles = []string{
	"../../ofproto/ofp/testdata/stats_captures.txt",
	"../../ofproto/ofp/testdata/async_captures.txt",
}

// notPrintedTypes are the message types of liveCaptureFiles gvs-ofctl's
// ofp-print does not print yet (it fails with "not printed yet"), with
// the reason; the test fails if one starts printing, so the list stays
// exact. Every type is printed now.
var notPrintedTypes = map[string]string{}

// captureDifferences are messages of liveCaptureFiles gvs-ofctl prints
// differently from ovs-ofctl, by hex, with the reason; the test fails if
// one starts matching. None differ now.
var captureDifferences = map[string]string{}

// liveCapture is one message of liveCaptureFiles.
type liveCapture struct{ name, hex string }

func loadLiveCaptures(t testing.TB) []liveCapture {
	t.Helper()
	var out []liveCapture
	for _, file := range liveCaptureFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := ""
		for _, l := range strings.Split(string(data), "\n") {
			switch {
			case strings.HasPrefix(l, "# "):
				name, _, _ = strings.Cut(l[2:], ":")
			case strings.HasPrefix(l, "> ") || strings.HasPrefix(l, "< "):
				out = append(out, liveCapture{name + " " + l[:1], strings.TrimSpace(l[2:])})
			}
		}
	}
	return out
}

// rawName is the ofp type name of a message.
func rawName(t *testing.T, hexMsg string) string {
	b, err := hex.DecodeString(hexMsg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ofp.Decode(b)
	if err != nil {
		return "undecodable"
	}
	return m.Raw.String()
}

func TestOfpPrintMatchesLiveOVSOfctlForStatsAndAsyncCaptures(t *testing.T) {
	bin := ovsOfctl(t)
	caps := loadLiveCaptures(t)
	if len(caps) < 900 {
		t.Fatalf("%d captured messages, want >= 900", len(caps))
	}
	seen := map[string]bool{}
	stillNotPrinted := map[string]bool{}
	var same int
	for _, c := range caps {
		if seen[c.hex] {
			continue
		}
		seen[c.hex] = true
		got := runGvs("", "ofp-print", c.hex)
		if got.code != 0 && strings.Contains(got.stderr, "not printed yet") {
			typ := rawName(t, c.hex)
			if _, ok := notPrintedTypes[typ]; !ok {
				t.Errorf("%s: ofp-print %s: %s (type %s not listed in notPrintedTypes)", c.name, c.hex, got.stderr, typ)
			}
			stillNotPrinted[typ] = true
			continue
		}
		want := runOVS(t, bin, "", "ofp-print", c.hex)
		if _, ok := captureDifferences[c.hex]; ok {
			if got == want {
				t.Errorf("%s: %s listed in captureDifferences but now matches; remove it", c.name, c.hex)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: ofp-print %s:\n got %+v\nwant %+v", c.name, c.hex, got, want)
			continue
		}
		same++
	}
	for typ := range notPrintedTypes {
		if !stillNotPrinted[typ] {
			t.Errorf("%s is listed in notPrintedTypes but no capture of it fails to print; remove it", typ)
		}
	}
	t.Logf("%d distinct messages printed as live ovs-ofctl does, %d types not printed yet", same, len(stillNotPrinted))
}

// encodeHex encodes body as a version v message for the tests.
func encodeHex(t *testing.T, v uint8, body ofp.Message) string {
	t.Helper()
	b, err := ofp.Encode(nil, v, 0x42, body)
	if err != nil {
		t.Fatalf("encoding %T in version %#x: %v", body, v, err)
	}
	return hex.EncodeToString(b)
}

// TestOfpPrintOfStatsAndConfigMessagesMatchesOVSOfctl covers what the
// captures do not: every version, flags, properties, unusual values and
// ports Open vSwitch refuses.
func TestOfpPrintOfStatsAndConfigMessagesMatchesOVSOfctl(t *testing.T) {
	bin := ovsOfctl(t)
	msgs := []string{
		// Table mods: 1.1 miss configs (3 is warned about and taken as
		// controller), all tables, 1.3 (nothing but the id), 1.4
		// eviction and vacancy bits and properties (Open vSwitch 3.1
		// takes the eviction property's value for the setting).
		"0211001000000004ff00000000000002", "02110010000000040100000000000003", "03110010000000040700000000000001",
		"0411001000000004030000000000000c", "05110010000000040100000000000004",
		"051100180000000401000000000000040002000800000000", "051100180000000401000000000000000002000800000001",
		"051100180000000401000000000000000002000800000002", "051100200000000501000000000000080002000800000007000300080a5a0000",
		"0511001800000004010000000000000800030008050a0000", "06110010000000040100000000000008",
		// Table descriptions: defaults, settings without properties,
		// named and unnamed eviction flags, vacancy; a request with
		// the more flag.
		"0513003800000002000e0000000000000008010000000000000802000000000c001803000000000c00020008000000f5000300080a5a3200",
		"0512001000000002000e000100000000",
		// Queue statistics: requests for every port, a port and queue,
		// 1.0's OFPP_ALL; counters and exact durations.
		"011000140000000200050000fffe000000000003", "04120018000000020005000100000000ffffff00ffffffff",
		"04120018000000020005000100000000fffff000ffffffff",
		"0413003800000007000500000000000000000001000000020000000000000064000000000000000a000000000000000000000005000003e8",
		"0413003800000007000500000000000000000001000000020000000000000064000000000000000a00000000000000000000000507270e00",
		// Queue configuration: rates, a disabled rate, sorting, empty
		// replies, refused ports.
		"0317007000000002ffffffff0000000000000005000000010030000000000000000100100000000000320000000000000002001000000000fffe00000000000000000007000000020020000000000000000200100000000003e800000000000000000003000000010010000000000000",
		"01150010000000020003000000000000", "0513001000000002000f000000000000",
		"0512001800000002000f0000000000000000000300000007", "0512001800000002000f000000000000ffff0000ffffffff",
		"0114000c00000002fffe0000", "0114000c00000002ff000000", "0114000c00000002feff0000",
		"0216001000000002fffffffe00000000", "0216001000000002ffffffff00000000", "02160010000000020000ff0000000000",
		// Port descriptions: 1.5's port, a refused port, flags.
		"0612001800000002000d0000000000000000000500000000", "0612001800000002000d0000000000000000ff0000000000",
		"0412001000000002000d000100000000",
		// Port mods: advertise features per version, a refused port.
		"03100028000000040000ff0000000000aa55aa550002000000000004000000040000000000000000",
		// Flow and group statistics with durations that are not whole
		// milliseconds.
		"041300480000000200010000000000000038000000000005000000648000000000000000000000000000000000000000000000000000000000000000000000000001000400000000",
		"0413004800000002000100000000000000380000000000050016e3608000000000000000000000000000000000000000000000000000000000000000000000000001000400000000",
		"04130038000000020006000000000000002800000000000100000000000000000000000000000000000000000000000000000005000005dc",
		// Session settings.
		"0104001400000006000023200000000c00000000", "0104001800000008000023200000000f0000000000000000",
	}
	// Table status: vacancy events down and up, a table without the
	// vacancy property.
	all := uint32(7)
	msgs = append(msgs,
		encodeHex(t, mf.OF14, &ofp.TableStatus{Reason: ofp.TableReasonVacancyDown, Desc: ofp.TableDesc{TableID: 1,
			Config: ofp.TableConfigVacancyEvents, EvictionFlags: &all, Vacancy: &ofp.TableVacancy{Down: 20, Up: 80, Vacancy: 10}}}),
		encodeHex(t, mf.OF15, &ofp.TableStatus{Reason: ofp.TableReasonVacancyUp, Desc: ofp.TableDesc{TableID: 1,
			Config: ofp.TableConfigVacancyEvents | ofp.TableConfigEviction, EvictionFlags: &all, Vacancy: &ofp.TableVacancy{Down: 20, Up: 80, Vacancy: 90}}}),
		encodeHex(t, mf.OF14, &ofp.TableStatus{Reason: ofp.TableReasonVacancyUp, Desc: ofp.TableDesc{TableID: 2}}))
	for _, v := range []uint8{mf.OF10, mf.OF11, mf.OF13, mf.OF14, mf.OF15} {
		msgs = append(msgs,
			encodeHex(t, v, &ofp.PortMod{PortNo: 3, HWAddr: [6]byte{1, 2, 3, 4, 5, 6}, Config: ofp.PCPortDown | ofp.PCNoFwd, Mask: ofp.PCNoFwd, Advertise: 0x2a}),
			encodeHex(t, v, &ofp.PortMod{PortNo: ofp.PortAny - 1, Mask: ofp.PCNoPacketIn}),
			encodeHex(t, v, &ofp.TableStatsRequest{}),
			encodeHex(t, v, &ofp.PortDescRequest{PortNo: ofp.PortAny}),
			encodeHex(t, v, &ofp.QueueStatsRequest{PortNo: 2, QueueID: 1}),
			encodeHex(t, v, &ofp.QueueStatsReply{Stats: []ofp.QueueStats{
				{PortNo: 1, QueueID: 0, TxBytes: 10, TxPackets: 1, TxErrors: ^uint64(0), DurationSec: 3, DurationNsec: 5},
				{PortNo: ofp.PortAny - 1, QueueID: 7, DurationSec: ^uint32(0)},
			}}),
			encodeHex(t, v, &ofp.QueueGetConfigRequest{PortNo: 4, QueueID: ofp.QueueAll}),
			encodeHex(t, v, &ofp.QueueGetConfigReply{PortNo: 4, Queues: []ofp.Queue{
				{PortNo: 4, QueueID: 2, MinRate: 0xffff, MaxRate: 0xffff}, {PortNo: 4, QueueID: 1, MinRate: minRate(v), MaxRate: 0xffff},
			}}),
			encodeHex(t, v, &ofp.TableStatsReply{Stats: []ofp.TableStats{
				{TableID: 0, ActiveCount: 1, LookupCount: 5, MatchedCount: 4},
				{TableID: 1}, {TableID: 2}, {TableID: 3, ActiveCount: 2}, {TableID: 4, ActiveCount: 2},
			}}),
		)
	}
	// OpenFlow 1.0 tables that cannot wildcard every field.
	msgs = append(msgs, encodeHex(t, mf.OF10, &ofp.TableStatsReply{Stats: []ofp.TableStats{
		{TableID: 0, Wildcards: 0x3fffff, MaxEntries: 10}, {TableID: 1, Wildcards: 0x30_0f01, MaxEntries: 10},
		{TableID: 2, Wildcards: 0x30_0f01, MaxEntries: 10},
	}}))
	// Role status and request forwarding.
	gm, _, err := ofptext.ParseGroupMod("group_id=5,type=all,bucket=output:1,bucket=output:2", ofp.GroupAdd)
	if err != nil {
		t.Fatal(err)
	}
	mm, err := ofptext.ParseMeterMod("meter=3,kbps,band=type=drop,rate=100", ofp.MeterAdd)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []uint8{mf.OF13, mf.OF14, mf.OF15} {
		for _, rs := range []ofp.RoleStatus{
			{Role: ofp.RoleMaster, Reason: ofp.RoleReasonConfig, GenerationID: 255},
			{Role: ofp.RoleSlave, Reason: ofp.RoleReasonExperimenter, GenerationID: ^uint64(0)},
			{Role: ofp.RoleEqual, Reason: ofp.RoleReasonPrimaryRequest},
			{Role: ofp.RoleNoChange, Reason: 9, GenerationID: 1},
		} {
			msgs = append(msgs, encodeHex(t, v, &rs))
		}
		msgs = append(msgs, encodeHex(t, v, &ofp.RequestForward{XID: 9, Inner: mm}))
	}
	for _, v := range []uint8{mf.OF10, mf.OF11, mf.OF13, mf.OF14, mf.OF15} {
		msgs = append(msgs, encodeHex(t, v, &ofp.RequestForward{XID: 7, Inner: gm}))
	}
	// Session messages and conntrack flushes.
	v4 := func(a, b, c, d byte) [16]byte { return [16]byte{10: 0xff, 11: 0xff, 12: a, 13: b, 14: c, 15: d} }
	v6 := [16]byte{0: 0xfd, 15: 1}
	for _, v := range []uint8{mf.OF10, mf.OF13, mf.OF15} {
		msgs = append(msgs,
			encodeHex(t, v, &ofp.CTFlush{}),
			encodeHex(t, v, &ofp.CTFlush{Zone: 3, HasZone: true, IPProto: 17, Orig: ofp.CTTuple{Dst: v4(1, 2, 3, 4), SrcPort: 5}}),
			encodeHex(t, v, &ofp.CTFlush{IPProto: 1, Reply: ofp.CTTuple{Src: v4(9, 9, 9, 9), ICMPID: 4, ICMPType: 8}}),
			encodeHex(t, v, &ofp.CTFlush{IPProto: 6, Orig: ofp.CTTuple{Src: v6, DstPort: 80}}),
			encodeHex(t, v, &ofp.CTFlushZone{Zone: 65535}),
			encodeHex(t, v, &ofp.SetPacketInFormat{Format: ofp.PacketInStandard}),
			encodeHex(t, v, &ofp.SetPacketInFormat{Format: ofp.PacketInNXT}),
			encodeHex(t, v, &ofp.SetControllerID{ID: 7}),
			encodeHex(t, v, &ofp.RoleRequest{Nicira: true, Role: ofp.NXRoleOther}),
			encodeHex(t, v, &ofp.RoleRequest{Nicira: true, Reply: true, Role: ofp.NXRoleMaster}),
			encodeHex(t, v, &ofp.AsyncConfig{Nicira: true, Master: [ofp.NumAsyncKinds]uint32{1 << 7, 1, 1 << 9}, Slave: [ofp.NumAsyncKinds]uint32{2, 0, 0x3f}}),
		)
	}
	for _, v := range []uint8{mf.OF12, mf.OF13, mf.OF14, mf.OF15} {
		for _, rr := range []ofp.RoleRequest{
			{Role: ofp.RoleEqual, GenerationID: 9}, {Reply: true, Role: ofp.RoleSlave, GenerationID: ^uint64(0)},
			{Role: ofp.RoleMaster, GenerationID: 0}, {Reply: true, Role: ofp.RoleNoChange, GenerationID: 3},
		} {
			msgs = append(msgs, encodeHex(t, v, &rr))
		}
	}
	for _, v := range []uint8{mf.OF13, mf.OF14, mf.OF15} {
		all := [ofp.NumAsyncKinds]uint32{0x3f, 7, 0x3f, 7, 0x18, 3}
		msgs = append(msgs,
			encodeHex(t, v, &ofp.AsyncConfig{Master: all, Slave: [ofp.NumAsyncKinds]uint32{0x40, 8, 0x40}, Present: 0xfff}),
			encodeHex(t, v, &ofp.AsyncConfig{Reply: true, Master: all, Present: 0xfff}),
			encodeHex(t, v, &ofp.GetAsyncRequest{}),
		)
	}
	// Statistics with the more flag, exact durations.
	for _, v := range []uint8{mf.OF10, mf.OF13, mf.OF15} {
		msgs = append(msgs,
			encodeHex(t, v, &ofp.DescStatsRequest{Flags: 1}),
			encodeHex(t, v, &ofp.DescStatsReply{Flags: 1, MfrDesc: "m", HWDesc: "h", SWDesc: "s", SerialNum: "n", DPDesc: "d"}),
			encodeHex(t, v, &ofp.PortStatsRequest{Flags: 1, PortNo: ofp.PortAny - 1}),
			encodeHex(t, v, &ofp.PortStatsReply{Flags: 1, Stats: []ofp.PortStats{
				{PortNo: 12, RxPackets: 1, TxBytes: ^uint64(0), DurationSec: 5, DurationNsec: 1500000},
				{PortNo: 3, DurationSec: ^uint32(0)},
			}}),
			encodeHex(t, v, &ofp.TableStatsReply{Flags: 1, Stats: []ofp.TableStats{{TableID: 0, Wildcards: 0x3fffff}}}),
			encodeHex(t, v, &ofp.QueueStatsReply{Flags: 1}),
		)
	}
	// OpenFlow 1.4 queue descriptions with rates (8-byte properties).
	msgs = append(msgs, "0513003000000002000f0000000000000000000200000001002000000000000000010008003200000002000803e90000")
	for _, h := range msgs {
		got := runGvs("", "ofp-print", h)
		if strings.Contains(got.stderr, "not printed yet") {
			t.Errorf("ofp-print %s (%s): %s", h, rawName(t, h), got.stderr)
			continue
		}
		want := runOVS(t, bin, "", "ofp-print", h)
		if reason, ok := printDifferences[h]; ok {
			if got == want {
				t.Errorf("ofp-print %s is listed as differing (%s) but now matches; remove it", h, reason)
			}
			continue
		}
		if got != want {
			t.Errorf("ofp-print %s (%s):\n got %+v\nwant %+v", h, rawName(t, h), got, want)
		}
	}
}

// printDifferences are messages of
// TestOfpPrintOfStatsAndConfigMessagesMatchesOVSOfctl gvs-ofctl prints
// differently from ovs-ofctl, by hex, with the reason.
var printDifferences = map[string]string{}

// minRate is a minimum rate the encoder writes for version v (every
// version carries one: OpenFlow 1.4's queue description properties are
// the 8-byte form).
func minRate(uint8) uint16 { return 1000 }

// TestOnlineTableAndPortPrintersShareOfpPrint checks that dump-tables'
// and dump-ports-desc's reply printing is ofp-print's.
func TestOnlineTableAndPortPrintersShareOfpPrint(t *testing.T) {
	for _, h := range []string{
		encodeHex(t, mf.OF13, &ofp.TableStatsReply{Stats: []ofp.TableStats{{TableID: 0, ActiveCount: 3}, {TableID: 1}, {TableID: 2}, {TableID: 3, ActiveCount: 1}}}),
		encodeHex(t, mf.OF13, &ofp.PortDescReply{Flags: ofp.StatsReplyMore, Ports: []ofp.Port{{PortNo: 2, State: 4}, {PortNo: 1}}}),
	} {
		b, _ := hex.DecodeString(h)
		m, err := ofp.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		var sb strings.Builder
		w := bufio.NewWriter(&sb)
		switch r := m.Body.(type) {
		case *ofp.TableStatsReply:
			ofprint.TableStatsReply(w, m, r)
		case *ofp.PortDescReply:
			printPortDescs(w, []*ofp.Msg{m})
		}
		w.Flush()
		if got := runGvs("", "ofp-print", h); got.stdout != sb.String() || got.code != 0 {
			t.Errorf("%s: online printer %q, ofp-print %+v", h, sb.String(), got)
		}
	}
}
