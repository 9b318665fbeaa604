package flow

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/packet"
)

// composeGolden is one flow of testdata/compose/golden.txt with the frame
// Open vSwitch 3.1's netdev-dummy/receive built for it.
type composeGolden struct {
	line  int
	flow  string
	size  int // --len argument, 0 if none
	frame []byte
}

// compose builds g's frame as netdev-dummy/receive does.
func (g *composeGolden) compose() ([]byte, error) {
	if g.size == 0 {
		return ComposeString(g.flow)
	}
	m, err := ParseMatch(g.flow)
	if err != nil {
		return nil, err
	}
	return ComposeLen(nil, &m.Key, g.size)
}

// readComposeGolden parses golden.txt ("flow F" then "hex H" lines; '#'
// comments), written by testdata/compose/gen.sh.
func readComposeGolden(tb testing.TB) []composeGolden {
	tb.Helper()
	f, err := os.Open("testdata/compose/golden.txt")
	if err != nil {
		tb.Fatalf("open golden data: %v", err)
	}
	defer f.Close()
	var out []composeGolden
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "flow "):
			g := composeGolden{line: n, flow: strings.TrimPrefix(line, "flow ")}
			if rest, ok := strings.CutPrefix(g.flow, "--len "); ok {
				size, flow, _ := strings.Cut(rest, " ")
				var err error
				if g.size, err = strconv.Atoi(size); err != nil {
					tb.Fatalf("golden.txt:%d: %v", n, err)
				}
				g.flow = flow
			}
			out = append(out, g)
		case strings.HasPrefix(line, "hex ") && len(out) > 0 && out[len(out)-1].frame == nil:
			b, err := hex.DecodeString(strings.TrimPrefix(line, "hex "))
			if err != nil {
				tb.Fatalf("golden.txt:%d: %v", n, err)
			}
			out[len(out)-1].frame = b
		default:
			tb.Fatalf("golden.txt:%d: unexpected line %q", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("read golden data: %v", err)
	}
	if len(out) < 40 {
		tb.Fatalf("golden.txt has %d flows, want at least 40", len(out))
	}
	for _, g := range out {
		if g.frame == nil {
			tb.Fatalf("golden.txt:%d: flow without hex", g.line)
		}
	}
	return out
}

func TestComposeStringMatchesOpenVSwitchFrames(t *testing.T) {
	for _, g := range readComposeGolden(t) {
		got, err := g.compose()
		if err != nil {
			t.Errorf("golden.txt:%d: %v", g.line, err)
			continue
		}
		if !bytes.Equal(got, g.frame) {
			t.Errorf("golden.txt:%d: %s\n got %x\nwant %x", g.line, g.flow, got, g.frame)
		}
	}
}

