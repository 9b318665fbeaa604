package xlate_test

import (
	"net/netip"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// fakeTunnelEnv routes 1.1.2.0/24 and 2001:cafe::/64 through br0, whose
// addresses are 1.1.2.88 and 2001:cafe::88, with the remote endpoints'
// MACs known, as tunnel-push-pop.at sets them up.
type fakeTunnelEnv struct{}

func (fakeTunnelEnv) Route(dst netip.Addr, _ uint32) (string, netip.Addr, netip.Addr, bool) {
	if dst.Is4() {
		return "br0", netip.Addr{}, netip.MustParseAddr("1.1.2.88"), true
	}
	return "br0", netip.Addr{}, netip.MustParseAddr("2001:cafe::88"), true
}

func (fakeTunnelEnv) Neighbor(string, netip.Addr) ([6]byte, bool) {
	return [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6}, true
}
func (fakeTunnelEnv) NeighborMiss(string, netip.Addr) bool      { return false }
func (fakeTunnelEnv) Learn(string, netip.Addr, [6]byte)         {}
func (fakeTunnelEnv) Request(_ [6]byte, _, _ netip.Addr) []byte { return nil }
func (fakeTunnelEnv) Addrs(dev string) []netip.Prefix {
	if dev != "br0" {
		return nil
	}
	return []netip.Prefix{netip.MustParsePrefix("1.1.2.88/24"), netip.MustParsePrefix("2001:cafe::88/64")}
}

// greBridges sets up br0 (p0 on datapath port 1, LOCAL on 100 with MAC
// aa:55:aa:55:00:00; in_port=1 to LOCAL and back) and int-br with GRE
// ports on gre_sys (datapath port 3) and ip6gre_sys (6) and p1 on 10,
// sharing one recirculation table with the tunnel environment.
func greBridges(t *testing.T, tunnels []*xlate.Port, flows ...string) (br0, intBr *env) {
	t.Helper()
	rt := xlate.NewRecircTable()
	rt.SetTunnelEnv(fakeTunnelEnv{})
	mk := func(name string, ports []*xlate.Port, flows ...string) *env {
		tb, err := oftable.New(oftable.Config{Readers: &rt.Readers})
		if err != nil {
			t.Fatal(err)
		}
		e := &env{tables: tb, recirc: rt}
		e.x = xlate.New(tb, rt)
		e.x.SetSnapshot(xlate.NewSnapshot(name, 7, ports))
		rt.Register(name, e.x)
		e.add(t, mf.OF10, flows...)
		return e
	}
	br0 = mk("br0", []*xlate.Port{
		{OFPort: 1, ODP: 1, Name: "p0", Tag: -1},
		{OFPort: xlate.PortLocal, ODP: 100, Name: "br0", Tag: -1, MAC: [6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0}},
	}, "in_port=LOCAL,actions=1", "in_port=1,actions=LOCAL")
	ports := append([]*xlate.Port{{OFPort: 10, ODP: 10, Name: "p1", Tag: -1}}, tunnels...)
	intBr = mk("int-br", ports, flows...)
	return br0, intBr
}

func TestGREOutputPushesOpenVSwitchHeader(t *testing.T) {
	t1 := &xlate.Port{OFPort: 3, ODP: 3, Name: "t1", Tag: -1, Tunnel: &xlate.TunnelConfig{Type: "gre",
		RemoteIP: netip.MustParseAddr("1.1.2.92"), InKey: 456, OutKey: 456, OutKeyPresent: true, TTL: 64, DontFragment: true}}
	t2 := &xlate.Port{OFPort: 4, ODP: 3, Name: "t2", Tag: -1, Tunnel: &xlate.TunnelConfig{Type: "gre",
		RemoteIP: netip.MustParseAddr("1.1.2.93"), OutKeyFlow: true, InKeyFlow: true, OutKeyPresent: true, TTL: 64,
		DontFragment: true, Csum: true, Seq: true}}
	t4 := &xlate.Port{OFPort: 6, ODP: 6, Name: "t4", Tag: -1, Tunnel: &xlate.TunnelConfig{Type: "ip6gre",
		RemoteIP: netip.MustParseAddr("2001:cafe::92"), TTL: 64, DontFragment: true}}
	const inner = "in_port(10),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	for _, c := range []struct{ flow, want string }{
		// tunnel-push-pop.at's t1.
		{"in_port=10,actions=3", "tnl_push(tnl_port(3),header(size=42,type=3,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0x2000,proto=0x6558),key=0x1c8)),out_port(100)),1"},
		// Checksum, sequence number and the low 32 bits of tun_id.
		{"in_port=10,actions=set_field:0x71234abcd->tun_id,4", "tnl_push(tnl_port(3),header(size=50,type=3,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.93,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0xb000,proto=0x6558),csum=0x0,key=0x1234abcd,seq=0x0)),out_port(100)),1"},
		// tunnel-push-pop-ipv6.at's keyless ip6gre.
		{"in_port=10,actions=6", "tnl_push(tnl_port(6),header(size=58,type=109,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=47,tclass=0x0,hlimit=64),gre((flags=0x0,proto=0x6558))),out_port(100)),1"},
	} {
		_, intBr := greBridges(t, []*xlate.Port{t1, t2, t4}, c.flow)
		if got := intBr.translate(key(t, inner)).Actions.String(); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.flow, got, c.want)
		}
	}
}

