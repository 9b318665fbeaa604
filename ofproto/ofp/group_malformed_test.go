package ofp_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// groupMalformed builds bad group and meter messages (by corrupting good
// encodings) with the error Open vSwitch gives each; ovs marks those the
// switch can be sent.
func groupMalformed(t testing.TB) []malformedAsync {
	out1 := []ofp.Action{{Type: ofp.ActOutput, Port: 1}}
	plain := ofp.Bucket{WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: out1}
	watched := ofp.Bucket{WatchPort: 1, WatchGroup: ofp.GroupAny, Actions: out1}
	weighted := ofp.Bucket{Weight: 3, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: out1}
	gm := func(v uint8, typ uint8, cmd uint16, bs ...ofp.Bucket) []byte {
		return mustEncode(t, v, 9, &ofp.GroupMod{Command: cmd, Type: typ, GroupID: 1, CommandBucketID: ofp.BucketAll, Buckets: bs})
	}
	set := func(b []byte, off int, v ...byte) []byte { copy(b[off:], v); return b }
	app := func(b []byte, v ...byte) []byte { return fixLen(append(append([]byte(nil), b...), v...)) }
	put32 := func(b []byte, off int, v uint32) []byte { binary.BigEndian.PutUint32(b[off:], v); return b }
	sel15 := func(typ uint8, cmd uint16, method string, fields ...mf.ID) []byte {
		var m mf.Match
		for _, id := range fields {
			f := mf.ByID(id)
			if err := m.SetMasked(f, make([]byte, f.Bytes), nil); err != nil {
				t.Fatal(err)
			}
		}
		var bs []ofp.Bucket
		if cmd != ofp.GroupDelete {
			bs = []ofp.Bucket{{Weight: 1, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: out1}}
		}
		return mustEncode(t, 6, 9, &ofp.GroupMod{Command: cmd, Type: typ, GroupID: 1, CommandBucketID: ofp.BucketAll, Buckets: bs,
			SelectionMethod: method, Fields: m, FieldOrder: fields})
	}
	ethDst := mf.ByName("eth_dst").ID
	// selProp is a hand-made OpenFlow 1.5 select group mod whose
	// selection method property carries method and then fields.
	selProp := func(method string, fields ...byte) []byte {
		b := gm(6, ofp.GroupTypeSelect, ofp.GroupAdd, weighted)
		p := []byte{0xff, 0xff, 0, 0, 0, 0, 0x15, 0x4d, 0, 0, 0, 1, 0, 0, 0, 0}
		name := make([]byte, 16)
		copy(name, method)
		p = append(append(append(p, name...), 0, 0, 0, 0, 0, 0, 0, 0), fields...)
		binary.BigEndian.PutUint16(p[2:], uint16(len(p)))
		for len(p)%8 != 0 {
			p = append(p, 0)
		}
		return app(b, p...)
	}
	mm := func(cmd, flags uint16, bands ...ofp.MeterBand) []byte {
		return mustEncode(t, 4, 9, &ofp.MeterMod{Command: cmd, Flags: flags, MeterID: 1, Bands: bands})
	}
	drop := ofp.MeterBand{Type: ofp.MeterBandDrop, Rate: 100}
	return []malformedAsync{
		// OpenFlow 1.1–1.4 group mods.
		{"of13 group mod with a partial bucket", app(gm(4, 0, ofp.GroupAdd, plain), 0, 8, 0, 0, 0, 0, 0, 0), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of13 group mod bucket shorter than its header", set(gm(4, 0, ofp.GroupAdd, plain), 16, 0, 8), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of13 group mod bucket past the end", set(gm(4, 0, ofp.GroupAdd, plain), 16, 0, 40), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of13 group mod watch port in the gap", put32(gm(4, ofp.GroupTypeFF, ofp.GroupAdd, watched), 20, 0xffff0000), ofp.OFPGMFC_BAD_WATCH, true},
		{"of13 group mod bad action length", set(gm(4, 0, ofp.GroupAdd, plain), 34, 0, 24), ofp.OFPBAC_BAD_LEN, true},
		{"of13 group mod type 7", gm(4, 7, ofp.GroupAdd, plain), ofp.OFPGMFC_BAD_TYPE, true},
		{"of13 group mod command 9", gm(4, 0, 9, plain), ofp.OFPGMFC_BAD_COMMAND, true},
		{"of13 indirect group with two buckets", gm(4, ofp.GroupTypeIndirect, ofp.GroupAdd, plain, plain), ofp.OFPGMFC_INVALID_GROUP, true},
		{"of13 indirect group without buckets", gm(4, ofp.GroupTypeIndirect, ofp.GroupAdd), ofp.OFPGMFC_INVALID_GROUP, true},
		{"of13 all group with a weight", gm(4, ofp.GroupTypeAll, ofp.GroupAdd, weighted), ofp.OFPGMFC_INVALID_GROUP, true},
		{"of13 all group with a watch port", gm(4, ofp.GroupTypeAll, ofp.GroupAdd, watched), ofp.OFPGMFC_WATCH_UNSUPPORTED, true},
		{"of13 ff group bucket without watch", gm(4, ofp.GroupTypeFF, ofp.GroupAdd, plain), ofp.OFPGMFC_INVALID_GROUP, true},
		{"of13 group delete with buckets", gm(4, ofp.GroupTypeAll, ofp.GroupDelete, plain), ofp.OFPGMFC_INVALID_GROUP, true},
		{"of11 group mod shorter than its header", fixLen(gm(2, 0, ofp.GroupAdd)[:12]), ofp.OFPBRC_BAD_LEN, true},
		// OpenFlow 1.5 and NXT_GROUP_MOD.
		{"of15 insert bucket at all", put32(gm(6, 0, ofp.GroupInsertBucket, plain), 20, ofp.BucketAll), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of15 add with a command bucket id", put32(gm(6, 0, ofp.GroupAdd, plain), 20, 5), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of15 bucket array past the end", set(gm(6, 0, ofp.GroupAdd, plain), 16, 0, 64), ofp.OFPBRC_BAD_LEN, true},
		{"of15 bucket actions past the bucket", set(gm(6, 0, ofp.GroupAdd, plain), 26, 0, 32), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of15 duplicate bucket ids", gm(6, 0, ofp.GroupAdd, plain, plain), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of15 bucket id out of range", put32(gm(6, 0, ofp.GroupAdd, plain), 28, 0xffffff01), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of15 unknown bucket property", set(gm(6, ofp.GroupTypeFF, ofp.GroupAdd, watched), 48, 0, 7), ofp.OFPBPC_BAD_TYPE, true},
		{"of15 bucket watch port of 8 bytes", set(fixLen(gm(6, ofp.GroupTypeFF, ofp.GroupAdd, watched)), 50, 0, 12), ofp.OFPBPC_BAD_LEN, true},
		{"of15 remove bucket with buckets", put32(gm(6, 0, ofp.GroupRemoveBucket, plain), 20, 0), ofp.OFPGMFC_BAD_BUCKET, true},
		{"of15 selection method in an all group", set(sel15(ofp.GroupTypeSelect, ofp.GroupAdd, "dp_hash"), 10, ofp.GroupTypeAll), ofp.OFPBPC_BAD_VALUE, true},
		{"of15 selection method on delete", sel15(ofp.GroupTypeSelect, ofp.GroupDelete, "dp_hash"), ofp.OFPBPC_BAD_VALUE, true},
		{"of15 selection method foo", selProp("foo"), ofp.OFPBPC_BAD_VALUE, true},
		{"of15 selection method not terminated", selProp("0123456789abcdef"), ofp.OFPBPC_BAD_VALUE, true},
		{"of15 dp_hash with fields", sel15(ofp.GroupTypeSelect, ofp.GroupAdd, "dp_hash", ethDst), ofp.OFPBPC_BAD_VALUE, true},
		{"of15 hash with an unknown field", selProp("hash", 0x80, 0, 0x7e, 2, 0xff, 0xff), ofp.OFPBMC_BAD_FIELD, true},
		{"of15 hash with a duplicate field", selProp("hash", 0x80, 0, 6, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0, 6, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff),
			ofp.OFPBMC_DUP_FIELD, true},
		{"of15 hash with a masked field header", selProp("hash", 0x80, 0, 0x17, 8, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0), ofp.OFPBMC_BAD_MASK, true},
		{"of15 hash with a truncated field", selProp("hash", 0x80, 0, 6, 6, 0xff, 0xff), ofp.OFPBMC_BAD_LEN, true},
		{"of15 selection property of 24 bytes", app(gm(6, ofp.GroupTypeSelect, ofp.GroupAdd, weighted),
			0xff, 0xff, 0, 24, 0, 0, 0x15, 0x4d, 0, 0, 0, 1, 0, 0, 0, 0, 'h', 'a', 's', 'h', 0, 0, 0, 0), ofp.OFPBPC_BAD_LEN, true},
		{"of15 unknown group property", app(gm(6, 0, ofp.GroupAdd, plain), 0, 3, 0, 8, 0, 0, 0, 0), ofp.OFPBPC_BAD_TYPE, true},
		{"nx group mod duplicate bucket ids", gm(1, 0, ofp.GroupAdd, plain, plain), ofp.OFPGMFC_BAD_BUCKET, true},
		{"nx group mod unknown experimenter property", app(gm(1, 0, ofp.GroupAdd, plain), 0xff, 0xff, 0, 16, 0, 0, 0x23, 0x20, 0, 0, 0, 1, 0, 0, 0, 0),
			ofp.OFPBPC_BAD_EXP_TYPE, true},
		// Meter mods.
		{"meter mod command 3", mm(3, ofp.MeterFlagKbps, drop), ofp.OFPMMFC_BAD_COMMAND, true},
		{"meter mod kbps and pktps", mm(ofp.MeterAdd, ofp.MeterFlagKbps|ofp.MeterFlagPktps, drop), ofp.OFPMMFC_BAD_FLAGS, true},
		{"meter band of length 32", set(mm(ofp.MeterAdd, ofp.MeterFlagKbps, drop), 18, 0, 32), ofp.OFPBRC_BAD_LEN, true},
		{"meter band type 3", set(mm(ofp.MeterAdd, ofp.MeterFlagKbps, drop), 16, 0, 3), ofp.OFPMMFC_BAD_BAND, true},
		{"meter band experimenter", set(mm(ofp.MeterAdd, ofp.MeterFlagKbps, drop), 16, 0xff, 0xff), ofp.OFPMMFC_BAD_BAND, true},
		{"meter mod with a partial band", app(mm(ofp.MeterAdd, ofp.MeterFlagKbps, drop), 0, 1, 0, 16, 0, 0, 0, 0), ofp.OFPBRC_BAD_LEN, true},
		{"meter mod shorter than its header", fixLen(mm(ofp.MeterAdd, ofp.MeterFlagKbps)[:12]), ofp.OFPBRC_BAD_LEN, true},
		// Replies (decoded by controllers only).
		{"group desc entry past the end", set(mustEncode(t, 4, 9, &ofp.GroupDescReply{Groups: []ofp.GroupDesc{{GroupID: 1, Buckets: []ofp.Bucket{plain}}}}), 16, 0, 64),
			ofp.OFPBRC_BAD_LEN, false},
		{"of15 group desc bucket list past the entry", set(mustEncode(t, 6, 9, &ofp.GroupDescReply{Groups: []ofp.GroupDesc{{GroupID: 1, Buckets: []ofp.Bucket{plain}}}}), 24, 0, 64),
			ofp.OFPBRC_BAD_LEN, false},
		{"group stats entry with half a bucket counter", set(mustEncode(t, 4, 9, &ofp.GroupStatsReply{Stats: []ofp.GroupStats{{GroupID: 1, Buckets: make([]ofp.BucketStats, 1)}}}), 16, 0, 48),
			ofp.OFPBRC_BAD_LEN, false},
		{"meter config entry past the end", set(mustEncode(t, 4, 9, &ofp.MeterConfigReply{Configs: []ofp.MeterConfig{{MeterID: 1, Bands: []ofp.MeterBand{drop}}}}), 16, 0, 40),
			ofp.OFPBRC_BAD_LEN, false},
		{"meter stats entry shorter than its header", set(mustEncode(t, 4, 9, &ofp.MeterStatsReply{Stats: []ofp.MeterStats{{MeterID: 1}}}), 20, 0, 32),
			ofp.OFPBRC_BAD_LEN, false},
	}
}

func TestMalformedGroupMessagesDecodeToOVSErrors(t *testing.T) {
	for _, tc := range groupMalformed(t) {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ofp.Decode(tc.msg)
			if got := ofp.CodeOf(err); got != tc.want {
				t.Fatalf("%x: error %v (code %s), want %s", tc.msg, err, got, tc.want)
			}
			var oe *ofp.Error
			if !errors.As(err, &oe) || oe.Unwrap() == nil {
				t.Errorf("error %v does not wrap a cause", err)
			}
		})
	}
}

