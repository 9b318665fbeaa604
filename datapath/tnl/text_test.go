package tnl

import (
	"net/netip"
	"strings"
	"testing"
)

// Header texts as Open vSwitch 3.1 prints them (tests/tunnel-push-pop.at,
// tests/tunnel-push-pop-ipv6.at, and the oracle runs in testdata).
var ovsHeaderTexts = []string{
	`header(size=50,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=0x7b))`,
	`header(size=50,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0x8000000,vni=0x7b))`,
	`header(size=50,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0x0),vxlan(flags=0xc000003,vni=0x159))`,
	`header(size=50,type=4,eth(dst=f8:bc:12:44:34:b7,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.93,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=4789,csum=0xffff),vxlan(flags=0x8000000,vni=0x7c))`,
	`header(size=58,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(crit,vni=0x7b,options({class=0xffff,type=0x80,len=4,0xa})))`,
	`header(size=70,type=4,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=17,tclass=0x0,hlimit=64),udp(src=0,dst=4789,csum=0xffff),vxlan(flags=0x8000000,vni=0x7b))`,
	`header(size=70,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=17,tclass=0x0,hlimit=64),udp(src=0,dst=6081,csum=0xffff),geneve(vni=0x7b))`,
	`header(size=78,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=17,tclass=0x0,hlimit=64),udp(src=0,dst=6081,csum=0xffff),geneve(crit,vni=0x7b,options({class=0xffff,type=0x80,len=4,0xa})))`,
	`header(size=74,type=5,eth(dst=00:00:00:00:00:01,src=00:00:00:00:00:02,dl_type=0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0x10,ttl=255,frag=0x0),udp(src=0,dst=6081,csum=0xffff),geneve(oam,crit,vni=0xffffff,options({class=0x102,type=0x80,len=8,0x1020304050607}{class=0xffff,type=0,len=4,0}{class=0x1,type=0x1,len=0})))`,
	`header(size=70,type=5,eth(dst=00:00:00:00:00:01,src=00:00:00:00:00:02,dl_type=0x86dd),ipv6(src=::1.2.3.4,dst=fe80::1,label=12345,proto=17,tclass=0xb8,hlimit=1),udp(src=0,dst=6081,csum=0x0),geneve(vni=0x0))`,
	// GRE and ip6gre (10-16): tunnel-push-pop.at, tunnel-push-pop-ipv6.at,
	// system-layer3-tunnels.at and odp.at.
	`header(size=42,type=3,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0x2000,proto=0x6558),key=0x1c8))`,
	`header(size=46,type=3,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0x3000,proto=0x6558),key=0x1c8,seq=0x0))`,
	`header(size=38,type=3,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:03,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0x0,proto=0x6558)))`,
	`header(size=46,type=3,eth(dst=f8:bc:12:44:34:b6,src=f8:bc:12:46:58:e0,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=47,tos=0,ttl=64,frag=0x4000),gre((flags=0xa000,proto=0x6558),csum=0x0,key=0x1e241))`,
	`header(size=58,type=109,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=47,tclass=0x0,hlimit=64),gre((flags=0x0,proto=0x6558)))`,
	`header(size=62,type=109,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=47,tclass=0x0,hlimit=64),gre((flags=0x2000,proto=0x6558),key=0x1c8))`,
	`header(size=66,type=109,eth(dst=f8:bc:12:44:34:b6,src=f8:bc:12:46:58:e0,dl_type=0x86dd),ipv6(src=2001:cafe::88,dst=2001:cafe::92,label=0,proto=47,tclass=0x0,hlimit=64),gre((flags=0xa000,proto=0x6558),csum=0x0,key=0x1e241))`,
}

func TestHeaderTextRoundTripsOpenVSwitchExamples(t *testing.T) {
	for _, text := range ovsHeaderTexts {
		h, n, err := ParseHeader(text + ",out_port(100))")
		if err != nil {
			t.Fatalf("ParseHeader(%s): %v", text, err)
		}
		if n != len(text) {
			t.Errorf("ParseHeader(%s) consumed %d bytes, want %d", text, n, len(text))
		}
		if got := string(AppendHeaderText(nil, &h)); got != text {
			t.Errorf("round trip:\n got %s\nwant %s", got, text)
		}
	}
}

func TestParseHeaderAcceptsCNumbers(t *testing.T) {
	// %i fields take decimal, hex and octal, as sscanf does.
	a, _, err := ParseHeader(`header(size=0x32,type=05,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=0x11,tos=0,ttl=0100,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=123))`)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := ParseHeader(ovsHeaderTexts[0])
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("headers differ:\n%s\n%s", AppendHeaderText(nil, &a), AppendHeaderText(nil, &b))
	}
}

