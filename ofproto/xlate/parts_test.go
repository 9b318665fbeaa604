package xlate

import (
	"bytes"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// TestTracerRecordsAtTheColumnOnlyWhenTracing: notes, skips and errors
// go to In.Trace one column right of the action list's, formatted; with
// no trace function nothing happens.
func TestTracerRecordsAtTheColumnOnlyWhenTracing(t *testing.T) {
	var got []TraceEvent
	tr := tracer{fn: func(ev *TraceEvent) { got = append(got, *ev) }, ind: 8}
	tr.notef("group %d does not exist", 7)
	tr.skipf("skipping output to input port")
	tr.errorf("over max translation depth %d", MaxDepth)
	want := []TraceEvent{
		{Kind: TraceNote, Indent: 9, Text: "group 7 does not exist"},
		{Kind: TraceSkip, Indent: 9, Text: "skipping output to input port"},
		{Kind: TraceError, Indent: 9, Text: "over max translation depth 64"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].Indent != want[i].Indent || got[i].Text != want[i].Text {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	off := tracer{ind: 4}
	off.notef("nobody listens") // must not panic
}

// TestActionSetWriteTracksActsetOutputUntilAGroup: write keeps
// actset_output at the last output's port until a group is written;
// clear empties the set and unsets it; encode and restore carry the set
// and its group flag across a freeze.
func TestActionSetWriteTracksActsetOutputUntilAGroup(t *testing.T) {
	c := &ctx{in: &In{}}
	c.aset.c = c
	c.aset.write([]ofp.Action{{Type: ofp.ActOutput, Port: 3}})
	if c.flow.ActsetOutput != 3 {
		t.Fatalf("actset_output = %d after output:3, want 3", c.flow.ActsetOutput)
	}
	c.aset.write([]ofp.Action{{Type: ofp.ActGroup, Arg: 1}, {Type: ofp.ActOutput, Port: 4}})
	if c.flow.ActsetOutput != PortUnset || !c.aset.hasGroup {
		t.Fatalf("after a group: actset_output = %#x, hasGroup %v; want unset, true", c.flow.ActsetOutput, c.aset.hasGroup)
	}
	enc, err := c.aset.encode()
	if err != nil || enc == "" {
		t.Fatalf("encode = %q, %v", enc, err)
	}
	c.aset.clear()
	if len(c.aset.acts) != 0 || c.aset.hasGroup || c.flow.ActsetOutput != PortUnset {
		t.Fatalf("after clear: %v, hasGroup %v, actset_output %#x", c.aset.acts, c.aset.hasGroup, c.flow.ActsetOutput)
	}
	if err := c.aset.restore(enc); err != nil || len(c.aset.acts) != 3 || !c.aset.hasGroup {
		t.Fatalf("restore: %v, %d actions, hasGroup %v; want 3 actions with a group", err, len(c.aset.acts), c.aset.hasGroup)
	}
}

// TestSnapshotFieldHelpersWriteUnderMask: setMasked changes only the
// masked bits; orField un-wildcards bits without clearing others.
func TestSnapshotFieldHelpersWriteUnderMask(t *testing.T) {
	s := NewSnapshot("br0", 0, nil)
	f := mf.ByName("reg0")
	var fl, wc mf.Flow
	s.setBytes(f, &fl, []byte{0x11, 0x22, 0x33, 0x44})
	s.setMasked(f, &fl, []byte{0xaa, 0xbb, 0xcc, 0xdd}, []byte{0xff, 0x00, 0x0f, 0x00})
	if got := s.fieldBytes(f, &fl); !bytes.Equal(got, []byte{0xaa, 0x22, 0x3c, 0x44}) {
		t.Fatalf("reg0 = % x, want aa 22 3c 44", got)
	}
	s.orField(f, &wc, []byte{0xf0, 0, 0, 0})
	s.orField(f, &wc, []byte{0, 0, 0, 0x01})
	if got := s.fieldBytes(f, &wc); !bytes.Equal(got, []byte{0xf0, 0, 0, 0x01}) {
		t.Fatalf("reg0 mask = % x, want f0 00 00 01", got)
	}
}
