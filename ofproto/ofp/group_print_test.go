package ofp_test

import (
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// groupPrintFile holds what ovs-ofctl ofp-print prints for gvs's
// encodings of hand-built group and meter messages (groupPrintCases);
// rewritten with -update, and reviewed.
const groupPrintFile = "testdata/group_print.txt"

type groupPrintCase struct {
	name string
	v    uint8
	msg  ofp.Message
}

// lossyPrintCases do not decode back to the built message: bucket IDs
// do not exist before OpenFlow 1.5, and without FieldOrder the hashed
// fields are named from their masks.
var lossyPrintCases = map[string]bool{
	"of13 fast failover group": true, "of12 delete all groups": true, "of15 group desc reply": true,
}

func groupPrintCases(t testing.TB) []groupPrintCase {
	out := func(p uint32) ofp.Action { return ofp.Action{Type: ofp.ActOutput, Port: p} }
	bk := func(id uint32, w uint16, acts ...ofp.Action) ofp.Bucket {
		return ofp.Bucket{ID: id, Weight: w, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: acts}
	}
	var fields mf.Match
	for _, f := range []struct {
		name string
		mask []byte
	}{{"eth_src", nil}, {"ipv6_dst", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0}}, {"udp_src", nil}} {
		fd := mf.ByName(f.name)
		if err := fields.SetMasked(fd, make([]byte, fd.Bytes), f.mask); err != nil {
			t.Fatal(err)
		}
	}
	order := []mf.ID{mf.ByName("eth_src").ID, mf.ByName("ipv6_dst").ID, mf.ByName("udp_src").ID}
	ff := []ofp.Bucket{
		{WatchPort: 3, WatchGroup: ofp.GroupAny, Actions: []ofp.Action{out(3)}},
		{ID: 1, WatchPort: ofp.PortAny, WatchGroup: 9, Actions: []ofp.Action{out(4)}},
	}
	return []groupPrintCase{
		{"of15 select group with hash fields", 6, &ofp.GroupMod{Command: ofp.GroupAdd, Type: ofp.GroupTypeSelect, GroupID: 10, CommandBucketID: ofp.BucketAll,
			Buckets: []ofp.Bucket{bk(4, 7, out(1)), bk(5, 1, out(2), out(3))}, SelectionMethod: "hash", SelectionParam: 42, Fields: fields, FieldOrder: order}},
		{"nx select group with dp_hash", 1, &ofp.GroupMod{Command: ofp.GroupAddOrMod, Type: ofp.GroupTypeSelect, GroupID: 11, CommandBucketID: ofp.BucketAll,
			Buckets: []ofp.Bucket{bk(0, 2, out(1))}, SelectionMethod: "dp_hash", SelectionParam: 3}},
		{"of13 fast failover group", 4, &ofp.GroupMod{Command: ofp.GroupModify, Type: ofp.GroupTypeFF, GroupID: 12, Buckets: ff}},
		{"of15 fast failover group", 6, &ofp.GroupMod{Command: ofp.GroupAdd, Type: ofp.GroupTypeFF, GroupID: 12, CommandBucketID: ofp.BucketAll, Buckets: ff}},
		{"nx insert bucket last", 1, &ofp.GroupMod{Command: ofp.GroupInsertBucket, Type: ofp.GroupTypeAll, GroupID: 13, CommandBucketID: ofp.BucketLast,
			Buckets: []ofp.Bucket{bk(8, 0, out(5))}}},
		{"of15 remove all buckets", 6, &ofp.GroupMod{Command: ofp.GroupRemoveBucket, GroupID: 13, CommandBucketID: ofp.BucketAll}},
		{"of12 delete all groups", 3, &ofp.GroupMod{Command: ofp.GroupDelete, GroupID: ofp.GroupAll}},
		{"of15 group desc request", 6, &ofp.GroupDescRequest{GroupID: 7}},
		{"of14 group desc request", 5, &ofp.GroupDescRequest{GroupID: ofp.GroupAll}},
		{"of11 group desc reply", 2, &ofp.GroupDescReply{Groups: []ofp.GroupDesc{
			{Type: ofp.GroupTypeSelect, GroupID: 1, Buckets: []ofp.Bucket{bk(0, 5, out(1)), bk(1, 6, out(2))}},
			{Type: ofp.GroupTypeIndirect, GroupID: 2, Buckets: []ofp.Bucket{bk(0, 0, out(3))}}}}},
		{"of15 group desc reply", 6, &ofp.GroupDescReply{Flags: ofp.StatsReplyMore, Groups: []ofp.GroupDesc{
			{Type: ofp.GroupTypeSelect, GroupID: 10, Buckets: []ofp.Bucket{bk(4, 7, out(1))}, SelectionMethod: "hash", Fields: fields},
			{Type: ofp.GroupTypeFF, GroupID: 12, Buckets: ff}}}},
		{"nx group stats request", 1, &ofp.GroupStatsRequest{GroupID: ofp.GroupAll}},
		{"of12 group stats reply", 3, &ofp.GroupStatsReply{Stats: []ofp.GroupStats{{GroupID: 3, RefCount: 2, PacketCount: 10, ByteCount: 1000,
			Buckets: []ofp.BucketStats{{PacketCount: 4, ByteCount: 400}, {PacketCount: 6, ByteCount: 600}}}}}},
		{"of13 group stats reply", 4, &ofp.GroupStatsReply{Stats: []ofp.GroupStats{{GroupID: 3, RefCount: 2, PacketCount: 10, ByteCount: 1000,
			DurationSec: 5, DurationNsec: 500000000, Buckets: []ofp.BucketStats{{PacketCount: 10, ByteCount: 1000}}}, {GroupID: 4}}}},
		{"of11 group features request", 2, &ofp.GroupFeaturesRequest{}},
		{"nx group features reply", 1, ofp.OVSGroupFeatures(1)},
		{"of15 group features reply", 6, ofp.OVSGroupFeatures(6)},
		{"of13 meter mod with dscp remark", 4, &ofp.MeterMod{Command: ofp.MeterAdd, Flags: ofp.MeterFlagKbps | ofp.MeterFlagBurst, MeterID: 5,
			Bands: []ofp.MeterBand{{Type: ofp.MeterBandDrop, Rate: 1000, BurstSize: 50}, {Type: ofp.MeterBandDSCPRemark, Rate: 500, BurstSize: 20, PrecLevel: 2}}}},
		{"of14 meter delete", 5, &ofp.MeterMod{Command: ofp.MeterDelete, MeterID: ofp.MeterAll}},
		{"of13 meter config request", 4, &ofp.MeterConfigRequest{MeterID: ofp.MeterAll}},
		{"of15 meter config reply", 6, &ofp.MeterConfigReply{Configs: []ofp.MeterConfig{
			{Flags: ofp.MeterFlagPktps | ofp.MeterFlagStats, MeterID: 1, Bands: []ofp.MeterBand{{Type: ofp.MeterBandDrop, Rate: 10}}},
			{Flags: ofp.MeterFlagKbps, MeterID: 2, Bands: []ofp.MeterBand{{Type: ofp.MeterBandDSCPRemark, Rate: 20, PrecLevel: 1}}}}}},
		{"of13 meter stats request", 4, &ofp.MeterStatsRequest{MeterID: 3}},
		{"of14 meter stats reply", 5, &ofp.MeterStatsReply{Stats: []ofp.MeterStats{{MeterID: 3, FlowCount: 2, PacketInCount: 30, ByteInCount: 3000,
			DurationSec: 9, DurationNsec: 1000, Bands: []ofp.BandStats{{PacketCount: 5, ByteCount: 500}, {PacketCount: 1, ByteCount: 100}}}}}},
		{"of13 meter features request", 4, &ofp.MeterFeaturesRequest{}},
		{"of15 meter features reply", 6, ofp.OVSMeterFeatures()},
	}
}