// extractedFromComposed is the key Extract must find in the frame Compose
// builds for k: the L2-L4 fields the frame can carry. It spells out what
// flow_compose loses: VLANs of an 802.3 frame, ARP addresses of other
// opcodes, IPv6 fragments (no fragment header), an IPv4 FragLater without
// FragAny, everything past an IPv6 extension-header protocol (no such header
// is written), L4 of later fragments; and what extraction adds: NDOptType
// from the first address option.
func extractedFromComposed(k *Key) Key {
	var w Key
	w.EthDst, w.EthSrc = k.EthDst, k.EthSrc
	if k.EthType < EthTypeMin {
		w.EthType = EthTypeNone
		return w
	}
	n := 0
	for _, v := range k.VLANs {
		if v.TCI&VLANCFI != 0 {
			w.VLANs[n] = v
			n++
		}
	}
	w.EthType = k.EthType
	switch k.EthType {
	case EthTypeMPLS, EthTypeMPLSMcst:
		w.MPLSLSE = k.MPLSLSE
		return w
	case EthTypeARP, EthTypeRARP:
		w.NwProto = k.NwProto
		if k.NwProto == arpOpRequest || k.NwProto == arpOpReply {
			w.NwSrc, w.NwDst, w.ArpSha, w.ArpTha = k.NwSrc, k.NwDst, k.ArpSha, k.ArpTha
		}
		return w
	case EthTypeIPv4:
		w.NwSrc, w.NwDst = k.NwSrc, k.NwDst
		if k.NwFrag&FragAny != 0 {
			w.NwFrag = k.NwFrag & FragMask
		}
	case EthTypeIPv6:
		w.IPv6Src, w.IPv6Dst = k.IPv6Src, k.IPv6Dst
		if ipv6ExtKinds[k.NwProto] != extNone {
			return w
		}
		w.IPv6Label = k.IPv6Label & ipv6LabelMask
	default:
		return w
	}
	w.NwProto, w.NwTos, w.NwTTL = k.NwProto, k.NwTos, k.NwTTL
	if laterFragment(k) {
		return w
	}
	switch k.NwProto {
	case IPProtoTCP:
		w.TpSrc, w.TpDst, w.TCPFlags = k.TpSrc, k.TpDst, k.TCPFlags&tcpFlagsMask
	case IPProtoUDP, IPProtoSCTP:
		w.TpSrc, w.TpDst = k.TpSrc, k.TpDst
	case IPProtoICMP:
		w.TpSrc, w.TpDst = k.TpSrc&0xff, k.TpDst&0xff
	case IPProtoIGMP:
		w.TpSrc, w.TpDst, w.IGMPGroup = k.TpSrc&0xff, k.TpDst&0xff, k.IGMPGroup
	case IPProtoICMPv6:
		w.TpSrc, w.TpDst = k.TpSrc&0xff, k.TpDst&0xff
		if w.isND() {
			w.NDReserved, w.NDTarget, w.ArpSha, w.ArpTha = k.NDReserved, k.NDTarget, k.ArpSha, k.ArpTha
			switch {
			case k.ArpSha != [6]byte{}:
				w.NDOptType = ndOptSourceLLA
			case k.ArpTha != [6]byte{}:
				w.NDOptType = ndOptTargetLLA
			}
		}
	}
	return w
}

func TestExtractOfComposedFrameGivesKeyFields(t *testing.T) {
	for _, g := range readComposeGolden(t) {
		m, err := ParseMatch(g.flow)
		if err != nil {
			t.Fatalf("golden.txt:%d: %v", g.line, err)
		}
		frame := Compose(nil, &m.Key, []byte("payload"))
		_, got := extractFrame(frame)
		if want := extractedFromComposed(&m.Key); got != want {
			t.Errorf("golden.txt:%d: %s\nframe %x%s", g.line, g.flow, frame, extractKeyDiff(&got, &want))
		}
	}
}

func TestComposeAppendsToDst(t *testing.T) {
	k := mustComposeKey(t, "eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0806),arp(sip=1.2.3.4,tip=5.6.7.8,op=2,sha=00:00:00:00:00:01,tha=00:00:00:00:00:02)")
	prefix := []byte{0xde, 0xad}
	got := Compose(append([]byte(nil), prefix...), &k, nil)
	want := Compose(nil, &k, nil)
	if !bytes.Equal(got[:2], prefix) || !bytes.Equal(got[2:], want) {
		t.Fatalf("Compose with prefix = %x, want %x%x", got, prefix, want)
	}
	if len(want) != ethHeaderLen+arpEthIPv4Len {
		t.Fatalf("ARP frame length %d, want %d", len(want), ethHeaderLen+arpEthIPv4Len)
	}
}

func mustComposeKey(tb testing.TB, s string) Key {
	tb.Helper()
	m, err := ParseMatch(s)
	if err != nil {
		tb.Fatal(err)
	}
	return m.Key
}

// verifyL4Checksum reports whether the L4 checksum of an IPv4 or IPv6 frame
// without VLAN tags sums to all-ones over the pseudo-header.
func verifyL4Checksum(frame []byte) bool {
	p, k := extractFrame(frame)
	l4 := p.L4Data()
	var pseudo uint32
	if k.EthType == EthTypeIPv4 {
		pseudo = packet.PseudoHeaderIPv4(k.NwSrc, k.NwDst, k.NwProto, len(l4))
	} else {
		pseudo = packet.PseudoHeaderIPv6(k.IPv6Src[:], k.IPv6Dst[:], k.NwProto, len(l4))
	}
	return packet.Fold(packet.ChecksumPartial(l4, pseudo)) == 0
}