// Open vSwitch answers each malformed group or meter mod with the error
// gvs's decoder returns.
func TestMalformedGroupMessagesGetTheSameErrorFromOVS(t *testing.T) {
	e := startOVSForeground(t)
	for _, tc := range groupMalformed(t) {
		if !tc.ovs {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			v := tc.msg[0]
			codes := sendToOVS(t, e.mgmt, v, tc.msg)
			want := ofp.NewErrorMsg(v, tc.want, nil).ErrCode(v)
			if len(codes) != 1 || codes[0] != want {
				t.Errorf("Open vSwitch answered %v, want [%s]", codes, want)
			}
		})
	}
}

// gvs's encodings of hand-built group and meter mods, sent in order to a
// real switch, get the answers Open vSwitch gives: none, except where
// the userspace datapath lacks the feature.
func TestHandBuiltGroupAndMeterModsGetOVSsAnswer(t *testing.T) {
	e := startOVSForeground(t)
	cases := groupPrintCases(t)
	byName := map[string]groupPrintCase{}
	for _, pc := range cases {
		byName[pc.name] = pc
	}
	all13 := groupPrintCase{"of13 all group 13", 4, &ofp.GroupMod{Command: ofp.GroupAdd, Type: ofp.GroupTypeAll, GroupID: 13,
		Buckets: []ofp.Bucket{{WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny, Actions: []ofp.Action{{Type: ofp.ActOutput, Port: 1}}}}}}
	drop15 := groupPrintCase{"of15 meter 6 drop", 6, &ofp.MeterMod{Command: ofp.MeterAdd, Flags: ofp.MeterFlagPktps | ofp.MeterFlagStats, MeterID: 6,
		Bands: []ofp.MeterBand{{Type: ofp.MeterBandDrop, Rate: 10}}}}
	steps := []struct {
		pc   groupPrintCase
		want []ofp.ErrCode
	}{
		{byName["of15 select group with hash fields"], nil},
		{byName["nx select group with dp_hash"], nil},
		{byName["of15 fast failover group"], nil},
		{byName["of13 fast failover group"], nil},
		{all13, nil},
		{byName["nx insert bucket last"], nil},
		{byName["of15 remove all buckets"], nil},
		{byName["of12 delete all groups"], nil},
		{drop15, nil},
		// The userspace datapath has drop bands only.
		{byName["of13 meter mod with dscp remark"], []ofp.ErrCode{ofp.OFPMMFC_BAD_BAND}},
		{byName["of14 meter delete"], nil},
	}
	for _, s := range steps {
		b := mustEncode(t, s.pc.v, 7, s.pc.msg)
		codes := sendToOVS(t, e.mgmt, s.pc.v, b)
		var want []ofp.ErrCode
		for _, c := range s.want {
			want = append(want, ofp.NewErrorMsg(s.pc.v, c, nil).ErrCode(s.pc.v))
		}
		if fmt.Sprint(codes) != fmt.Sprint(want) {
			t.Errorf("%s: Open vSwitch answered %v, want %v", s.pc.name, codes, want)
		}
	}
}