func groupPrintGolden(t *testing.T, ofctl string) string {
	var sb strings.Builder
	for _, pc := range groupPrintCases(t) {
		b := mustEncode(t, pc.v, 7, pc.msg)
		h := hex.EncodeToString(b)
		out, err := exec.Command(ofctl, "ofp-print", h).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: ovs-ofctl ofp-print %s: %v\n%s", pc.name, h, err, out)
		}
		fmt.Fprintf(&sb, "# %s %s\n", pc.name, h)
		for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
			if !vlogLine.MatchString(l) {
				sb.WriteString(l + "\n")
			}
		}
	}
	return sb.String()
}

// gvs's encodings of hand-built group and meter messages print, with
// Open vSwitch's ofp-print, as testdata/group_print.txt says (reviewed
// when recorded with -update).
func TestGroupEncodingsPrintAsExpectedWithOVSOfctl(t *testing.T) {
	got := groupPrintGolden(t, needOVSOfctl(t))
	if *update {
		if err := os.WriteFile(groupPrintFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(groupPrintFile)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("ofp-print output differs from %s:\n%s", groupPrintFile, got)
	}
}

// The hand-built messages decode back to what was encoded.
func TestGroupEncodingsDecodeBack(t *testing.T) {
	for _, pc := range groupPrintCases(t) {
		b := mustEncode(t, pc.v, 7, pc.msg)
		m, err := ofp.Decode(b)
		if err != nil {
			t.Errorf("%s: %v", pc.name, err)
			continue
		}
		if got, want := describe(m.Body), describe(pc.msg); got != want && !lossyPrintCases[pc.name] {
			t.Errorf("%s:\n got %s\nwant %s", pc.name, got, want)
		}
		if again := mustEncode(t, pc.v, 7, m.Body); string(again) != string(b) {
			t.Errorf("%s: re-encoding differs\n got %x\nwant %x", pc.name, again, b)
		}
	}
}
