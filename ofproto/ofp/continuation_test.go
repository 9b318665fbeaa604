package ofp

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
)

// A pause before goto_table or write_metadata leaves them in the
// continuation: from OpenFlow 1.1 on they are written in place as their
// instructions (as Open vSwitch's ofpacts_put_openflow_actions writes
// them) and decode back to the same actions.
func TestContinuationCarriesGotoTableAndWriteMetadata(t *testing.T) {
	p := &PacketInPrivate{Groups: []ContinuationGroup{{TableID: 1, Cookie: 0, Actions: []Action{
		{Type: ActOutput, Port: 3, MaxLen: 0},
		{Type: ActWriteMetadata, Arg: 2, Arg2: 2},
		{Type: ActGotoTable, Table: 2},
	}}}}
	b, err := AppendContinuation(nil, p, mf.OF13)
	if err != nil {
		t.Fatal(err)
	}
	goTo := []byte{0, 1, 0, 8, 2, 0, 0, 0}
	meta := []byte{0, 2, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2}
	if !bytes.Contains(b, append(append([]byte(nil), meta...), goTo...)) {
		t.Fatalf("continuation % x lacks the write_metadata and goto_table instructions", b)
	}
	got, err := DecodeContinuation(b, mf.OF13)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Groups) != 1 {
		t.Fatalf("groups = %+v", got.Groups)
	}
	acts := got.Groups[0].Actions
	if len(acts) != 3 || acts[0].Type != ActOutput || acts[0].Port != 3 ||
		!reflect.DeepEqual(acts[1], Action{Type: ActWriteMetadata, Arg: 2, Arg2: 2}) ||
		!reflect.DeepEqual(acts[2], Action{Type: ActGotoTable, Table: 2}) {
		t.Fatalf("decoded actions = %+v", acts)
	}
}
