package oftable

import (
	"runtime"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

func loadResubmit(v byte, table uint8) []ofp.Action {
	return []ofp.Action{
		{Type: ofp.ActSetField, Raw: ofp.RawActNXAST_REG_LOAD, Field: mf.ByName("reg0"), Value: []byte{0, 0, 0, v}},
		{Type: ofp.ActResubmit, Raw: ofp.RawActNXAST_RESUBMIT_TABLE, Port: 0xfff8, Table: table},
	}
}

func TestIdenticalActionListsShareOneCopyUntilTheLastRuleGoes(t *testing.T) {
	var p actionPool
	a := p.intern(loadResubmit(1, 2), 0, nil)
	b := p.intern(loadResubmit(1, 2), 0, nil)
	if &a[0] != &b[0] || cap(b) != len(b) {
		t.Fatalf("equal lists not shared (or the shared copy can be appended into): %p %p cap %d", &a[0], &b[0], cap(b))
	}
	for _, other := range [][]ofp.Action{loadResubmit(2, 2), loadResubmit(1, 3)} {
		if c := p.intern(other, 0, nil); &c[0] == &a[0] {
			t.Fatalf("different list %v shared with %v", other, a)
		}
	}
	// The same encoding from another raw action (set_field, not load)
	// prints differently: not shared.
	sf := loadResubmit(1, 2)
	sf[0].Raw = ofp.RawActOFPAT12_SET_FIELD
	if c := p.intern(sf, 0, nil); &c[0] == &a[0] {
		t.Fatal("set_field shared with load")
	}
	if n := p.size(); n != 4 {
		t.Fatalf("pool has %d lists, want 4", n)
	}
	a, b = nil, nil
	deadline := time.Now().Add(5 * time.Second)
	for p.size() != 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := p.size(); n != 0 {
		t.Fatalf("pool keeps %d lists no rule refers to", n)
	}
}

func TestListsDecodedFromTheSameWireBytesShareOneCopy(t *testing.T) {
	var p actionPool
	wire := []byte{0, 1, 2, 3}
	a := p.intern(loadResubmit(7, 1), 4, wire)
	b := p.intern(loadResubmit(7, 1), 4, wire)
	if &a[0] != &b[0] {
		t.Fatal("two lists from the same wire bytes not shared")
	}
	// The same bytes in another version, or lists that differ although
	// their keys agree, are not shared.
	if c := p.intern(loadResubmit(7, 1), 1, wire); &c[0] == &a[0] {
		t.Fatal("shared across OpenFlow versions")
	}
	if c := p.intern(loadResubmit(8, 1), 4, wire); &c[0] == &a[0] {
		t.Fatal("a different list shared because its wire key matched")
	}
}
