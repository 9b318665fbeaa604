package conntrack

import (
	"bytes"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

const (
	cA, cB = "10.0.0.1", "10.0.0.2"
)

func TestTCPHandshakeTeardownStates(t *testing.T) {
	tr, _ := newTracker(t)
	ct := "ct(commit,zone=5)"
	p := run(t, tr, ct, tcp4(t, cA, cB, 1234, 80, fSYN, 100, 0, nil))
	wantState(t, p, "+trk+new")
	z := uint16(5)
	if got, want := FormatDump(tr.Dump(&z), false), "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=1234,dport=80),reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,dport=1234),zone=5,protoinfo=(state=SYN_SENT)\n"; got != want {
		t.Fatalf("dump after SYN:\n%s\nwant\n%s", got, want)
	}
	p = run(t, tr, "ct(zone=5)", tcp4(t, cB, cA, 80, 1234, fSYN|fACK, 500, 101, nil))
	wantState(t, p, "+trk+est+rpl")
	p = run(t, tr, "ct(zone=5)", tcp4(t, cA, cB, 1234, 80, fACK, 101, 501, nil))
	wantState(t, p, "+trk+est")
	p = run(t, tr, "ct(zone=5)", tcp4(t, cA, cB, 1234, 80, fACK, 101, 501, []byte("GET /")))
	wantState(t, p, "+trk+est")
	if got, want := FormatDump(tr.Dump(nil), false), "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=1234,dport=80),reply=(src=10.0.0.2,dst=10.0.0.1,sport=80,dport=1234),zone=5,protoinfo=(state=ESTABLISHED)\n"; got != want {
		t.Fatalf("dump established:\n%s", got)
	}
	// Metadata carries the original tuple, also on replies.
	p = run(t, tr, "ct(zone=5)", tcp4(t, cB, cA, 80, 1234, fACK, 501, 106, nil))
	wantState(t, p, "+trk+est+rpl")
	if p.Md.CtZone != 5 || p.Md.CtNwSrc != 0x0a000001 || p.Md.CtNwDst != 0x0a000002 || p.Md.CtTpSrc != 1234 || p.Md.CtTpDst != 80 || p.Md.CtNwProto != 6 {
		t.Fatalf("ct metadata = %+v", p.Md)
	}
	// Teardown: FIN, ACK, FIN, ACK.
	wantState(t, run(t, tr, "ct(zone=5)", tcp4(t, cA, cB, 1234, 80, fFIN|fACK, 106, 501, nil)), "+trk+est")
	wantState(t, run(t, tr, "ct(zone=5)", tcp4(t, cB, cA, 80, 1234, fACK, 501, 107, nil)), "+trk+est+rpl")
	wantState(t, run(t, tr, "ct(zone=5)", tcp4(t, cB, cA, 80, 1234, fFIN|fACK, 501, 107, nil)), "+trk+est+rpl")
	wantState(t, run(t, tr, "ct(zone=5)", tcp4(t, cA, cB, 1234, 80, fACK, 107, 502, nil)), "+trk+est")
	if got := tr.Dump(nil); len(got) != 1 || got[0].TCPState != "TIME_WAIT" || got[0].Timeout != 30 {
		t.Fatalf("after teardown: %+v", got)
	}
	// A new SYN on the closed connection starts a new one.
	p = run(t, tr, "ct(commit,zone=5)", tcp4(t, cA, cB, 1234, 80, fSYN, 9000, 0, nil))
	wantState(t, p, "+trk+new")
	if got := tr.Dump(nil); len(got) != 1 || got[0].TCPState != "SYN_SENT" {
		t.Fatalf("after restart: %+v", got)
	}
}

func establishTCP(t *testing.T, tr *Tracker, ct string) {
	t.Helper()
	run(t, tr, ct, tcp4(t, cA, cB, 1234, 80, fSYN, 100, 0, nil))
	run(t, tr, ct, tcp4(t, cB, cA, 80, 1234, fSYN|fACK, 500, 101, nil))
	wantState(t, run(t, tr, ct, tcp4(t, cA, cB, 1234, 80, fACK, 101, 501, nil)), "+trk+est")
}

func TestTCPWindowViolationIsInvalidUnlessLiberal(t *testing.T) {
	tr, _ := newTracker(t)
	establishTCP(t, tr, "ct(commit)")
	far := tcp4(t, cA, cB, 1234, 80, fACK, 101+1<<30, 501, []byte("x"))
	wantState(t, run(t, tr, "ct", far), "+trk+inv")
	if tr.Stats().Invalid != 1 {
		t.Fatalf("invalid counter = %d", tr.Stats().Invalid)
	}
	tr.SetTCPLiberal(true)
	wantState(t, run(t, tr, "ct", far), "+trk+est")
}

func TestTCPInvalidNew(t *testing.T) {
	tr, _ := newTracker(t)
	for name, f := range map[string]int{"syn-ack": fSYN | fACK, "syn-rst": fSYN | fRST, "fin-only": fFIN} {
		p := run(t, tr, "ct(commit)", tcp4(t, cA, cB, 1, 2, f, 1, 1, nil))
		if stateString(p.Md.CtState) != "+trk+inv" {
			t.Errorf("%s: ct_state %s, want +trk+inv", name, stateString(p.Md.CtState))
		}
	}
	if tr.Count() != 0 {
		t.Fatalf("count = %d", tr.Count())
	}
}

func TestUncommittedNewLeavesNoEntry(t *testing.T) {
	tr, _ := newTracker(t)
	p := run(t, tr, "ct(zone=3)", udp4(t, cA, cB, 5000, 53))
	wantState(t, p, "+trk+new")
	if tr.Count() != 0 || p.Md.CtZone != 3 || p.Md.CtTpDst != 53 || p.Md.CtNwProto != 17 {
		t.Fatalf("count %d md %+v", tr.Count(), p.Md)
	}
}

func TestUDPStates(t *testing.T) {
	tr, _ := newTracker(t)
	wantState(t, run(t, tr, "ct(commit)", udp4(t, cA, cB, 5000, 53)), "+trk+new")
	wantState(t, run(t, tr, "ct", udp4(t, cA, cB, 5000, 53)), "+trk+new")
	wantState(t, run(t, tr, "ct", udp4(t, cB, cA, 53, 5000)), "+trk+est+rpl")
	wantState(t, run(t, tr, "ct", udp4(t, cA, cB, 5000, 53)), "+trk+est")
	if got, want := FormatDump(tr.Dump(nil), false), "udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=5000,dport=53),reply=(src=10.0.0.2,dst=10.0.0.1,sport=53,dport=5000)\n"; got != want {
		t.Fatalf("dump %q", got)
	}
}

func TestICMPEchoAndRelatedErrors(t *testing.T) {
	tr, _ := newTracker(t)
	wantState(t, run(t, tr, "ct(commit)", icmp4Echo(t, cA, cB, 8, 7)), "+trk+new")
	wantState(t, run(t, tr, "ct", icmp4Echo(t, cB, cA, 0, 7)), "+trk+est+rpl")
	if got, want := FormatDump(tr.Dump(nil), false), "icmp,orig=(src=10.0.0.1,dst=10.0.0.2,id=7,type=8,code=0),reply=(src=10.0.0.2,dst=10.0.0.1,id=7,type=0,code=0)\n"; got != want {
		t.Fatalf("dump %q", got)
	}
	// An echo reply without a request is invalid.
	wantState(t, run(t, tr, "ct(commit)", icmp4Echo(t, cB, cA, 0, 99)), "+trk+inv")

	udp := udp4(t, cA, cB, 5000, 53)
	run(t, tr, "ct(commit)", udp)
	p := run(t, tr, "ct", icmp4Error(t, "10.9.9.9", cA, udp))
	wantState(t, p, "+trk+rel+rpl")
	if p.Md.CtTpDst != 53 || p.Md.CtNwProto != 17 {
		t.Fatalf("related md = %+v", p.Md)
	}
	other := udp4(t, cA, cB, 5001, 53)
	wantState(t, run(t, tr, "ct", icmp4Error(t, "10.9.9.9", cA, other)), "+trk+inv")
}

func TestIPv6TCPAndICMPv6(t *testing.T) {
	tr, _ := newTracker(t)
	wantState(t, run(t, tr, "ct(commit,zone=2)", tcp6(t, "fd00::1", "fd00::2", 40000, 22, fSYN, 1, 0)), "+trk+new")
	p := run(t, tr, "ct(zone=2)", tcp6(t, "fd00::2", "fd00::1", 22, 40000, fSYN|fACK, 77, 2))
	wantState(t, p, "+trk+est+rpl")
	if p.Md.CtIPv6Src != [16]byte(net.ParseIP("fd00::1")) || p.Md.CtNwSrc != 0 {
		t.Fatalf("ipv6 md = %+v", p.Md)
	}
	wantState(t, run(t, tr, "ct(commit,zone=2)", icmp6Echo(t, "fd00::1", "fd00::2", 128, 3)), "+trk+new")
	wantState(t, run(t, tr, "ct(zone=2)", icmp6Echo(t, "fd00::2", "fd00::1", 129, 3)), "+trk+est+rpl")
	z := uint16(2)
	want := "icmpv6,orig=(src=fd00::1,dst=fd00::2,id=3,type=128,code=0),reply=(src=fd00::2,dst=fd00::1,id=3,type=129,code=0),zone=2\n" +
		"tcp,orig=(src=fd00::1,dst=fd00::2,sport=40000,dport=22),reply=(src=fd00::2,dst=fd00::1,sport=22,dport=40000),zone=2,protoinfo=(state=ESTABLISHED)\n"
	if got := FormatDump(tr.Dump(&z), false); got != want {
		t.Fatalf("dump:\n%s\nwant\n%s", got, want)
	}
}

func TestMarkAndLabelMasked(t *testing.T) {
	tr, _ := newTracker(t)
	p := run(t, tr, "ct(commit,mark=0x12/0xff,label=0x100/0xf00)", udp4(t, cA, cB, 1, 2))
	if p.Md.CtMark != 0x12 || p.Md.CtLabel[14] != 0x01 {
		t.Fatalf("md mark %x label %x", p.Md.CtMark, p.Md.CtLabel)
	}
	p = run(t, tr, "ct(commit,mark=0x3400/0xff00)", udp4(t, cB, cA, 2, 1))
	if p.Md.CtMark != 0x3412 {
		t.Fatalf("mark %x", p.Md.CtMark)
	}
	if got := FormatDump(tr.Dump(nil), false); got != "udp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=1,dport=2),reply=(src=10.0.0.2,dst=10.0.0.1,sport=2,dport=1),mark=13330,labels=0x100\n" {
		t.Fatalf("dump %q", got)
	}
}

func TestSNATBothDirectionsByteExact(t *testing.T) {
	tr, _ := newTracker(t)
	act := "ct(commit,zone=1,nat(src=192.168.0.100:5000-5000))"
	p := run(t, tr, act, tcp4(t, cA, cB, 1234, 80, fSYN, 100, 0, nil))
	wantState(t, p, "+trk+new+snat")
	if want := tcp4(t, "192.168.0.100", cB, 5000, 80, fSYN, 100, 0, nil); !bytes.Equal(p.Data(), want) {
		t.Fatalf("translated SYN\n got % x\nwant % x", p.Data(), want)
	}
	checkChecksums(t, p.Data())
	// The reply comes back to the NAT address and is translated back.
	p = run(t, tr, "ct(zone=1,nat)", tcp4(t, cB, "192.168.0.100", 80, 5000, fSYN|fACK, 500, 101, nil))
	wantState(t, p, "+trk+est+rpl+dnat")
	if want := tcp4(t, cB, cA, 80, 1234, fSYN|fACK, 500, 101, nil); !bytes.Equal(p.Data(), want) {
		t.Fatalf("translated SYN-ACK\n got % x\nwant % x", p.Data(), want)
	}
	// Metadata holds the original tuple.
	if p.Md.CtNwSrc != 0x0a000001 || p.Md.CtTpSrc != 1234 {
		t.Fatalf("md %+v", p.Md)
	}
	z := uint16(1)
	if got, want := FormatDump(tr.Dump(&z), false), "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=1234,dport=80),reply=(src=10.0.0.2,dst=192.168.0.100,sport=80,dport=5000),zone=1,protoinfo=(state=ESTABLISHED)\n"; got != want {
		t.Fatalf("dump %q", got)
	}
	// A second ct(nat) in the same zone after recirculation finds the
	// connection although the packet is already translated.
	p = run(t, tr, act, tcp4(t, cA, cB, 1234, 80, fACK, 101, 501, nil))
	wantState(t, p, "+trk+est+snat")
	runPkt(t, tr, "ct(zone=1,nat)", p)
	wantState(t, p, "+trk+est+snat")
	if want := tcp4(t, "192.168.0.100", cB, 5000, 80, fACK, 101, 501, nil); !bytes.Equal(p.Data(), want) {
		t.Fatalf("double ct changed the packet")
	}
}

func TestDNATBothDirectionsByteExact(t *testing.T) {
	tr, _ := newTracker(t)
	p := run(t, tr, "ct(commit,nat(dst=10.1.1.1:8080))", udp4(t, cA, "172.16.0.1", 4000, 80))
	wantState(t, p, "+trk+new+dnat")
	if want := udp4(t, cA, "10.1.1.1", 4000, 8080); !bytes.Equal(p.Data(), want) {
		t.Fatalf("dnat\n got % x\nwant % x", p.Data(), want)
	}
	p = run(t, tr, "ct(nat)", udp4(t, "10.1.1.1", cA, 8080, 4000))
	wantState(t, p, "+trk+est+rpl+snat")
	if want := udp4(t, "172.16.0.1", cA, 80, 4000); !bytes.Equal(p.Data(), want) {
		t.Fatalf("un-dnat\n got % x\nwant % x", p.Data(), want)
	}
	// Without nat in the action the packet is not translated.
	p = run(t, tr, "ct", udp4(t, "10.1.1.1", cA, 8080, 4000))
	wantState(t, p, "+trk+est+rpl")
	if want := udp4(t, "10.1.1.1", cA, 8080, 4000); !bytes.Equal(p.Data(), want) {
		t.Fatalf("ct without nat changed the packet")
	}
}

func TestRelatedICMPErrorIsTranslated(t *testing.T) {
	tr, _ := newTracker(t)
	run(t, tr, "ct(commit,nat(src=192.168.0.100:5000-5000))", udp4(t, cA, cB, 1234, 53))
	// The server answers the translated packet with port unreachable.
	quoted := udp4(t, "192.168.0.100", cB, 5000, 53)
	p := run(t, tr, "ct(nat)", icmp4Error(t, cB, "192.168.0.100", quoted))
	wantState(t, p, "+trk+rel+rpl+dnat")
	want := icmp4Error(t, cB, cA, udp4(t, cA, cB, 1234, 53))
	if !bytes.Equal(p.Data(), want) {
		t.Fatalf("related error\n got % x\nwant % x", p.Data(), want)
	}
	pk := checkChecksums(t, p.Data())
	inner := pk.Layer(layers.LayerTypeICMPv4).(*layers.ICMPv4).Payload
	if packet := gopacket.NewPacket(inner, layers.LayerTypeIPv4, gopacket.Default); packet.NetworkLayer() == nil {
		t.Fatalf("inner not IPv4")
	}
}

func TestNATPortRangeExhaustion(t *testing.T) {
	tr, _ := newTracker(t)
	act := "ct(commit,nat(src=192.168.0.100:100-101))"
	seen := map[uint16]bool{}
	for i := uint16(0); i < 2; i++ {
		p := run(t, tr, act, udp4(t, cA, cB, 1000+i, 53))
		wantState(t, p, "+trk+new+snat")
		seen[uint16(p.Data()[34])<<8|uint16(p.Data()[35])] = true
	}
	if !seen[100] || !seen[101] {
		t.Fatalf("ports used: %v", seen)
	}
	p := run(t, tr, act, udp4(t, cA, cB, 1002, 53))
	wantState(t, p, "+trk+new")
	if tr.Count() != 2 || tr.Stats().NATExhausted != 1 {
		t.Fatalf("count %d stats %+v", tr.Count(), tr.Stats())
	}
	if want := udp4(t, cA, cB, 1002, 53); !bytes.Equal(p.Data(), want) {
		t.Fatalf("refused packet was modified")
	}
}

func TestZoneIsolation(t *testing.T) {
	tr, _ := newTracker(t)
	run(t, tr, "ct(commit,zone=1,mark=1)", udp4(t, cA, cB, 1, 2))
	run(t, tr, "ct(commit,zone=2,mark=2)", udp4(t, cA, cB, 1, 2))
	if tr.Count() != 2 || tr.ZoneCount(1) != 1 || tr.ZoneCount(2) != 1 {
		t.Fatalf("counts %d %d %d", tr.Count(), tr.ZoneCount(1), tr.ZoneCount(2))
	}
	p := run(t, tr, "ct(zone=2)", udp4(t, cB, cA, 2, 1))
	wantState(t, p, "+trk+est+rpl")
	if p.Md.CtMark != 2 {
		t.Fatalf("zone 2 reply got mark %d", p.Md.CtMark)
	}
	wantState(t, run(t, tr, "ct(zone=3)", udp4(t, cB, cA, 2, 1)), "+trk+new")
}

func TestZoneAndGlobalLimits(t *testing.T) {
	tr, _ := newTracker(t)
	def := uint32(0)
	tr.SetLimits(&def, map[uint16]uint32{7: 2})
	for i := uint16(0); i < 3; i++ {
		wantState(t, run(t, tr, "ct(commit,zone=7)", udp4(t, cA, cB, i, 2)), "+trk+new")
	}
	if tr.ZoneCount(7) != 2 || tr.ZoneRefused(7) != 1 || tr.Stats().ZoneFull != 1 {
		t.Fatalf("zone 7: count %d refused %d", tr.ZoneCount(7), tr.ZoneRefused(7))
	}
	for i := uint16(0); i < 3; i++ {
		run(t, tr, "ct(commit,zone=8)", udp4(t, cA, cB, i, 2))
	}
	if tr.ZoneCount(8) != 3 {
		t.Fatalf("zone 8 count %d", tr.ZoneCount(8))
	}
	if got, want := FormatLimits(tr.Limits()), "default limit=0\nzone=7,limit=2,count=2\n"; got != want {
		t.Fatalf("limits %q", got)
	}
	tr.SetMaxConns(6)
	for i := uint16(10); i < 13; i++ {
		run(t, tr, "ct(commit,zone=9)", udp4(t, cA, cB, i, 2))
	}
	if tr.Count() != 6 || tr.Stats().Full != 2 || tr.MaxConns() != 6 {
		t.Fatalf("count %d stats %+v", tr.Count(), tr.Stats())
	}
	tr.DeleteLimits(7)
	if _, zl := tr.Limits(7); zl[0].Limit != 0 {
		t.Fatalf("limit after delete %+v", zl)
	}
}

func TestFlushVariants(t *testing.T) {
	tr, _ := newTracker(t)
	for z := uint16(1); z <= 3; z++ {
		for i := uint16(0); i < 10; i++ {
			run(t, tr, "ct(commit,zone="+itoa(int(z))+")", udp4(t, cA, cB, 1000+i, 53))
		}
	}
	if n := tr.FlushZone(2); n != 10 || tr.Count() != 20 || tr.ZoneCount(2) != 0 {
		t.Fatalf("flush zone: %d, count %d", n, tr.Count())
	}
	if n := tr.FlushZone(2); n != 0 {
		t.Fatalf("flush empty zone: %d", n)
	}
	if n := tr.FlushZone(999); n != 0 {
		t.Fatalf("flush never-used zone: %d", n)
	}
	// The flushed zone works again.
	wantState(t, run(t, tr, "ct(zone=2)", udp4(t, cB, cA, 53, 1000)), "+trk+new")
	// By original tuple.
	k := tupleKey(t, "ct_nw_src=10.0.0.1,ct_nw_dst=10.0.0.2,ct_nw_proto=17,ct_tp_src=1000,ct_tp_dst=53", 1)
	if !tr.FlushTuple(k) || tr.ZoneCount(1) != 9 || tr.FlushTuple(k) {
		t.Fatalf("flush orig tuple: zone 1 has %d", tr.ZoneCount(1))
	}
	// By reply tuple.
	k = tupleKey(t, "ct_nw_src=10.0.0.2,ct_nw_dst=10.0.0.1,ct_nw_proto=17,ct_tp_src=53,ct_tp_dst=1001", 1)
	if !tr.FlushTuple(k) || tr.ZoneCount(1) != 8 {
		t.Fatalf("flush reply tuple: zone 1 has %d", tr.ZoneCount(1))
	}
	// Same tuple, other zone: zone 3 is untouched.
	if tr.ZoneCount(3) != 10 {
		t.Fatalf("zone 3 has %d", tr.ZoneCount(3))
	}
	if n := tr.FlushAll(); n != 18 || tr.Count() != 0 || FormatDump(tr.Dump(nil), false) != "" {
		t.Fatalf("flush all: %d, count %d", n, tr.Count())
	}
}

// tupleKey is the key of zone z that a full dpctl ct-tuple names.
func tupleKey(t *testing.T, s string, z uint16) Key {
	t.Helper()
	var m Match
	if err := m.ParseTupleMatch(&m.Orig, s); err != nil || !m.Orig.isFiveTuple(m.Proto) {
		t.Fatalf("tuple %q: %v", s, err)
	}
	return m.origKey(z)
}

func itoa(i int) string {
	b := []byte{}
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

func TestExpiryWithFakeClock(t *testing.T) {
	tr, clk := newTracker(t)
	run(t, tr, "ct(commit)", udp4(t, cA, cB, 1, 2))
	establishTCP(t, tr, "ct(commit)")
	clk.advance(59)
	if n, _ := tr.Sweep(clk.now(), 1<<20); n != 0 {
		t.Fatalf("swept %d before udp_first", n)
	}
	clk.advance(2) // UDP first: 60 s
	// Expired before the sweep: the reply starts a new connection.
	wantState(t, run(t, tr, "ct", udp4(t, cB, cA, 2, 1)), "+trk+new")
	n, wrapped := tr.Sweep(clk.now(), 1<<20)
	if n != 1 || !wrapped || tr.Count() != 1 {
		t.Fatalf("swept %d wrapped %v count %d", n, wrapped, tr.Count())
	}
	// Established TCP lives 24 h.
	clk.advance(24*3600 - 100)
	tr.Sweep(clk.now(), 1<<20)
	if tr.Count() != 1 {
		t.Fatal("tcp expired early")
	}
	clk.advance(200)
	tr.Sweep(clk.now(), 1<<20)
	if tr.Count() != 0 {
		t.Fatal("tcp did not expire")
	}
}

func TestSweepBudgetIsIncremental(t *testing.T) {
	tr, clk := newTracker(t)
	for i := uint16(0); i < 100; i++ {
		run(t, tr, "ct(commit,zone=4)", udp4(t, cA, cB, i, 2))
	}
	clk.advance(3600)
	total, rounds := 0, 0
	for tr.Count() > 0 && rounds < 10000 {
		n, _ := tr.Sweep(clk.now(), 10)
		if n > 10 {
			t.Fatalf("removed %d with budget 10", n)
		}
		total += n
		rounds++
	}
	if total != 100 || rounds < 10 {
		t.Fatalf("total %d in %d rounds", total, rounds)
	}
}

func TestZoneTimeoutPolicy(t *testing.T) {
	tr, clk := newTracker(t)
	p := DefaultTimeoutPolicy()
	p[UDPFirst] = 5
	tr.SetZoneTimeoutPolicy(6, &p)
	run(t, tr, "ct(commit,zone=6)", udp4(t, cA, cB, 1, 2))
	run(t, tr, "ct(commit,zone=7)", udp4(t, cA, cB, 1, 2))
	clk.advance(6)
	if n, _ := tr.Sweep(clk.now(), 1<<20); n != 1 || tr.ZoneCount(6) != 0 || tr.ZoneCount(7) != 1 {
		t.Fatalf("swept %d", n)
	}
	if tr.ZoneTimeoutPolicy(6)[UDPFirst] != 5 || tr.ZoneTimeoutPolicy(7)[UDPFirst] != 60 {
		t.Fatal("policy lookup")
	}
}

func TestForceCommitReplyStartsNewConnection(t *testing.T) {
	tr, _ := newTracker(t)
	run(t, tr, "ct(commit)", udp4(t, cA, cB, 1, 2))
	p := run(t, tr, "ct(force_commit)", udp4(t, cB, cA, 2, 1))
	wantState(t, p, "+trk+new")
	if got := tr.Dump(nil); len(got) != 1 || got[0].Orig.SrcPort != 2 {
		t.Fatalf("after force_commit: %+v", got)
	}
}

func TestTFTPHelperExpectation(t *testing.T) {
	tr, _ := newTracker(t)
	run(t, tr, "ct(commit,helper=tftp)", udp4(t, cA, cB, 3000, 69))
	p := run(t, tr, "ct(commit)", udp4(t, cB, cA, 40000, 3000))
	wantState(t, p, "+trk+new+rel")
	wantState(t, run(t, tr, "ct", udp4(t, cA, cB, 3000, 40000)), "+trk+est+rpl")
	wantState(t, run(t, tr, "ct", udp4(t, cB, cA, 40001, 3001)), "+trk+new")
}

func TestNotIPAndMalformedAreInvalid(t *testing.T) {
	tr, _ := newTracker(t)
	arp := make([]byte, 60)
	arp[12], arp[13] = 0x08, 0x06
	wantState(t, run(t, tr, "ct", arp), "+trk+inv")
	bad := udp4(t, cA, cB, 1, 2)
	bad[14+20+8] ^= 0xff // payload change breaks the UDP checksum
	wantState(t, run(t, tr, "ct(commit)", bad), "+trk+inv")
}

func TestStatsShow(t *testing.T) {
	tr, _ := newTracker(t)
	establishTCP(t, tr, "ct(commit)")
	run(t, tr, "ct(commit)", udp4(t, cA, cB, 1, 2))
	run(t, tr, "ct(commit)", icmp4Echo(t, cA, cB, 8, 1))
	run(t, tr, "ct(commit,zone=3)", tcp4(t, cA, cB, 7, 8, fSYN, 1, 0, nil))
	want := "Connections Stats:\n    Total: 4\n  TCP: 2\n  UDP: 1\n  ICMP: 1\n"
	if got := FormatStats(tr.Dump(nil), false); got != want {
		t.Fatalf("stats:\n%s", got)
	}
	want = "Connections Stats:\n    Total: 4\n  TCP: 2\n    Conn per TCP states:\n\t  [SYN_SENT]=1\n\t  [ESTABLISHED]=1\n  UDP: 1\n  ICMP: 1\n"
	if got := FormatStats(tr.Dump(nil), true); got != want {
		t.Fatalf("stats -m:\n%q", got)
	}
	z := uint16(3)
	if got := FormatDump(tr.Dump(&z), true); got != "tcp,orig=(src=10.0.0.1,dst=10.0.0.2,sport=7,dport=8),reply=(src=10.0.0.2,dst=10.0.0.1,sport=8,dport=7),zone=3,timeout=30,protoinfo=(state=SYN_SENT)\n" {
		t.Fatalf("dump -s: %q", got)
	}
}

func TestFTPHelperExpectations(t *testing.T) {
	tr, _ := newTracker(t)
	ct := "ct(commit,helper=ftp)"
	run(t, tr, ct, tcp4(t, cA, cB, 3000, 21, fSYN, 100, 0, nil))
	run(t, tr, ct, tcp4(t, cB, cA, 21, 3000, fSYN|fACK, 500, 101, nil))
	run(t, tr, ct, tcp4(t, cA, cB, 3000, 21, fACK, 101, 501, nil))
	// Active mode: the server connects from port 20 to 10.0.0.1:1025.
	cmd := []byte("PORT 10,0,0,1,4,1\r\n")
	wantState(t, run(t, tr, ct, tcp4(t, cA, cB, 3000, 21, fACK, 101, 501, cmd)), "+trk+est")
	wantState(t, run(t, tr, "ct(commit)", tcp4(t, cB, cA, 20, 1025, fSYN, 1, 0, nil)), "+trk+new+rel")
	// Passive mode: the client connects to 10.0.0.2:5001.
	reply := []byte("227 Entering Passive Mode (10,0,0,2,19,137).\r\n")
	wantState(t, run(t, tr, ct, tcp4(t, cB, cA, 21, 3000, fACK, 501, 101+uint32(len(cmd)), reply)), "+trk+est+rpl")
	wantState(t, run(t, tr, "ct(commit)", tcp4(t, cA, cB, 40000, 5001, fSYN, 1, 0, nil)), "+trk+new+rel")
	// An unannounced port is plain new; a PORT naming another host is ignored.
	wantState(t, run(t, tr, "ct(commit)", tcp4(t, cA, cB, 40001, 5002, fSYN, 1, 0, nil)), "+trk+new")
	bounce := []byte("PORT 10,9,9,9,4,2\r\n")
	run(t, tr, ct, tcp4(t, cA, cB, 3000, 21, fACK, 101+uint32(len(cmd)), 501+uint32(len(reply)), bounce))
	wantState(t, run(t, tr, "ct(commit)", tcp4(t, cB, "10.9.9.9", 20, 1026, fSYN, 1, 0, nil)), "+trk+new")
	for _, in := range []string{"1,2,3", "1,2,3,4,5,6", "999,1,1,1,1,1", "a,b"} {
		if _, _, ok := parseFTPHostPort([]byte(in)); ok != (in == "1,2,3,4,5,6") {
			t.Errorf("parseFTPHostPort(%q) ok=%v", in, ok)
		}
	}
	if a, p, ok := parseFTPEPRT([]byte("|2|fd00::1|6446|"), 6); !ok || p != 6446 || a[15] != 1 {
		t.Errorf("EPRT: %v %d %v", a, p, ok)
	}
}

// TestZeroSNATKeepsTheAddressAndResolvesClashes: nat(src=0.0.0.0) (OVN
// with the ct_zero_snat capability) leaves a connection untranslated
// unless its reply tuple is taken, and then keeps the source address and
// takes another port, as Open vSwitch's find_addr all-zero case.
func TestZeroSNATKeepsTheAddressAndResolvesClashes(t *testing.T) {
	tr, _ := newTracker(t)
	zero := "ct(commit,zone=1,nat(src=0.0.0.0))"
	p := run(t, tr, zero, udp4(t, cA, cB, 1000, 53))
	if want := udp4(t, cA, cB, 1000, 53); !bytes.Equal(p.Data(), want) {
		t.Fatalf("uncontended zero SNAT changed the packet\n got % x\nwant % x", p.Data(), want)
	}
	// Another host's connection translated onto cA:1234 takes the reply
	// tuple cB:53 -> cA:1234 ...
	run(t, tr, "ct(commit,zone=1,nat(src="+cA+":1234-1234))", udp4(t, "10.0.0.5", cB, 7, 53))
	// ... so cA's own connection from port 1234 keeps its address and
	// moves to another port.
	p = run(t, tr, zero, udp4(t, cA, cB, 1234, 53))
	wantState(t, p, "+trk+new+snat")
	d := p.Data()
	if src := net.IP(d[26:30]).String(); src != cA {
		t.Fatalf("source address %s, want %s", src, cA)
	}
	if port := uint16(d[34])<<8 | uint16(d[35]); port == 1234 {
		t.Fatalf("clashing connection kept port 1234")
	}
	if tr.ZoneCount(1) != 3 {
		t.Fatalf("zone 1 holds %d connections, want 3", tr.ZoneCount(1))
	}
}

// A packet a zone has NATed comes back to that zone (OVN's egress ct(nat)
// after its ingress load balancer) and belongs to the NAT connection,
// even when another connection of the zone has the translated tuple as
// its own original tuple: Open vSwitch looks such a packet up by its
// untranslated tuple only. OVN's first packet commits its SNAT in the
// DNAT zone; the next ones must still see the load balancer's connection
// there, and so commit their SNAT in the SNAT zone.
func TestNATedPacketReenteringItsZoneFindsTheNATConnection(t *testing.T) {
	tr, _ := newTracker(t)
	// The load balancer: cA:4000 -> VIP 172.16.0.1:80 DNATed to 10.1.1.3:53.
	p := run(t, tr, "ct(commit,zone=1,mark=0x2/0x2,nat(dst=10.1.1.3:53))", udp4(t, cA, "172.16.0.1", 4000, 80))
	wantState(t, p, "+trk+new+dnat")
	// The first packet's SNAT, committed in the same zone from a fresh
	// state (ct_clear): its original tuple is the translated one.
	q := run(t, tr, "ct(commit,zone=1,nat(src=10.9.9.9))", p.Data())
	wantState(t, q, "+trk+new+snat")
	// The next packet: load balanced, then ct(zone=1,nat) again.
	p = run(t, tr, "ct(zone=1,nat)", udp4(t, cA, "172.16.0.1", 4000, 80))
	wantState(t, p, "+trk+new+dnat")
	runPkt(t, tr, "ct(zone=1,nat)", p)
	wantState(t, p, "+trk+new+dnat")
	if p.Md.CtMark != 2 {
		t.Fatalf("re-entering packet got ct_mark %d, want the load balancer's 2", p.Md.CtMark)
	}
}
