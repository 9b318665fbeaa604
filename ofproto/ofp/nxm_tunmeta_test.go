package ofp_test

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// ovs-ofctl sends tun_metadata0=0 as an NXM entry with no bytes (Open
// vSwitch's field_len: the bytes after leading zeros); it is an exact zero.
func TestZeroLengthTunMetadataIsAnExactZero(t *testing.T) {
	var m mf.Match
	if err := ofp.DecodeNXM([]byte{0x00, 0x01, 0x50, 0x00}, true, &m, nil); err != nil {
		t.Fatalf("decode: %v", err)
	}
	f := mf.Std.ByName("tun_metadata0")
	if m.IsWild(f) || m.Width(f) != 1 {
		t.Fatalf("tun_metadata0 wild %v, width %d; want matched, 1 byte", m.IsWild(f), m.Width(f))
	}
	val, mask := make([]byte, 1), make([]byte, 1)
	m.Get(f, val, mask)
	if val[0] != 0 || mask[0] != 0xff {
		t.Errorf("value %x mask %x, want 00/ff", val, mask)
	}
	// Masked with no bytes: a zero mask.
	var mm mf.Match
	if err := ofp.DecodeNXM([]byte{0x00, 0x01, 0x51, 0x00}, true, &mm, nil); err != nil {
		t.Fatalf("decode masked: %v", err)
	}
	mm.Get(f, val, mask)
	if mm.IsWild(f) || val[0] != 0 || mask[0] != 0 {
		t.Errorf("masked: wild %v, value %x mask %x; want matched, 00/00", mm.IsWild(f), val, mask)
	}
}
