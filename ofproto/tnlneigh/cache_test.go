package tnlneigh

import (
	"context"
	"encoding/hex"
	"net/netip"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/gvs-project/gvs/datapath/flow"
)

type fakeClock struct{ t time.Time }

func (f *fakeClock) now() time.Time          { return f.t }
func (f *fakeClock) advance(d time.Duration) { f.t = f.t.Add(d) }
func newTestCache() (*Cache, *fakeClock) {
	clk := &fakeClock{t: time.Unix(1_000_000, 0)}
	c := New()
	c.Now = clk.now
	return c, clk
}

var (
	ip92  = netip.MustParseAddr("1.1.2.92")
	mac92 = [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xb6}
)

func TestLookupFindsEntryOnlyOnItsBridge(t *testing.T) {
	c, _ := newTestCache()
	c.Set("br0", ip92, mac92)
	if m, ok := c.Lookup("br0", ip92); !ok || m != mac92 {
		t.Fatalf("Lookup(br0) = %x, %v; want %x, true", m, ok, mac92)
	}
	if _, ok := c.Lookup("br1", ip92); ok {
		t.Fatal("Lookup(br1) found an entry set on br0")
	}
	if _, ok := c.Lookup("br0", netip.MustParseAddr("::ffff:1.1.2.92")); !ok {
		t.Fatal("IPv4-mapped lookup missed the IPv4 entry")
	}
}

func TestEntryExpiresAfterIdleTimeAndLookupRefreshes(t *testing.T) {
	c, clk := newTestCache()
	c.Set("br0", ip92, mac92)
	clk.advance(DefaultAging - time.Second)
	if _, ok := c.Lookup("br0", ip92); !ok {
		t.Fatal("entry gone before its idle time")
	}
	// The lookup restarted the timer: another 899 s keep it alive.
	clk.advance(DefaultAging - time.Second)
	if _, ok := c.Lookup("br0", ip92); !ok {
		t.Fatal("lookup did not refresh the entry")
	}
	clk.advance(DefaultAging)
	if _, ok := c.Lookup("br0", ip92); ok {
		t.Fatal("entry alive after its idle time")
	}
	if got := c.Show(); got != showHeader {
		t.Fatalf("Show after expiry = %q", got)
	}
}

const showHeader = "IP                                            MAC                 Bridge\n" +
	"==========================================================================\n"

func TestSetAgingShortensExistingEntries(t *testing.T) {
	c, clk := newTestCache()
	c.Set("br0", ip92, mac92)
	run(t, c, "tnl/neigh/aging", "5")
	clk.advance(4 * time.Second)
	if _, ok := c.Lookup("br0", ip92); !ok {
		t.Fatal("entry expired early")
	}
	clk.advance(5 * time.Second)
	if _, ok := c.Lookup("br0", ip92); ok {
		t.Fatal("entry outlived the new aging time")
	}
	if got := run(t, c, "tnl/neigh/aging"); got != "5\n" {
		t.Fatalf("aging = %q", got)
	}
}

func run(t *testing.T, c *Cache, name string, args ...string) string {
	t.Helper()
	for _, cmd := range c.Commands() {
		if cmd.Name == name {
			out, err := cmd.Run(context.Background(), args)
			if err != nil {
				return "error: " + err.Error()
			}
			return out
		}
	}
	t.Fatalf("no command %s", name)
	return ""
}

func TestShowFormatsLikeOVS(t *testing.T) {
	c, _ := newTestCache()
	c.Set("br0", ip92, mac92)
	c.Set("br0", netip.MustParseAddr("2001:cafe::92"), [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xc8})
	want := showHeader +
		"1.1.2.92                                      f8:bc:12:44:34:b6   br0\n" +
		"2001:cafe::92                                 f8:bc:12:44:34:c8   br0\n"
	if got := run(t, c, "tnl/neigh/show"); got != want {
		t.Fatalf("show:\n%s\nwant:\n%s", got, want)
	}
}

