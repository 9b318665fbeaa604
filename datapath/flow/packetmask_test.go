package flow

import "testing"

func TestMarkL3L4MarksOnlyTheFieldsThePacketHas(t *testing.T) {
	var w Key
	MarkL3L4(&w, &Key{EthType: EthTypeIPv4, NwProto: IPProtoTCP})
	if w.NwSrc != ^uint32(0) || w.TpSrc != 0xffff || w.TCPFlags != 0x0fff || w.IPv6Label != 0 || w.ArpSha != [6]byte{} {
		t.Fatalf("IPv4/TCP mask %+v", w)
	}
	w = Key{}
	MarkL3L4(&w, &Key{EthType: EthTypeIPv6, NwProto: IPProtoICMPv6})
	if w.IPv6Label != 0xfffff || w.TpSrc != 0xff || w.TCPFlags != 0 || w.NwSrc != 0 {
		t.Fatalf("IPv6/ICMPv6 mask %+v", w)
	}
	w = Key{}
	MarkL3L4(&w, &Key{EthType: EthTypeARP})
	if w.NwProto != 0xff || w.ArpTha != [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} || w.TpSrc != 0 {
		t.Fatalf("ARP mask %+v", w)
	}
	w = Key{}
	MarkL3L4(&w, &Key{EthType: 0x88cc})
	if w != (Key{}) {
		t.Fatalf("LLDP mask %+v, want none", w)
	}
}