func TestGREToLocalAddressIsPoppedAndReceivedByKey(t *testing.T) {
	t1 := &xlate.Port{OFPort: 3, ODP: 3, Name: "t1", Tag: -1, Tunnel: &xlate.TunnelConfig{Type: "gre",
		RemoteIP: netip.MustParseAddr("1.1.2.92"), InKey: 456, OutKey: 456, OutKeyPresent: true, TTL: 64}}
	t3 := &xlate.Port{OFPort: 5, ODP: 3, Name: "t3", Tag: -1, Tunnel: &xlate.TunnelConfig{Type: "gre",
		RemoteIP: netip.MustParseAddr("1.1.2.92"), TTL: 64}}
	t4 := &xlate.Port{OFPort: 6, ODP: 6, Name: "t4", Tag: -1, Tunnel: &xlate.TunnelConfig{Type: "ip6gre",
		RemoteIP: netip.MustParseAddr("2001:cafe::92"), TTL: 64}}
	br0, intBr := greBridges(t, []*xlate.Port{t1, t3, t4}, "in_port=3,actions=10", "in_port=5,actions=drop", "in_port=6,actions=10")
	const outer = "in_port(1),eth(src=f8:bc:12:44:34:b6,dst=aa:55:aa:55:00:00),eth_type(0x0800),ipv4(src=1.1.2.92,dst=1.1.2.88,proto=47,tos=0,ttl=64,frag=no)"
	// gre_sys pops GRE of both families (Open vSwitch's tunnel port
	// map holds the GRE vport added first for every local address), and
	// the megaflow matches no UDP port.
	for _, c := range []struct{ pkt, actions, megaflow string }{
		{outer, "tnl_pop(3)", "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(dst=aa:55:aa:55:00:00),eth_type(0x0800),ipv4(dst=1.1.2.88,proto=47,frag=no)"},
		{"in_port(1),eth(src=f8:bc:12:44:34:b6,dst=aa:55:aa:55:00:00),eth_type(0x86dd),ipv6(src=2001:cafe::92,dst=2001:cafe::88,label=0,proto=47,tclass=0,hlimit=64,frag=no)",
			"tnl_pop(3)", "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(dst=aa:55:aa:55:00:00),eth_type(0x86dd),ipv6(dst=2001:cafe::88,proto=47,frag=no)"},
		// Not for us: plain forwarding to LOCAL.
		{"in_port(1),eth(src=f8:bc:12:44:34:b6,dst=aa:55:aa:55:00:00),eth_type(0x0800),ipv4(src=1.1.2.92,dst=1.1.2.89,proto=47,tos=0,ttl=64,frag=no)", "100", ""},
	} {
		out := br0.translate(key(t, c.pkt))
		if got := out.Actions.String(); got != c.actions {
			t.Errorf("%s: actions %s, want %s", c.pkt, got, c.actions)
		}
		if c.megaflow != "" {
			if got := megaflow(key(t, c.pkt), out.Mask); got != c.megaflow {
				t.Errorf("%s: megaflow\n got %s\nwant %s", c.pkt, got, c.megaflow)
			}
		}
	}
	const innerODP = ",in_port(3),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)"
	for _, c := range []struct{ tunnel, actions string }{
		{"tunnel(tun_id=0x1c8,src=1.1.2.92,dst=1.1.2.88,ttl=64,flags(-df-csum+key))", "10"},   // t1 by its key
		{"tunnel(src=1.1.2.92,dst=1.1.2.88,ttl=64,flags(-df-csum))", "drop"},                  // t3: no key
		{"tunnel(tun_id=0x1c9,src=1.1.2.92,dst=1.1.2.88,ttl=64,flags(-df-csum+key))", "drop"}, // no port has key 0x1c9
	} {
		if got := intBr.translate(key(t, c.tunnel+innerODP)).Actions.String(); got != c.actions {
			t.Errorf("%s: actions %s, want %s", c.tunnel, got, c.actions)
		}
	}
	k1 := key(t, "tunnel(tun_id=0x1c8,src=1.1.2.92,dst=1.1.2.88,ttl=64)"+innerODP)
	if p := intBr.x.Snapshot().TunnelReceive(&k1); p == nil || p.Name != "t1" {
		t.Errorf("TunnelReceive picked %v, want t1", p)
	}
}