func TestComposeCarriesOddPayloadWithValidChecksums(t *testing.T) {
	l7 := []byte("odd")
	for _, s := range []string{
		"eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)",
		"eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1,dst=2)",
		"eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x86dd),ipv6(src=::1,dst=::2,label=0,proto=58,tclass=0,hlimit=64,frag=no),icmpv6(type=128,code=0)",
	} {
		k := mustComposeKey(t, s)
		frame := Compose(nil, &k, l7)
		if !bytes.HasSuffix(frame, l7) {
			t.Errorf("%s: payload missing from %x", s, frame)
		}
		if !verifyL4Checksum(frame) {
			t.Errorf("%s: bad L4 checksum in %x", s, frame)
		}
		if k.NwProto == IPProtoUDP {
			p, _ := extractFrame(frame)
			if n := binary.BigEndian.Uint16(p.L4Data()[udpLenOff:]); n != udpHeaderLen+3 {
				t.Errorf("UDP length %d, want %d", n, udpHeaderLen+3)
			}
		}
	}
}

func TestComposeOmitsPayloadWhereOpenVSwitchDoes(t *testing.T) {
	l7 := []byte{1, 2, 3, 4}
	for _, c := range []struct {
		flow   string
		wantL4 int // bytes after the IP header
	}{
		{"eth_type(0x0800),ipv4(proto=6,frag=no),tcp_flags(rst)", tcpMinHeaderLen},
		{"eth_type(0x0800),ipv4(proto=6,frag=no),tcp_flags(ack)", tcpMinHeaderLen + 4},
		{"eth_type(0x0800),ipv4(proto=132,frag=no),sctp(src=1,dst=2)", sctpHeaderLen},
		{"eth_type(0x0800),ipv4(proto=1,frag=no),icmp(type=11,code=0)", icmpHeaderLen},
		{"eth_type(0x0800),ipv4(proto=1,frag=no),icmp(type=0,code=0)", icmpHeaderLen + 4},
		{"eth_type(0x0800),ipv4(proto=17,frag=later)", 0},
		{"eth_type(0x0800),ipv4(proto=47,frag=no)", 0},
		{"eth_type(0x86dd),ipv6(proto=58,frag=no),icmpv6(type=129,code=1)", icmpv6HeaderLen},
	} {
		k := mustComposeKey(t, "eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),"+c.flow)
		frame := Compose(nil, &k, l7)
		ipLen := ipv4MinHeaderLen
		if k.EthType == EthTypeIPv6 {
			ipLen = ipv6HeaderLen
		}
		if got := len(frame) - ethHeaderLen - ipLen; got != c.wantL4 {
			t.Errorf("%s: %d bytes after IP, want %d", c.flow, got, c.wantL4)
		}
	}
}

func TestComposeDoesNotAllocateWithCapacity(t *testing.T) {
	k := mustComposeKey(t, "eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x8100),vlan(vid=1),encap(eth_type(0x86dd),ipv6(src=::1,dst=::2,label=0,proto=58,tclass=0,hlimit=255,frag=no),icmpv6(type=135,code=0),nd(target=::3,sll=00:00:00:00:00:01,tll=00:00:00:00:00:02))")
	buf := make([]byte, 0, 256)
	l7 := AppendDefaultPayload(nil, DefaultPayloadLen)
	if n := testing.AllocsPerRun(100, func() { buf = Compose(buf[:0], &k, l7) }); n != 0 {
		t.Fatalf("Compose allocated %v times per run", n)
	}
}

func TestComposeStringReportsParseErrors(t *testing.T) {
	if _, err := ComposeString("eth_type(0x0800),bogus(1)"); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("ComposeString error = %v, want one naming the bad attribute", err)
	}
}

func BenchmarkComposeTCP(b *testing.B) {
	k := mustComposeKey(b, "eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1,dst=2)")
	l7 := AppendDefaultPayload(nil, DefaultPayloadLen)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = Compose(buf[:0], &k, l7)
	}
}

