package flow

import (
	"testing"
	"unsafe"
)

func TestKeyLayoutIsWordAlignedAndSegmented(t *testing.T) {
	if unsafe.Sizeof(Key{})%8 != 0 {
		t.Fatalf("Key size %d is not a multiple of 8", unsafe.Sizeof(Key{}))
	}
	offs := []struct {
		name string
		off  uintptr
	}{
		{"TunID", unsafe.Offsetof(Key{}.TunID)},
		{"EthDst", unsafe.Offsetof(Key{}.EthDst)},
		{"NwSrc", unsafe.Offsetof(Key{}.NwSrc)},
		{"TpSrc", unsafe.Offsetof(Key{}.TpSrc)},
	}
	for _, o := range offs {
		if o.off%8 != 0 {
			t.Errorf("segment start %s at byte %d is not word aligned", o.name, o.off)
		}
	}
	if !(0 < SegMetaEnd && SegMetaEnd < SegTunnelEnd && SegTunnelEnd < SegL2End && SegL2End < SegL3End && SegL3End < KeyWords) {
		t.Fatalf("segments out of order: %d %d %d %d %d", SegMetaEnd, SegTunnelEnd, SegL2End, SegL3End, KeyWords)
	}
	t.Logf("Key: %d bytes, %d words; segments meta<%d tunnel<%d l2<%d l3<%d l4<%d", unsafe.Sizeof(Key{}), KeyWords, SegMetaEnd, SegTunnelEnd, SegL2End, SegL3End, KeyWords)
}
