package mf

import "testing"

func TestPackedMatchRoundTrips(t *testing.T) {
	var m Match
	m.Flow.Regs[3], m.Mask.Regs[3] = 0x1234, 0xffff
	m.Flow.Metadata, m.Mask.Metadata = 0xab, 0xff
	m.Flow.NshSI, m.Mask.NshSI = 7, 0xff
	m.Tun.Opts[5] = TunLoc{Off: 8, Len: 4, Masked: true}
	m.Tun.Used = 12
	p := m.Pack()
	if len(p.words) != 6 {
		t.Fatalf("packed %d words, want 6 (3 present words, value and mask)", len(p.words))
	}
	var got Match
	got.Flow.InPort = 9 // overwritten
	p.Unpack(&got)
	if got != m {
		t.Fatalf("unpacked %+v, want %+v", got, m)
	}
	var empty Match
	pe := empty.Pack()
	pe.Unpack(&got)
	if got != (Match{}) || pe.tun != nil {
		t.Fatalf("empty match unpacked to %+v", got)
	}
}
