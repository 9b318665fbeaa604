package flow

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenFlows returns the flow part (before ", " which starts the
// statistics or actions) of every line of testdata/odp/NAME, which gen.sh
// records from a real Open vSwitch.
func goldenFlows(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "odp", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flows []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.Index(line, ", "); i >= 0 {
			line = line[:i]
		}
		flows = append(flows, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(flows) == 0 {
		t.Fatalf("%s: no flows", name)
	}
	return flows
}

func TestFormatReproducesOpenVSwitchDumpFlows(t *testing.T) {
	for _, c := range []struct {
		file    string
		verbose bool
	}{{"terse.txt", false}, {"verbose.txt", true}} {
		for _, line := range goldenFlows(t, c.file) {
			m, err := ParseMatch(line)
			if err != nil {
				t.Errorf("%s: ParseMatch(%q): %v", c.file, line, err)
				continue
			}
			if got := m.Format(c.verbose); got != line {
				t.Errorf("%s: format mismatch\n got: %s\nwant: %s", c.file, got, line)
			}
		}
	}
}

func TestRoundTripHandPicked(t *testing.T) {
	cases := []struct {
		in, terse, verbose string // "" means the same as in
	}{
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.0/255.255.255.0,proto=6,tos=0/0xfc,ttl=64,frag=no),tcp(src=1234,dst=80),tcp_flags(0/0)",
			terse: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.0/255.255.255.0,proto=6,tos=0/0xfc,ttl=64,frag=no),tcp(src=1234,dst=80)"},
		{in: "tunnel(tun_id=0x7b,src=1.1.2.92,dst=1.1.2.88,ttl=64,flags(-df-csum+key)),recirc_id(0),in_port(3),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)"},
		{in: "tunnel(tun_id=0x0,ipv6_src=2001:cafe::92,ipv6_dst=2001:cafe::88,tos=0x10/0xfc,ttl=64,tp_src=51283,tp_dst=6081,geneve({class=0xffff,type=0x80,len=4,0xa/0xff}{class=0x102,type=0x1/0,len=0}),flags(-df+csum+key)),recirc_id(0),in_port(2),packet_type(ns=0,id=0),eth_type(0x86dd),ipv6(frag=no)",
			terse: "tunnel(tun_id=0x0,ipv6_src=2001:cafe::92,ipv6_dst=2001:cafe::88,tos=0x10/0xfc,ttl=64,tp_src=51283,tp_dst=6081,geneve({class=0xffff,type=0x80,len=4,0xa/0xff}{class=0x102,len=0}),flags(-df+csum+key)),recirc_id(0),in_port(2),packet_type(ns=0,id=0),eth_type(0x86dd),ipv6(frag=no)"},
		// flags() names none: every flag matched as unset.
		{in: "tunnel(tun_id=0x0,src=2.2.2.2,dst=2.2.2.1,ttl=64,flags()),in_port(1),eth_type(0x0800),ipv4(frag=no)",
			terse: "tunnel(tun_id=0x0,src=2.2.2.2,dst=2.2.2.1,ttl=64,flags(key)),in_port(1),eth(),eth_type(0x0800),ipv4(frag=no)"},
		{in: "tunnel(src=10.0.0.1,dst=10.0.0.2,ttl=64,vxlan(gbp(id=10,flags=0x1)),flags(+df-csum)),recirc_id(0),in_port(4789),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)"},
		{in: "ct_state(-new+est-rel-rpl-inv+trk-snat-dnat),ct_zone(0x5),ct_mark(0x3/0xf),ct_label(0x1000000000000000000000000000005/0xffff0000000000000000000000000fff),recirc_id(0x1),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(frag=no)"},
		{in: "ct_state(+new+trk),ct_tuple6(src=2001:db8::1,dst=::10.0.0.1/::,proto=6,src_port=1,dst_port=2),recirc_id(0x2),dp_hash(0x1/0xf),in_port(1),packet_type(ns=0,id=0),eth_type(0x86dd),ipv6(label=0x12345,frag=first)",
			terse: "ct_state(+new+trk),ct_tuple6(src=2001:db8::1,proto=6,src_port=1,dst_port=2),recirc_id(0x2),dp_hash(0x1/0xf),in_port(1),packet_type(ns=0,id=0),eth_type(0x86dd),ipv6(label=0x12345,frag=first)"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x8100),vlan(vid=10,pcp=3/0x0),encap(eth_type(0x0800),ipv4(frag=no))"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x88a8),vlan(vid=100),encap(eth_type(0x8100),encap(eth_type(0x0800),ipv4(frag=no)))"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8100),vlan(vid=5,cfi=0),encap(eth_type(0x86dd),ipv6(proto=58,frag=no),icmpv6(type=135,code=0),nd(target=fe80::2,sll=50:54:00:00:00:01),nd_ext(nd_reserved=0x20000000,nd_options_type=1))"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x8100),vlan(cfi=0),encap()"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth(),eth_type(0x0806),arp(sip=10.0.0.2,tip=10.0.0.1/255.255.255.0,op=2,sha=50:54:00:00:00:02/ff:ff:ff:00:00:00)",
			terse: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0806),arp(sip=10.0.0.2,tip=10.0.0.1/255.255.255.0,op=2,sha=50:54:00:00:00:02/ff:ff:ff:00:00:00)"},
		{in: "recirc_id(0),in_port(1),eth(),eth_type(0x8847),mpls(label=100/0xfffff,tc=3/0,ttl=64/0x0,bos=1/1)"},
		{in: "skb_priority(0x7),skb_mark(0x1/0xff),recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0/0xffff)"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(proto=6,frag=no),tcp_flags(syn|ack|0x800)",
			terse: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(proto=6,frag=no),tcp_flags(syn|ack|[800])"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(proto=132,frag=no),sctp(dst=5000)"},
		{in: "recirc_id(0),in_port(1),packet_type(ns=0,id=0),eth_type(0x0800),ipv4(proto=17,frag=later)"},
	}
	for _, c := range cases {
		m, err := ParseMatch(c.in)
		if err != nil {
			t.Errorf("ParseMatch(%q): %v", c.in, err)
			continue
		}
		want := c.terse
		if want == "" {
			want = c.in
		}
		if got := m.Format(false); got != want {
			t.Errorf("terse:\n got: %s\nwant: %s", got, want)
		}
		v := m.Format(true)
		if c.verbose != "" && v != c.verbose {
			t.Errorf("verbose:\n got: %s\nwant: %s", v, c.verbose)
		}
		m2, err := ParseMatch(v)
		if err != nil {
			t.Errorf("ParseMatch(verbose %q): %v", v, err)
			continue
		}
		if canonCFIMask(m2) != canonCFIMask(m) {
			t.Errorf("verbose round trip of %s changed the match:\n%s", c.in, v)
		}
	}
}