func TestParseHeaderRefusesInconsistentText(t *testing.T) {
	base := ovsHeaderTexts[0]
	for _, c := range []struct{ name, from, to string }{
		{"size mismatch", "size=50", "size=54"},
		{"type mismatch", "type=5", "type=4"},
		{"gre with geneve's size and type", "udp(src=0,dst=6081,csum=0x0),geneve(vni=0x7b)", "gre((flags=0x0,proto=0x6558))"},
		{"bad mac", "f8:bc:12:44:34:b6", "f8:bc:12:44:34"},
		{"ipv6 address in ipv4", "src=1.1.2.88", "src=::1"},
		{"ttl out of range", "ttl=64", "ttl=256"},
		{"truncated", "geneve(vni=0x7b))", "geneve(vni=0x7b"},
		{"bad option length", "geneve(vni=0x7b)", "geneve(vni=0x7b,options({class=0x1,type=0x1,len=3,0x1}))"},
	} {
		s := strings.Replace(base, c.from, c.to, 1)
		if s == base {
			t.Fatalf("%s: replacement did not apply", c.name)
		}
		if _, _, err := ParseHeader(s); err == nil {
			t.Errorf("%s: ParseHeader(%s) succeeded", c.name, s)
		}
	}
}

func TestBuildMakesOpenVSwitchTemplates(t *testing.T) {
	mac := func(s string) [6]byte {
		var m [6]byte
		for i := range m {
			var v byte
			for _, c := range s[3*i : 3*i+2] {
				v = v<<4 | byte(strings.IndexRune("0123456789abcdef", c))
			}
			m[i] = v
		}
		return m
	}
	dst, src := mac("f8:bc:12:44:34:b6"), mac("aa:55:aa:55:00:00")
	v4s, v4d := netip.MustParseAddr("1.1.2.88"), netip.MustParseAddr("1.1.2.92")
	v6s, v6d := netip.MustParseAddr("2001:cafe::88"), netip.MustParseAddr("2001:cafe::92")
	for i, c := range []struct {
		p    Params
		want string
	}{
		{Params{Type: TypeGeneve, EthDst: dst, EthSrc: src, Src: v4s, Dst: v4d, TTL: 64, DontFragment: true, VNI: 0x7b}, ovsHeaderTexts[0]},
		{Params{Type: TypeVXLAN, EthDst: dst, EthSrc: src, Src: v4s, Dst: v4d, TTL: 64, DontFragment: true, VNI: 0x7b}, ovsHeaderTexts[1]},
		{Params{Type: TypeVXLAN, EthDst: mac("f8:bc:12:44:34:b7"), EthSrc: src, Src: v4s, Dst: netip.MustParseAddr("1.1.2.93"), TTL: 64, DontFragment: true, Csum: true, VNI: 0x7c}, ovsHeaderTexts[3]},
		{Params{Type: TypeGeneve, EthDst: dst, EthSrc: src, Src: v4s, Dst: v4d, TTL: 64, DontFragment: true, VNI: 0x7b, GeneveOpts: []byte{0xff, 0xff, 0x80, 1, 0, 0, 0, 0xa}}, ovsHeaderTexts[4]},
		{Params{Type: TypeVXLAN, EthDst: dst, EthSrc: src, Src: v6s, Dst: v6d, TTL: 64, VNI: 0x7b}, ovsHeaderTexts[5]},
		{Params{Type: TypeGeneve, EthDst: dst, EthSrc: src, Src: v6s, Dst: v6d, TTL: 64, VNI: 0x7b}, ovsHeaderTexts[6]},
		{Params{Type: TypeGeneve, EthDst: dst, EthSrc: src, Src: v6s, Dst: v6d, TTL: 64, VNI: 0x7b, GeneveOpts: []byte{0xff, 0xff, 0x80, 1, 0, 0, 0, 0xa}}, ovsHeaderTexts[7]},
		{Params{Type: TypeGRE, EthDst: dst, EthSrc: src, Src: v4s, Dst: v4d, TTL: 64, DontFragment: true, GREKey: 0x1c8, GREKeyPresent: true}, ovsHeaderTexts[10]},
		{Params{Type: TypeGRE, EthDst: dst, EthSrc: src, Src: v4s, Dst: v4d, TTL: 64, DontFragment: true, GREKey: 0x1c8, GREKeyPresent: true, GRESeq: true}, ovsHeaderTexts[11]},
		{Params{Type: TypeGRE, EthDst: dst, EthSrc: mac("aa:55:aa:55:00:03"), Src: v4s, Dst: v4d, TTL: 64, DontFragment: true}, ovsHeaderTexts[12]},
		{Params{Type: TypeGRE, EthDst: dst, EthSrc: mac("f8:bc:12:46:58:e0"), Src: v4s, Dst: v4d, TTL: 64, DontFragment: true, Csum: true, GREKey: 0x1e241, GREKeyPresent: true}, ovsHeaderTexts[13]},
		// An ip6gre port and a gre port with an IPv6 remote both build
		// type 109, as Open vSwitch.
		{Params{Type: TypeIP6GRE, EthDst: dst, EthSrc: src, Src: v6s, Dst: v6d, TTL: 64}, ovsHeaderTexts[14]},
		{Params{Type: TypeGRE, EthDst: dst, EthSrc: src, Src: v6s, Dst: v6d, TTL: 64, DontFragment: true, GREKey: 0x1c8, GREKeyPresent: true}, ovsHeaderTexts[15]},
		{Params{Type: TypeIP6GRE, EthDst: dst, EthSrc: mac("f8:bc:12:46:58:e0"), Src: v6s, Dst: v6d, TTL: 64, Csum: true, GREKey: 0x1e241, GREKeyPresent: true}, ovsHeaderTexts[16]},
	} {
		h, err := Build(&c.p)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := string(AppendHeaderText(nil, &h)); got != c.want {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, c.want)
		}
		parsed, _, err := ParseHeader(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if parsed != h {
			t.Errorf("case %d: Build and ParseHeader give different bytes:\n% x\n% x", i, h.Bytes(), parsed.Bytes())
		}
	}
}

