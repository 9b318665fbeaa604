package ofswitch

import (
	"sync"
	"testing"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// newTestDecoder is a flow_mod decoder with no groups or meters, and a
// connection state to decode for.
func newTestDecoder(t *testing.T) (*fmDecoder, *connState) {
	t.Helper()
	n := newTestNotifier(t)
	var mu sync.Mutex
	meters := &meterTable{mu: &mu, m: map[uint32]*meterEntry{}, xl: n.xl}
	d := &fmDecoder{xl: n.xl, groups: &groupTable{mu: &mu, m: map[uint32]*groupEntry{}, xl: n.xl, meters: meters}}
	return d, n.conns.Get(newFMSender(1), true)
}

func wireActions(t *testing.T, v uint8, instructions bool, acts ...ofp.Action) []byte {
	t.Helper()
	raw, err := ofp.AppendOfpacts(nil, acts, v, instructions)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestFlowModDecoderAppliesEachVersionsCookieAndTableRules checks the
// per-version rules: OpenFlow 1.0 ignores the table byte unless the
// connection enabled NXT_FLOW_MOD_TABLE_ID and a modify with cookie
// all-ones leaves cookies; OpenFlow 1.1's modify without a cookie mask
// may add; an OpenFlow 1.3 add to table 0xff is refused.
func TestFlowModDecoderAppliesEachVersionsCookieAndTableRules(t *testing.T) {
	d, st := newTestDecoder(t)
	out := new(oftable.FlowMod)
	fm := &ofp.FlowMod{Format: ofp.FormatOF10, Command: ofp.FlowModify, TableID: 3, Cookie: ^uint64(0), OutPort: ofp.PortAny16,
		Instructions: wireActions(t, 1, false, ofp.Action{Type: ofp.ActOutput, Port: 1})}
	if err := d.decode(out, fm, 1, st); err != nil {
		t.Fatal(err)
	}
	if out.Table != 0xff || out.NewCookie != oftable.CookieUnchanged || out.ModifyMayAdd || len(out.Actions) != 1 {
		t.Fatalf("OpenFlow 1.0 modify: %+v", out)
	}
	st.X.tableIDExt = true
	if err := d.decode(out, fm, 1, st); err != nil || out.Table != 3 {
		t.Fatalf("with flow_mod_table_id: table %d, %v", out.Table, err)
	}
	fm11 := &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowModify, Cookie: 5, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny}
	if err := d.decode(out, fm11, 2, st); err != nil {
		t.Fatal(err)
	}
	if out.NewCookie != 5 || !out.ModifyMayAdd || !out.AddOnlyCookie {
		t.Fatalf("OpenFlow 1.1 modify: %+v", out)
	}
	add := &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, TableID: 0xff, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny}
	if err := d.decode(out, add, 4, st); ofp.CodeOf(err) != ofp.OFPBRC_BAD_TABLE_ID {
		t.Fatalf("OpenFlow 1.3 add to table 0xff: %v", err)
	}
}

// TestFlowModDecoderChecksGroupsUnlessInABundle checks that an add whose
// actions use a missing group is refused, except by decodeNoGroups (a
// bundle checks groups at commit), and that a delete is not checked.
func TestFlowModDecoderChecksGroupsUnlessInABundle(t *testing.T) {
	d, st := newTestDecoder(t)
	out := new(oftable.FlowMod)
	fm := &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny,
		Instructions: wireActions(t, 4, true, ofp.Action{Type: ofp.ActGroup, Arg: 9})}
	if err := d.decode(out, fm, 4, st); ofp.CodeOf(err) != ofp.OFPBAC_BAD_OUT_GROUP {
		t.Fatalf("add with a missing group: %v", err)
	}
	if err := d.decodeNoGroups(out, fm, 4, st); err != nil {
		t.Fatalf("the same in a bundle: %v", err)
	}
	fm.Command = ofp.FlowDelete
	if err := d.decode(out, fm, 4, st); err != nil {
		t.Fatalf("delete: %v", err)
	}
}

// TestBridgeFlowModsWithEqualActionsShareOneActionList decodes flow_mods
// the way a bridge does: equal action lists come out as one shared list,
// a different one as its own.
func TestBridgeFlowModsWithEqualActionsShareOneActionList(t *testing.T) {
	b := newFMBridge(t)
	st := b.conns.Get(newFMSender(4), true)
	decode := func(acts ...ofp.Action) []ofp.Action {
		t.Helper()
		out := new(oftable.FlowMod)
		fm := &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, OutPort: ofp.PortAny, OutGroup: ofp.GroupAny,
			Instructions: wireActions(t, 4, true, acts...)}
		if err := b.fmd.decode(out, fm, 4, st); err != nil {
			t.Fatal(err)
		}
		return out.Actions
	}
	resubmit := ofp.Action{Type: ofp.ActResubmit, Raw: ofp.RawActNXAST_RESUBMIT_TABLE, Port: 0xfff8, Table: 9}
	a, c := decode(resubmit), decode(resubmit)
	if &a[0] != &c[0] {
		t.Fatal("two flow_mods with resubmit(,9) hold two copies of it")
	}
	if d := decode(ofp.Action{Type: ofp.ActResubmit, Raw: ofp.RawActNXAST_RESUBMIT_TABLE, Port: 0xfff8, Table: 8}); &d[0] == &a[0] {
		t.Fatal("resubmit(,8) shares resubmit(,9)'s list")
	}
}
