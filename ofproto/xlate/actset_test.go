package xlate

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// TestActionSetListOrdersAsOpenVSwitch: one of each slot action (the
// last written) in the spec's order, every set/move action in order, then
// the highest-priority final action; actions with no place in an action
// set are dropped, and without a final action nothing runs.
func TestActionSetListOrdersAsOpenVSwitch(t *testing.T) {
	out := func(p uint32) ofp.Action { return ofp.Action{Type: ofp.ActOutput, Port: p} }
	set := []ofp.Action{
		out(1),
		{Type: ofp.ActSetDLSrc, Arg: 1},
		{Type: ofp.ActPushVLAN, Arg: 0x8100},
		{Type: ofp.ActDecTTL},
		{Type: ofp.ActNote},
		{Type: ofp.ActStripVLAN},
		{Type: ofp.ActSetDLDst, Arg: 2},
		{Type: ofp.ActPushVLAN, Arg: 0x88a8},
		out(2),
		{Type: ofp.ActResubmit, Table: 3},
	}
	got := actionSetList(set)
	want := []ofp.Action{
		{Type: ofp.ActStripVLAN},
		{Type: ofp.ActPushVLAN, Arg: 0x88a8},
		{Type: ofp.ActDecTTL},
		{Type: ofp.ActSetDLSrc, Arg: 1},
		{Type: ofp.ActSetDLDst, Arg: 2},
		out(2),
	}
	if len(got) != len(want) {
		t.Fatalf("got %d actions %v, want %v", len(got), got, want)
	}
	for i := range want {
		if got[i].Type != want[i].Type || got[i].Arg != want[i].Arg || got[i].Port != want[i].Port {
			t.Errorf("action %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	withGroup := append(set, ofp.Action{Type: ofp.ActGroup, Arg: 7}, out(9))
	if g := actionSetList(withGroup); g[len(g)-1].Type != ofp.ActGroup {
		t.Errorf("a group must win over outputs written after it: %v", g)
	}
	if g := actionSetList([]ofp.Action{{Type: ofp.ActSetDLSrc, Arg: 1}, {Type: ofp.ActDecTTL}}); g != nil {
		t.Errorf("no final action: got %v, want nothing", g)
	}
}