func TestBuildRefusesBadParams(t *testing.T) {
	v4, v6 := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("2001:db8::1")
	for name, p := range map[string]Params{
		"mixed families": {Type: TypeGeneve, Src: v4, Dst: v6},
		"no addresses":   {Type: TypeGeneve},
		"vni 25 bits":    {Type: TypeVXLAN, Src: v4, Dst: v4, VNI: 1 << 24},
		"lisp":           {Type: 105, Src: v4, Dst: v4},
		"odd options":    {Type: TypeGeneve, Src: v4, Dst: v4, GeneveOpts: []byte{1, 2, 3}},
		"option overrun": {Type: TypeGeneve, Src: v4, Dst: v4, GeneveOpts: []byte{0, 1, 2, 2, 0, 0, 0, 0}},
	} {
		if _, err := Build(&p); err == nil {
			t.Errorf("%s: Build succeeded", name)
		}
	}
}

func TestParseHeaderRefusesInconsistentGREText(t *testing.T) {
	base := ovsHeaderTexts[13] // csum and key
	for _, c := range []struct{ name, from, to string }{
		{"ip6gre type over IPv4", "type=3", "type=109"},
		{"size without the key", "size=46", "size=42"},
		{"csum flag without csum=", "csum=0x0,", ""},
		{"key flag without key=", ",key=0x1e241", ""},
		{"seq flag without seq=", "flags=0xa000", "flags=0xb000"},
		{"key above 32 bits", "key=0x1e241", "key=0x100000000"},
		{"decimal flags", "flags=0xa000", "flags=40960"},
		{"unclosed", "key=0x1e241))", "key=0x1e241)"},
	} {
		s := strings.Replace(base, c.from, c.to, 1)
		if s == base {
			t.Fatalf("%s: replacement did not apply", c.name)
		}
		if _, _, err := ParseHeader(s); err == nil {
			t.Errorf("%s: ParseHeader(%s) succeeded", c.name, s)
		}
	}
}

func TestHeaderTextOfGREWithEverySection(t *testing.T) {
	// Open vSwitch prints csum=, key= and seq= in header order, each for
	// its flag; Build leaves the checksum and sequence number 0.
	const want = `header(size=50,type=3,eth(dst=00:00:00:00:00:01,src=00:00:00:00:00:02,dl_type=0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=47,tos=0x20,ttl=9,frag=0x0),gre((flags=0xb000,proto=0x6558),csum=0x0,key=0xffffffff,seq=0x0))`
	h, err := Build(&Params{Type: TypeGRE, EthDst: [6]byte{5: 1}, EthSrc: [6]byte{5: 2}, Src: netip.MustParseAddr("10.0.0.1"),
		Dst: netip.MustParseAddr("10.0.0.2"), Tos: 0x20, TTL: 9, Csum: true, GREKey: 0xffffffff, GREKeyPresent: true, GRESeq: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(AppendHeaderText(nil, &h)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !h.HasSeq() {
		t.Error("HasSeq() = false for a header with the S flag")
	}
	parsed, _, err := ParseHeader(want)
	if err != nil || parsed != h {
		t.Errorf("ParseHeader: %v\n% x\n% x", err, parsed.Bytes(), h.Bytes())
	}
}
