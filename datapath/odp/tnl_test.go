package odp

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/tnl"
)

// tnl_push lines as Open vSwitch 3.1 prints them (tests/tunnel-push-pop.at,
// tests/tunnel-push-pop-ipv6.at and dpctl/dump-flows of the oracle runs in
// datapath/tnl).
var ovsTunnelLines = []string{
	`tnl_push(tnl_port(6081),header(size=50,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=0x7b)),out_port(100)),1`,
	`tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x7b)),out_port(100)),1`,
	`set(skb_mark(0x4d2)),tnl_push(tnl_port(6081),header(size=50,type=5,eth(dst=f8:bc:12:44:34:b7,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.93,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=0xea)),out_port(100)),1`,
	`tnl_push(tnl_port(6081),header(size=58,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(crit,vni=0x7b,options({class=0xffff,type=0x80,len=4,0xa}))),out_port(100)),1`,
	`tnl_push(tnl_port(4789),header(size=70,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=17,tclass=0x0,hlimit=64),udp(src=0,dst=4789,csum=0xffff),vxlan(flags=0x8000000,vni=0x7b)),out_port(100)),1`,
	`tnl_push(tnl_port(6081),header(size=78,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=17,tclass=0x0,hlimit=64),udp(src=0,dst=6081,csum=0xffff),geneve(crit,vni=0x7b,options({class=0xffff,type=0x80,len=4,0xa}))),out_port(100)),1`,
	`push_vlan(vid=200,pcp=0),1,clone(tnl_push(tnl_port(4789),header(size=50,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x7b)),out_port(100)),1),tnl_pop(4789)`,
}

func TestTunnelPushTextRoundTripsOpenVSwitchLines(t *testing.T) {
	for _, line := range ovsTunnelLines {
		acts, err := ParseActions(line)
		if err != nil {
			t.Fatalf("ParseActions(%s): %v", line, err)
		}
		if got := acts.String(); got != line {
			t.Errorf("round trip:\n got %s\nwant %s", got, line)
		}
	}
}

func TestTunnelPushConstructorPrintsLikeTheParser(t *testing.T) {
	h, err := tnl.Build(&tnl.Params{
		Type: tnl.TypeGeneve, EthDst: [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6}, EthSrc: [6]byte{0xaa, 0x55, 0xaa, 0x55},
		Src: netip.MustParseAddr("1.1.2.88"), Dst: netip.MustParseAddr("1.1.2.92"), TTL: 64, DontFragment: true, VNI: 0x7b,
	})
	if err != nil {
		t.Fatal(err)
	}
	acts := Actions{TunnelPush(6081, 100, h), Output(1)}
	if got, want := acts.String(), ovsTunnelLines[0]; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	parsed, err := ParseActions(ovsTunnelLines[0])
	if err != nil {
		t.Fatal(err)
	}
	if *parsed[0].TunnelPush != *acts[0].TunnelPush {
		t.Errorf("parsed and built tnl_push differ")
	}
	if got := (Actions{TunnelPop(6081)}).String(); got != "tnl_pop(6081)" {
		t.Errorf("TunnelPop prints %s", got)
	}
}

func TestTunnelPushParseErrorsPointIntoTheHeader(t *testing.T) {
	bad := strings.Replace(ovsTunnelLines[0], "ttl=64", "ttl=999", 1)
	_, err := ParseActions(bad)
	pe, ok := err.(*ParseError)
	if !ok {
		t.Fatalf("err = %v, want *ParseError", err)
	}
	if want := strings.Index(bad, "999"); pe.Offset != want {
		t.Errorf("error offset %d (%s), want %d", pe.Offset, pe, want)
	}
	for _, s := range []string{
		`tnl_push(tnl_port(6081),header(size=50)),1`,
		`tnl_push(tnl_port(6081),` + ovsTunnelLines[0][len("tnl_push(tnl_port(6081),"):strings.Index(ovsTunnelLines[0], ",out_port")] + `)`,
		`tnl_push(6081)`,
	} {
		if _, err := ParseActions(s); err == nil {
			t.Errorf("ParseActions(%s) succeeded", s)
		}
	}
}