func TestShouldSendRequestRateLimitsPerRetransTime(t *testing.T) {
	c, clk := newTestCache()
	if got := run(t, c, "tnl/neigh/retrans_time"); got != "1000\n" {
		t.Fatalf("default retrans_time = %q", got)
	}
	if got := run(t, c, "tnl/neigh/retrans_time", "250"); got != "OK\n" {
		t.Fatalf("set retrans_time = %q", got)
	}
	if got := run(t, c, "tnl/neigh/retrans_time", "0"); got != "error: bad retrans_time value" {
		t.Fatalf("retrans_time 0 = %q", got)
	}
	steps := []struct {
		after time.Duration
		want  bool
	}{{0, true}, {0, false}, {249 * time.Millisecond, false}, {time.Millisecond, true}, {100 * time.Millisecond, false}, {150 * time.Millisecond, true}}
	for i, s := range steps {
		clk.advance(s.after)
		if got := c.ShouldSendRequest("br0", ip92); got != s.want {
			t.Fatalf("step %d: ShouldSendRequest = %v, want %v", i, got, s.want)
		}
		if !c.Incomplete("br0", ip92) {
			t.Fatalf("step %d: not INCOMPLETE", i)
		}
	}
	if c.ShouldSendRequest("br1", ip92) != true {
		t.Fatal("other bridge rate-limited")
	}
	c.Set("br0", ip92, mac92)
	if c.Incomplete("br0", ip92) || c.ShouldSendRequest("br0", ip92) {
		t.Fatal("learned address still INCOMPLETE or requested")
	}
	if got := c.Show(); got != showHeader+"1.1.2.92                                      f8:bc:12:44:34:b6   br0\n" {
		t.Fatalf("INCOMPLETE entries must not be listed: %q", got)
	}
	clk.advance(DefaultAging + time.Second)
	if !c.ShouldSendRequest("br0", ip92) {
		t.Fatal("expired entry does not trigger a request")
	}
}

func TestSnoopLearnsRepliesGratuitousARPAndAdvertisements(t *testing.T) {
	spa := uint32(0x0101025c) // 1.1.2.92
	tpa := uint32(0x01010258) // 1.1.2.88
	tll := [6]byte{0xf8, 0xbc, 0x12, 0x44, 0x34, 0xc8}
	tgt := netip.MustParseAddr("2001:cafe::92").As16()
	cases := []struct {
		name  string
		f     Fields
		learn bool
		ip    netip.Addr
		mac   [6]byte
	}{
		{"arp reply", Fields{EthType: 0x0806, NwProto: 2, ArpSPA: spa, ArpTPA: tpa, ArpSHA: mac92}, true, ip92, mac92},
		{"arp request", Fields{EthType: 0x0806, NwProto: 1, ArpSPA: spa, ArpTPA: tpa, ArpSHA: mac92}, false, ip92, mac92},
		{"gratuitous arp request", Fields{EthType: 0x0806, NwProto: 1, ArpSPA: spa, ArpTPA: spa, ArpSHA: mac92}, true, ip92, mac92},
		{"arp reply zero sha", Fields{EthType: 0x0806, NwProto: 2, ArpSPA: spa, ArpTPA: tpa}, false, ip92, mac92},
		{"neighbor advertisement", Fields{EthType: 0x86dd, NwProto: 58, ICMPType: 136, NDTarget: tgt, NDTLL: tll}, true, netip.AddrFrom16(tgt), tll},
		{"advertisement without tll", Fields{EthType: 0x86dd, NwProto: 58, ICMPType: 136, NDTarget: tgt}, false, netip.AddrFrom16(tgt), tll},
		{"neighbor solicitation", Fields{EthType: 0x86dd, NwProto: 58, ICMPType: 135, NDTarget: tgt, NDTLL: tll}, false, netip.AddrFrom16(tgt), tll},
		{"advertisement nonzero code", Fields{EthType: 0x86dd, NwProto: 58, ICMPType: 136, ICMPCode: 1, NDTarget: tgt, NDTLL: tll}, false, netip.AddrFrom16(tgt), tll},
		{"udp", Fields{EthType: 0x86dd, NwProto: 17, ICMPType: 136, NDTarget: tgt, NDTLL: tll}, false, netip.AddrFrom16(tgt), tll},
		{"ipv4", Fields{EthType: 0x0800, NwProto: 2, ArpSPA: spa, ArpSHA: mac92}, false, ip92, mac92},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTestCache()
			if got := c.Snoop("br0", &tc.f, false); got != tc.learn {
				t.Fatalf("Snoop(update=false) = %v, want %v", got, tc.learn)
			}
			if _, ok := c.Lookup("br0", tc.ip); ok {
				t.Fatal("Snoop without update changed the cache")
			}
			c.Snoop("br0", &tc.f, true)
			m, ok := c.Lookup("br0", tc.ip)
			if ok != tc.learn || (ok && m != tc.mac) {
				t.Fatalf("after Snoop: Lookup = %x, %v; want learned=%v %x", m, ok, tc.learn, tc.mac)
			}
		})
	}
}