// canonCFIMask clears the mask's CFI bit of every VLAN whose VID and PCP
// masks are zero: Open vSwitch's text never shows that bit's mask, so the
// verbose form cannot carry it (the terse form does, by printing vlan() or
// leaving it out).
func canonCFIMask(m Match) Match {
	for i := range m.Mask.VLANs {
		if m.Mask.VLANs[i].TCI&^VLANCFI == 0 {
			m.Mask.VLANs[i].TCI = 0
		}
	}
	return m
}

func TestFormatVerboseSpellsOutEveryField(t *testing.T) {
	m, err := ParseMatch("recirc_id(0),in_port(1),eth_type(0x0800),ipv4(dst=10.0.0.0/255.0.0.0),udp(dst=53)")
	if err != nil {
		t.Fatal(err)
	}
	want := "skb_priority(0/0),skb_mark(0/0),ct_state(0/0),ct_zone(0/0),ct_mark(0/0),ct_label(0/0),recirc_id(0),dp_hash(0/0),in_port(1),packet_type(ns=0/0,id=0/0),eth(src=00:00:00:00:00:00/00:00:00:00:00:00,dst=00:00:00:00:00:00/00:00:00:00:00:00),eth_type(0x0800),ipv4(src=0.0.0.0/0.0.0.0,dst=10.0.0.0/255.0.0.0,proto=17/0,tos=0/0,ttl=0/0),udp(src=0/0,dst=53)"
	if got := m.Format(true); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := m.Format(false), "recirc_id(0),in_port(1),eth(),eth_type(0x0800),ipv4(dst=10.0.0.0/255.0.0.0),udp(dst=53)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestParseMatchKeepsUnmaskedKeyBits(t *testing.T) {
	m, err := ParseMatch("eth_type(0x0800),ipv4(src=10.0.0.1/0.0.0.0,dst=10.0.0.2/255.255.255.0)")
	if err != nil {
		t.Fatal(err)
	}
	if m.Key.NwSrc != 0x0a000001 || m.Mask.NwSrc != 0 || m.Key.NwDst != 0x0a000002 || m.Mask.NwDst != 0xffffff00 {
		t.Fatalf("src %#x/%#x dst %#x/%#x", m.Key.NwSrc, m.Mask.NwSrc, m.Key.NwDst, m.Mask.NwDst)
	}
	m.Normalize()
	if m.Key.NwSrc != 0 || m.Key.NwDst != 0x0a000000 {
		t.Fatalf("normalized src %#x dst %#x", m.Key.NwSrc, m.Key.NwDst)
	}
}

