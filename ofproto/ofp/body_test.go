package ofp

import (
	"testing"
	"unsafe"
)

// TestActionStaysSmall guards the size of a decoded action: rules keep
// their lists, 100,000 rules hold a few hundred thousand actions, and a
// field for one rare kind costs every one of them.
func TestActionStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(Action{}); n > 176 {
		t.Errorf("ofp.Action is %d bytes, want at most 176: put a rare kind's fields in its Body", n)
	}
}

func TestBodyAccessorsReturnOnlyTheirKind(t *testing.T) {
	ct := &CT{Table: 3}
	a := Action{Type: ActCT, Body: ct}
	if a.CT() != ct {
		t.Errorf("CT() = %v, want the body", a.CT())
	}
	if a.NAT() != nil || a.Learn() != nil || a.Controller() != nil || a.IDs() != nil || a.Data() != nil {
		t.Errorf("a ct action's other accessors are not all empty: %+v", a)
	}
	dec := Action{Type: ActDecTTL, Body: []uint16{0}}
	if ids := dec.IDs(); len(ids) != 1 || ids[0] != 0 {
		t.Errorf("dec_ttl IDs() = %v, want [0]", ids)
	}
	if dec.Data() != nil {
		t.Errorf("dec_ttl Data() = %v, want nil (a []uint16 is not the raw bytes)", dec.Data())
	}
	note := Action{Type: ActNote, Body: []byte{1, 2}}
	if d := note.Data(); len(d) != 2 || note.IDs() != nil {
		t.Errorf("note Data() = %v, IDs() = %v", d, note.IDs())
	}
}
