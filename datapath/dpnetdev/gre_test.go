package dpnetdev

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/vport"
	"github.com/gvs-project/gvs/datapath/tnl"
)

// greSwitch is a test switch with dummy ports 1 and 2 and gre_sys as
// datapath port 3, where Open vSwitch's dummy datapath puts it in the
// oracle of datapath/tnl.
func greSwitch(t *testing.T) *testSwitch {
	t.Helper()
	s := newTestSwitch(t, 2, dpif.DefaultConfig())
	d, err := vport.New("", tnl.TypeGRE, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.dp.AddPort(d, 3); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGREPushMegaflowSendsOpenVSwitchBytes pushes GRE headers with a key,
// a checksum and a sequence number and checks that port 2 sends exactly
// what Open vSwitch sent for them (sequence numbers 0, 1, 2 counted on
// gre_sys).
func TestGREPushMegaflowSendsOpenVSwitchBytes(t *testing.T) {
	golden := ovsPushGolden(t)
	inner := map[string]string{
		"icmp4": "fe71d883724fbeb6f4e1494a080045000054ba200000400184861e0000011e00000200004227e75400030af3195500000000f265010000000000101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f3031323334353637",
		"udp4":  "00000000000200000000000108004500002c00010000401166be0a0000010a00000204d2162e0018000068656c6c6f206776732074756e6e656c",
		"tcp6":  "00000000000200000000000186dd600000000014064020010db800000000000000000000000120010db800000000000000000000000203e8005000000001000000005002ffff00000000",
	}
	for _, c := range []struct{ name, action string }{
		{"gre4-key-seq", `tnl_push(tnl_port(3),header(size=46,type=3,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0x3000,proto=0x6558),key=0x1c8,seq=0x0)),out_port(100)),2`},
		{"gre4-csum-key", `tnl_push(tnl_port(3),header(size=46,type=3,eth(dst=f8:bc:12:44:34:b6,src=f8:bc:12:46:58:e0,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0xa000,proto=0x6558),csum=0x0,key=0x1e241)),out_port(100)),2`},
		{"ip6gre-key", `tnl_push(tnl_port(3),header(size=62,type=109,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=47,tclass=0x0,hlimit=64),gre((flags=0x2000,proto=0x6558),key=0x1c8)),out_port(100)),2`},
	} {
		s := greSwitch(t)
		putFlow(t, s.dp, inPortMatch(1), c.action)
		for _, name := range []string{"icmp4", "udp4", "tcp6"} {
			s.send(1, unhex(t, inner[name]))
			got := s.ports[2].Captured()
			want := golden[[2]string{c.name, name}]
			if len(want) == 0 {
				t.Fatalf("no golden frame for %s/%s", c.name, name)
			}
			if len(got) != 1 || !bytes.Equal(got[0], want) {
				t.Errorf("%s/%s: port 2 sent %x\nwant %x", c.name, name, got, want)
			}
		}
	}
}

// TestGREPopMissUpcallsWithTheKey decapsulates a GRE frame with a
// checksum and key on tnl_pop(3): the upcall key has in_port gre_sys,
// tun_id from the key, the csum and key flags, no UDP ports; a corrupted
// checksum is dropped and counted.
func TestGREPopMissUpcallsWithTheKey(t *testing.T) {
	golden := ovsPushGolden(t)
	s := greSwitch(t)
	h := &recordingHandler{}
	s.dp.SetUpcallHandler(h)
	putFlow(t, s.dp, inPortMatch(1), "tnl_pop(3)")
	frame := golden[[2]string{"gre4-csum-key", "udp4"}]
	bad := append([]byte{}, frame...)
	bad[len(bad)-1] ^= 1
	s.send(1, bad, frame)
	if st := s.dp.TunnelStats(); st.PopErrors != 1 {
		t.Errorf("tunnel stats %+v, want 1 pop error", st)
	}
	if len(h.keys) != 1 {
		t.Fatalf("%d upcalls, want 1", len(h.keys))
	}
	k := h.keys[0]
	exact := flow.Match{Key: k, Mask: flow.All()}
	for _, want := range []string{",tunnel(tun_id=0x1e241,src=1.1.2.88,dst=1.1.2.92,ttl=64,flags(csum|key)),", ",recirc_id(0),dp_hash(0),in_port(3),"} {
		if got := exact.String(); !strings.Contains(got, want) {
			t.Errorf("upcall key:\n got %s\nwant it to contain %s", got, want)
		}
	}
	// Ethernet, IPv4, GRE with checksum and key.
	if got := s.ports[2].Captured(); len(got) != 1 || !bytes.Equal(got[0], frame[14+20+12:]) {
		t.Errorf("port 2 sent %x, want the inner frame", got)
	}
}