func TestParseMatchFields(t *testing.T) {
	m, err := ParseMatch("ct_state(+trk-inv),in_port(7),eth_type(0x8100),vlan(vid=10,pcp=5),encap(eth_type(0x86dd),ipv6(frag=later))")
	if err != nil {
		t.Fatal(err)
	}
	k, mk := m.Key, m.Mask
	if k.CtState != CsTracked || mk.CtState != CsTracked|CsInvalid {
		t.Errorf("ct_state %#x/%#x", k.CtState, mk.CtState)
	}
	if k.InPort != 7 || mk.InPort != 0xffffffff {
		t.Errorf("in_port %d/%#x", k.InPort, mk.InPort)
	}
	if k.VLANs[0] != (VLAN{TPID: 0x8100, TCI: VLANCFI | 5<<13 | 10}) || mk.VLANs[0] != (VLAN{TPID: 0xffff, TCI: 0xffff}) {
		t.Errorf("vlan %+v/%+v", k.VLANs[0], mk.VLANs[0])
	}
	if k.EthType != EthTypeIPv6 || k.NwFrag != FragAny|FragLater || mk.NwFrag != FragMask {
		t.Errorf("eth_type %#x frag %d/%d", k.EthType, k.NwFrag, mk.NwFrag)
	}
}

func TestParseMatchErrorsNameTokenAndOffset(t *testing.T) {
	cases := []struct {
		in, token string
		offset    int
	}{
		{"in_port(1),bogus(2)", "bogus", 11},
		{"in_port(x)", "x", 8},
		{"eth_type(0x0800),ipv4(src=10.0.0.300)", "10.0.0.300", 26},
		{"eth_type(0x0800),ipv4(ttl=256)", "256", 26},
		{"eth_type(0x0800),ipv4(colour=1)", "colour=1", 22},
		{"eth_type(0x0806),tcp(dst=80)", "tcp", 17},
		{"eth_type(0x0800),ipv4(frag=later),tcp(dst=80)", "tcp", 34},
		{"eth_type(0x0800),ipv4(proto=17),tcp(dst=80)", "tcp", 32},
		{"in_port(1),in_port(2)", "in_port", 11},
		{"eth_type(0x0800),ipv4(frag=maybe)", "maybe", 27},
		{"ct_state(+trk+bogus)", "bogus", 14},
		{"eth_type(0x8100),encap(eth_type(0x8100),encap(eth_type(0x8100),encap()))", "encap", 63},
		{"vlan(vid=1),encap()", "vlan", 0},
		{"eth_type(0x0800", "", 15},
		{"in_port(1))", ")", 10},
		{"tunnel(tun_id=1)", "tun_id=1", 7},
		{"eth_type(0x86dd),ipv6(proto=58),icmpv6(type=128,code=0),nd(target=::1)", "nd", 56},
		{"eth_type(0x0200)", "eth_type", 0},
	}
	for _, c := range cases {
		_, err := ParseMatch(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("ParseMatch(%q) = %v, want a *SyntaxError", c.in, err)
			continue
		}
		if se.Offset != c.offset || se.Token != c.token {
			t.Errorf("ParseMatch(%q): offset %d token %q, want %d %q (%v)", c.in, se.Offset, se.Token, c.offset, c.token, err)
		}
	}
}

func TestAppendFormatAllocatesOnlyToGrow(t *testing.T) {
	m, err := ParseMatch(goldenFlows(t, "verbose.txt")[0])
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = m.AppendFormat(buf[:0], true) }); n != 0 {
		t.Errorf("AppendFormat allocates %v times per run into a large enough buffer", n)
	}
}

func BenchmarkFormatVerbose(b *testing.B) {
	m, err := ParseMatch(goldenFlows(b, "verbose.txt")[0])
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = m.AppendFormat(buf[:0], true)
	}
}

func BenchmarkParseMatch(b *testing.B) {
	line := goldenFlows(b, "verbose.txt")[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseMatch(line); err != nil {
			b.Fatal(err)
		}
	}
}
