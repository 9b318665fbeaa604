package ofp_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

func matchOf(t *testing.T, fields ...any) *mf.Match {
	t.Helper()
	var m mf.Match
	for i := 0; i < len(fields); i += 2 {
		f := mf.ByName(fields[i].(string))
		if err := m.SetMasked(f, fields[i+1].([]byte), nil); err != nil {
			t.Fatal(err)
		}
	}
	return &m
}

func TestValidateOfpactsAppliesOVSMatchChecks(t *testing.T) {
	ip := matchOf(t, "eth_type", []byte{8, 0})
	none := matchOf(t)
	setIPDst := ofp.Action{Type: ofp.ActSetField, Field: mf.ByName("ip_dst"), Value: []byte{10, 0, 0, 1}}
	pushVLAN := ofp.Action{Type: ofp.ActPushVLAN, Arg: 0x8100}
	setVID := ofp.Action{Type: ofp.ActSetField, Field: mf.ByName("vlan_vid"), Value: []byte{0x10, 5}}
	for _, c := range []struct {
		name  string
		acts  []ofp.Action
		m     *mf.Match
		v     uint8
		table uint8
		want  ofp.ErrCode
	}{
		{"set_field ip_dst on an IP flow", []ofp.Action{setIPDst}, ip, mf.OF13, 0, 0},
		{"set_field ip_dst without IP", []ofp.Action{setIPDst}, none, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
		{"set_field vlan_vid without a VLAN", []ofp.Action{{Type: ofp.ActSetField, Field: mf.ByName("vlan_vid"), Value: []byte{0x10, 5}}},
			none, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
		{"set_field vlan_vid after push_vlan", []ofp.Action{{Type: ofp.ActPushVLAN, Arg: 0x8100},
			{Type: ofp.ActSetField, Field: mf.ByName("vlan_vid"), Value: []byte{0x10, 5}}}, none, mf.OF13, 0, 0},
		{"goto_table to the same table", []ofp.Action{{Type: ofp.ActGotoTable, Table: 3}}, none, mf.OF13, 3, ofp.OFPBIC_BAD_TABLE_ID},
		{"goto_table to a later table", []ofp.Action{{Type: ofp.ActGotoTable, Table: 4}}, none, mf.OF13, 3, 0},
		{"output to port NONE", []ofp.Action{{Type: ofp.ActOutput, Port: ofp.PortNone}}, none, mf.OF13, 0, ofp.OFPBAC_BAD_OUT_PORT},
		{"output beyond the switch's ports", []ofp.Action{{Type: ofp.ActOutput, Port: 200}}, none, mf.OF13, 0, ofp.OFPBAC_BAD_OUT_PORT},
		{"output to the controller", []ofp.Action{{Type: ofp.ActOutput, Port: ofp.PortController}}, none, mf.OF13, 0, 0},
		{"meter 0", []ofp.Action{{Type: ofp.ActMeter}}, none, mf.OF13, 0, ofp.OFPMMFC_INVALID_METER},
		{"ct without IP", []ofp.Action{{Type: ofp.ActCT, Body: &ofp.CT{Table: 0xff}}}, none, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
		{"mod_nw_src without IP in OF1.0", []ofp.Action{{Type: ofp.ActSetNWSrc, Arg: 1}}, none, mf.OF10, 0, 0},
		{"mod_nw_src without IP in OF1.3", []ofp.Action{{Type: ofp.ActSetNWSrc, Arg: 1}}, none, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
		{"move from a field the match lacks", []ofp.Action{{Type: ofp.ActMove,
			Src: ofp.Subfield{Field: mf.ByName("tcp_src"), NBits: 16}, Dst: ofp.Subfield{Field: mf.ByName("reg0"), NBits: 16}}},
			ip, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
		{"clone checks its actions", []ofp.Action{{Type: ofp.ActClone, Nested: []ofp.Action{setIPDst}}}, none, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
		{"push_vlan inside clone applies inside it", []ofp.Action{{Type: ofp.ActClone, Nested: []ofp.Action{pushVLAN, setVID}}}, none, mf.OF13, 0, 0},
		{"push_vlan inside clone does not outlive it", []ofp.Action{{Type: ofp.ActClone, Nested: []ofp.Action{pushVLAN}}, setVID}, none, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
		{"push_vlan before clone applies inside it", []ofp.Action{pushVLAN, {Type: ofp.ActClone, Nested: []ofp.Action{setVID}}}, none, mf.OF13, 0, 0},
		{"pop_vlan inside clone does not outlive it", []ofp.Action{pushVLAN, {Type: ofp.ActClone, Nested: []ofp.Action{{Type: ofp.ActPopVLAN}}}, setVID}, none, mf.OF13, 0, 0},
		{"pop_vlan inside clone applies inside it", []ofp.Action{pushVLAN, {Type: ofp.ActClone, Nested: []ofp.Action{{Type: ofp.ActPopVLAN}, setVID}}}, none, mf.OF13, 0, ofp.OFPBAC_MATCH_INCONSISTENT},
	} {
		err := ofp.ValidateOfpactsVersion(c.v, c.acts, c.m, 100, c.table, 254)
		if got := ofp.CodeOf(err); got != c.want {
			t.Errorf("%s: %v (%s), want %s", c.name, err, got, c.want)
		}
		if c.name == "mod_nw_src without IP in OF1.3" && !errors.Is(err, ofp.ErrOnlyOF10) {
			t.Errorf("%s: %v does not wrap ErrOnlyOF10", c.name, err)
		}
	}
}

// Validation neither changes the caller's match (actions that change the
// packet change a copy) nor, when no action changes the packet, copies
// it: every flow_mod is validated, and a Match is a kilobyte.
// (The allocation figure is bytes, not objects: the copy was one object.)
func TestValidateOfpactsLeavesTheMatchAloneAndAllocatesNothing(t *testing.T) {
	m := matchOf(t, "eth_type", []byte{8, 0})
	orig := *m
	push := []ofp.Action{{Type: ofp.ActPushVLAN, Arg: 0x8100}, {Type: ofp.ActSetField, Field: mf.ByName("vlan_vid"), Value: []byte{0x10, 5}}}
	if err := ofp.ValidateOfpactsVersion(mf.OF13, push, m, 100, 0, 254); err != nil {
		t.Fatal(err)
	}
	if *m != orig {
		t.Error("validating push_vlan changed the caller's match")
	}
	plain := []ofp.Action{{Type: ofp.ActSetField, Field: mf.ByName("ip_dst"), Value: []byte{10, 0, 0, 1}},
		{Type: ofp.ActOutput, Port: 1}, {Type: ofp.ActGotoTable, Table: 2}}
	const runs = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if err := ofp.ValidateOfpactsVersion(mf.OF13, plain, m, 100, 0, 254); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 128 {
		t.Errorf("%d bytes allocated per validation, want at most 128 (the checker, not a copy of the match)", per)
	}
}

// Validation records the flow context that cross-version encoding needs:
// mod_vlan_vid received in OF1.0 on a flow without a VLAN gains a
// push_vlan in OF1.3; with a VLAN match it does not.
func TestValidateOfpactsRecordsVLANContextForEncoding(t *testing.T) {
	vid := func() []ofp.Action {
		return []ofp.Action{{Type: ofp.ActSetVLANVID, Raw: ofp.RawActOFPAT10_SET_VLAN_VID, Arg: 10, PushVLANIfNeeded: true}}
	}
	for _, c := range []struct {
		m    *mf.Match
		want string
	}{
		{matchOf(t), "0011000881000000" + "0019001080000c02100a000000000000"},
		{matchOf(t, "vlan_tci", []byte{0x10, 3}), "0019001080000c02100a000000000000"},
	} {
		acts := vid()
		if err := ofp.ValidateOfpactsVersion(mf.OF10, acts, c.m, 100, 0, 254); err != nil {
			t.Fatal(err)
		}
		b, err := ofp.AppendActions(nil, acts, mf.OF13)
		if err != nil {
			t.Fatal(err)
		}
		if got := hexOf(b); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// AppendOfpacts puts actions between instructions in apply-actions and
// the instructions in Open vSwitch's order; DecodeOfpacts reads them back.
func TestOfpactsInstructionsRoundTrip(t *testing.T) {
	acts := []ofp.Action{
		{Type: ofp.ActMeter, Arg: 7},
		{Type: ofp.ActOutput, Port: 1},
		{Type: ofp.ActClearActions},
		{Type: ofp.ActWriteActions, Nested: []ofp.Action{{Type: ofp.ActGroup, Arg: 2}}},
		{Type: ofp.ActWriteMetadata, Arg: 5, Arg2: 0xff},
		{Type: ofp.ActGotoTable, Table: 9},
	}
	b, err := ofp.AppendOfpacts(nil, acts, mf.OF13, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "0006000800000007" + "0004001800000000" + "00000010000000010000000000000000" +
		"0005000800000000" + "0003001000000000" + "0016000800000002" +
		"0002001800000000" + "0000000000000005" + "00000000000000ff" + "0001000809000000"
	if got := hexOf(b); got != want {
		t.Errorf("encoded\n got %s\nwant %s", got, want)
	}
	back, err := ofp.DecodeOfpacts(b, mf.OF13, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(acts) {
		t.Fatalf("decoded %d actions, want %d: %+v", len(back), len(acts), back)
	}
	for i := range acts {
		if back[i].Type != acts[i].Type {
			t.Errorf("action %d: %s, want %s", i, back[i].Type, acts[i].Type)
		}
	}
	// Out of order: goto_table before an action.
	if _, err := ofp.AppendOfpacts(nil, []ofp.Action{{Type: ofp.ActGotoTable, Table: 1}, {Type: ofp.ActOutput, Port: 1}}, mf.OF13, true); ofp.CodeOf(err) != ofp.OFPBAC_UNSUPPORTED_ORDER {
		t.Errorf("goto_table before output: %v, want OFPBAC_UNSUPPORTED_ORDER", err)
	}
}

// Rules keep the decoded lists: a list has exactly its actions' room,
// whether it came as an action list or as instructions.
func TestDecodedActionListsHaveNoSlack(t *testing.T) {
	acts := []ofp.Action{{Type: ofp.ActOutput, Port: 1}, {Type: ofp.ActOutput, Port: 2}, {Type: ofp.ActOutput, Port: 3},
		{Type: ofp.ActWriteMetadata, Arg: 1, Arg2: 1}, {Type: ofp.ActGotoTable, Table: 5}}
	for _, instructions := range []bool{false, true} {
		in := acts
		if !instructions {
			in = acts[:3]
		}
		b, err := ofp.AppendOfpacts(nil, in, mf.OF13, instructions)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ofp.DecodeOfpacts(b, mf.OF13, instructions)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(in) || cap(got) != len(got) {
			t.Errorf("instructions=%v: decoded %d actions with room for %d, want %d and %d", instructions, len(got), cap(got), len(in), len(in))
		}
	}
}