// FuzzCompose composes arbitrary keys (the fuzzer's bytes laid over the key's
// L2-L4 words) with an arbitrary payload, and pads them to an arbitrary
// length. It checks that Compose, ComposeLen and Extract never panic, that
// ComposeLen gives exactly the length asked for or fails, and that the frame of the extracted key is the same frame,
// except where the frame cannot carry the key: VLAN TPIDs other than 0x8100
// and 0x88a8 (replaced before composing), an IPv6 extension-header
// protocol, and an IPv6 later fragment (no fragment header is written, so
// the re-extracted key asks for an L4 header).
func FuzzCompose(f *testing.F) {
	for _, g := range readComposeGolden(f) {
		m, err := ParseMatch(g.flow)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(keyBytes(&m.Key), []byte("l7"), uint16(g.size))
	}
	f.Fuzz(func(t *testing.T, raw, l7 []byte, size uint16) {
		if len(l7) > 1500 {
			l7 = l7[:1500]
		}
		var k Key
		w := k.W()
		for i := SegTunnelEnd; i < KeyWords && len(raw) >= 8; i++ {
			w[i] = binary.LittleEndian.Uint64(raw)
			raw = raw[8:]
		}
		for i := range k.VLANs {
			k.VLANs[i].TPID = [2]uint16{EthTypeVLAN, EthTypeQinQ}[k.VLANs[i].TPID&1]
		}
		if padded, err := ComposeLen(nil, &k, int(size)); err == nil {
			if len(padded) != int(size) {
				t.Fatalf("ComposeLen(%d) gave %d bytes", size, len(padded))
			}
			extractFrame(padded)
		} else if len(padded) != 0 {
			t.Fatalf("ComposeLen(%d) failed with %d bytes: %v", size, len(padded), err)
		}

		frame := Compose(nil, &k, l7)
		_, got := extractFrame(frame)
		if k.EthType == EthTypeIPv6 && (ipv6ExtKinds[k.NwProto] != extNone || laterFragment(&k)) {
			return
		}
		if again := Compose(nil, &got, l7); !bytes.Equal(again, frame) {
			t.Fatalf("frame of extracted key differs\n got %x\nwant %x", again, frame)
		}
	})
}

// keyBytes returns the L2-L4 words of k as FuzzCompose reads them.
func keyBytes(k *Key) []byte {
	var b []byte
	for _, w := range k.W()[SegTunnelEnd:] {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

func TestComposeLenRejectsLengthsItCannotReach(t *testing.T) {
	k := mustComposeKey(t, "eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x86dd),ipv6(src=::1,dst=::2,label=0,proto=6,tclass=0,hlimit=64,frag=no),tcp(src=1,dst=2),tcp_flags(syn)")
	dst := []byte{7}
	for _, size := range []int{MinComposeLen - 1, 73} {
		got, err := ComposeLen(dst, &k, size)
		if err == nil || !bytes.Equal(got, dst) {
			t.Errorf("ComposeLen(%d) = %x, %v; want the unchanged dst and an error", size, got, err)
		}
	}
	got, err := ComposeLen(dst, &k, 74)
	if err != nil || len(got) != 1+74 || !bytes.Equal(got[1:], Compose(nil, &k, nil)) {
		t.Errorf("ComposeLen(74) = %x, %v; want the unpadded frame", got, err)
	}
}

func TestComposeLenPadsWithValidChecksums(t *testing.T) {
	k := mustComposeKey(t, "eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x8100),vlan(vid=9),encap(eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=6,tos=0,ttl=64,frag=no),tcp(src=1,dst=2))")
	frame, err := ComposeLen(nil, &k, 201)
	if err != nil || len(frame) != 201 {
		t.Fatalf("ComposeLen(201) = %d bytes, %v", len(frame), err)
	}
	p, got := extractFrame(frame)
	if got.TpDst != 2 || got.VLANs[0].TCI != VLANCFI|9 || len(p.L3Data()) != 201-ethHeaderLen-vlanTagLen {
		t.Fatalf("padded frame %x extracts as %+v", frame, got)
	}
	l4 := p.L4Data()
	if packet.Fold(packet.ChecksumPartial(l4, packet.PseudoHeaderIPv4(got.NwSrc, got.NwDst, got.NwProto, len(l4)))) != 0 {
		t.Fatalf("bad TCP checksum in %x", frame)
	}
	if packet.Checksum(p.L3Data()[:ipv4MinHeaderLen]) != 0 {
		t.Fatalf("bad IPv4 checksum in %x", frame)
	}
}