func TestFieldsFromKeyCopiesARPAndNDFields(t *testing.T) {
	k := flow.Key{EthType: 0x0806, NwProto: 2, NwSrc: 0x0101025c, NwDst: 0x01010258, ArpSha: mac92}
	f := FieldsFromKey(&k)
	c, _ := newTestCache()
	if !c.Snoop("br0", &f, true) {
		t.Fatal("not snooped")
	}
	if m, ok := c.Lookup("br0", ip92); !ok || m != mac92 {
		t.Fatalf("Lookup = %x, %v", m, ok)
	}
}

func TestARPRequestIsOVSBytes(t *testing.T) {
	// tests/tunnel-push-pop.at: the request for 1.1.2.92 from br0.
	got := hex.EncodeToString(ARPRequest([6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0},
		netip.MustParseAddr("1.1.2.88"), netip.MustParseAddr("1.1.2.92")))
	want := "ffffffffffffaa55aa55000008060001080006040001aa55aa550000010102580000000000000101025c"
	if got != want {
		t.Fatalf("ARPRequest = %s\nwant        %s", got, want)
	}
}

func TestNeighborSolicitIsOVSBytes(t *testing.T) {
	// tests/tunnel-push-pop-ipv6.at: the solicitation for 2001:cafe::92.
	b := NeighborSolicit([6]byte{0xaa, 0x55, 0xaa, 0x55, 0, 0},
		netip.MustParseAddr("2001:cafe::88"), netip.MustParseAddr("2001:cafe::92"))
	want := "3333ff000092aa55aa55000086dd6000000000203aff2001cafe000000000000000000000088ff0200000000000000000001ff00009287004d48000000002001cafe0000000000000000000000920101aa55aa550000"
	if got := hex.EncodeToString(b); got != want {
		t.Fatalf("NeighborSolicit = %s\nwant              %s", got, want)
	}
	// An independent decoder agrees on the structure and checksum.
	p := gopacket.NewPacket(b, layers.LayerTypeEthernet, gopacket.Default)
	ns, ok := p.Layer(layers.LayerTypeICMPv6NeighborSolicitation).(*layers.ICMPv6NeighborSolicitation)
	if !ok || ns.TargetAddress.String() != "2001:cafe::92" {
		t.Fatalf("gopacket decode: %v", p)
	}
	icmp := p.Layer(layers.LayerTypeICMPv6).(*layers.ICMPv6)
	ip6 := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
	if err := icmp.SetNetworkLayerForChecksum(ip6); err != nil {
		t.Fatal(err)
	}
	if ip6.HopLimit != 255 || ip6.DstIP.String() != "ff02::1:ff00:92" {
		t.Fatalf("IPv6 header: hop limit %d dst %s", ip6.HopLimit, ip6.DstIP)
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	c, _ := newTestCache()
	c.Set("br0", ip92, mac92)
	if n := testing.AllocsPerRun(1000, func() { c.Lookup("br0", ip92) }); n != 0 {
		t.Fatalf("Lookup allocates %v times", n)
	}
}

func BenchmarkLookup(b *testing.B) {
	c := New()
	for i := 0; i < 1000; i++ {
		c.Set("br0", netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), mac92)
	}
	ip := netip.AddrFrom4([4]byte{10, 0, 1, 7})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := c.Lookup("br0", ip); !ok {
			b.Fatal("miss")
		}
	}
}

func BenchmarkLookupParallel(b *testing.B) {
	c := New()
	c.Set("br0", ip92, mac92)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c.Lookup("br0", ip92)
		}
	})
}

func TestConcurrentLookupsDuringUpdatesAreSafe(t *testing.T) {
	c := New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			ip := netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})
			c.Set("br0", ip, mac92)
			c.ShouldSendRequest("br0", ip92)
			if i%100 == 0 {
				c.Flush("")
				c.SetAging(time.Duration(i+1) * time.Second)
			}
		}
	}()
	for i := 0; i < 20000; i++ {
		c.Lookup("br0", netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}))
	}
	<-done
}
