package tnl

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/packet"
)

// AppendHeaderText appends h as Open vSwitch 3.1 prints it inside
// tnl_push (format_odp_tnl_push_header), for example
// header(size=50,type=5,eth(dst=f8:bc:12:44:34:b6,src=aa:55:aa:55:00:00,dl_type=0x0800),ipv4(src=1.1.2.88,dst=1.1.2.92,proto=17,tos=0,ttl=64,frag=0x4000),udp(src=0,dst=6081,csum=0x0),geneve(vni=0x7b)).
func AppendHeaderText(dst []byte, h *Header) []byte {
	b := h.Bytes()
	dst = append(dst, "header(size="...)
	dst = strconv.AppendUint(dst, uint64(h.Len), 10)
	dst = append(dst, ",type="...)
	dst = strconv.AppendUint(dst, uint64(h.Type), 10)
	if len(b) < ethLen {
		return append(dst, ')')
	}
	dst = append(dst, ",eth(dst="...)
	dst = appendMAC(dst, b[0:6])
	dst = append(dst, ",src="...)
	dst = appendMAC(dst, b[6:12])
	dst = append(dst, ",dl_type=0x"...)
	dst = appendHexPad(dst, uint64(binary.BigEndian.Uint16(b[12:])), 4)
	dst = append(dst, "),"...)
	l3 := b[ethLen:]
	var l4 []byte
	if binary.BigEndian.Uint16(b[12:]) == ethTypeIPv4 {
		if len(l3) < ipv4Len {
			return append(dst[:len(dst)-1], ')')
		}
		dst = append(dst, "ipv4(src="...)
		dst = appendIPv4(dst, l3[12:16])
		dst = append(dst, ",dst="...)
		dst = appendIPv4(dst, l3[16:20])
		dst = append(dst, ",proto="...)
		dst = strconv.AppendUint(dst, uint64(l3[9]), 10)
		dst = append(dst, ",tos="...)
		dst = appendAltHex(dst, uint64(l3[1]))
		dst = append(dst, ",ttl="...)
		dst = strconv.AppendUint(dst, uint64(l3[8]), 10)
		dst = append(dst, ",frag=0x"...)
		dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(l3[6:])), 16)
		dst = append(dst, "),"...)
		l4 = l3[ipv4Len:]
	} else {
		if len(l3) < ipv6Len {
			return append(dst[:len(dst)-1], ')')
		}
		flow := binary.BigEndian.Uint32(l3)
		dst = append(dst, "ipv6(src="...)
		dst = appendIPv6(dst, l3[8:24])
		dst = append(dst, ",dst="...)
		dst = appendIPv6(dst, l3[24:40])
		dst = append(dst, ",label="...)
		dst = strconv.AppendUint(dst, uint64(flow&0xfffff), 10)
		dst = append(dst, ",proto="...)
		dst = strconv.AppendUint(dst, uint64(l3[6]), 10)
		dst = append(dst, ",tclass=0x"...)
		dst = strconv.AppendUint(dst, uint64(flow>>20&0xff), 16)
		dst = append(dst, ",hlimit="...)
		dst = strconv.AppendUint(dst, uint64(l3[7]), 10)
		dst = append(dst, "),"...)
		l4 = l3[ipv6Len:]
	}
	if (h.Type == TypeVXLAN || h.Type == TypeGeneve) && len(l4) >= udpLen+8 {
		dst = append(dst, "udp(src="...)
		dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(l4[0:])), 10)
		dst = append(dst, ",dst="...)
		dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(l4[2:])), 10)
		dst = append(dst, ",csum=0x"...)
		dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(l4[6:])), 16)
		dst = append(dst, "),"...)
		th := l4[udpLen:]
		if h.Type == TypeVXLAN {
			dst = append(dst, "vxlan(flags=0x"...)
			dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(th)), 16)
			dst = append(dst, ",vni=0x"...)
			dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(th[4:])>>8), 16)
			dst = append(dst, ')')
		} else {
			dst = append(dst, "geneve("...)
			if th[1]&0x80 != 0 {
				dst = append(dst, "oam,"...)
			}
			if th[1]&0x40 != 0 {
				dst = append(dst, "crit,"...)
			}
			dst = append(dst, "vni=0x"...)
			dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(th[4:])>>8), 16)
			if n := int(th[0]&0x3f) * 4; n > 0 {
				dst = append(dst, ",options("...)
				dst = appendGeneveOpts(dst, th[geneveLen:min(geneveLen+n, len(th))], n)
				dst = append(dst, ')')
			}
			dst = append(dst, ')')
		}
	} else if h.Type.IsGRE() && len(l4) >= greBaseLen {
		dst = appendGREText(dst, l4)
	} else {
		dst = dst[:len(dst)-1] // a tunnel type this package does not print
	}
	return append(dst, ')')
}

// appendGREText prints a GRE header as Open vSwitch:
// gre((flags=0x2000,proto=0x6558),key=0x1c8), with csum= and seq= when
// their flags are set (and the header holds them).
func appendGREText(dst, g []byte) []byte {
	flags := binary.BigEndian.Uint16(g)
	dst = append(dst, "gre((flags=0x"...)
	dst = strconv.AppendUint(dst, uint64(flags), 16)
	dst = append(dst, ",proto=0x"...)
	dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(g[2:])), 16)
	dst = append(dst, ')')
	o := greBaseLen
	for _, f := range [3]struct {
		flag uint16
		name string
	}{{greCsum, ",csum=0x"}, {greKey, ",key=0x"}, {greSeq, ",seq=0x"}} {
		if flags&f.flag == 0 || len(g) < o+4 {
			continue
		}
		dst = append(dst, f.name...)
		if f.flag == greCsum {
			dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(g[o:])), 16)
		} else {
			dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint32(g[o:])), 16)
		}
		o += 4
	}
	return append(dst, ')')
}

// AppendGeneveOpts prints raw Geneve options as Open vSwitch does inside
// geneve(...): {class=0x..,type=..,len=..,DATA} each.
func AppendGeneveOpts(dst, opts []byte) []byte { return appendGeneveOpts(dst, opts, len(opts)) }

// appendGeneveOpts prints options as {class=0x..,type=..,len=..,DATA},
// or Open vSwitch's message for a malformed list. n is the option length
// the header claims; opts may be shorter when the header is truncated.
func appendGeneveOpts(dst, opts []byte, n int) []byte {
	rem := n
	for rem > 0 {
		if rem < 4 || len(opts) < 4 {
			dst = append(dst, "opt len "...)
			dst = strconv.AppendInt(dst, int64(rem), 10)
			return append(dst, " less than minimum 4"...)
		}
		dlen := int(opts[3]&0x1f) * 4
		if 4+dlen > rem || 4+dlen > len(opts) {
			dst = append(dst, "opt len "...)
			dst = strconv.AppendInt(dst, int64(4+dlen), 10)
			dst = append(dst, " greater than remaining "...)
			return strconv.AppendInt(dst, int64(rem), 10)
		}
		dst = append(dst, "{class=0x"...)
		dst = strconv.AppendUint(dst, uint64(binary.BigEndian.Uint16(opts)), 16)
		dst = append(dst, ",type="...)
		dst = appendAltHex(dst, uint64(opts[2]))
		dst = append(dst, ",len="...)
		dst = strconv.AppendUint(dst, uint64(dlen), 10)
		if dlen > 0 {
			dst = append(dst, ',')
			dst = appendHexBytes(dst, opts[4:4+dlen])
		}
		dst = append(dst, '}')
		opts = opts[4+dlen:]
		rem -= 4 + dlen
	}
	return dst
}

// appendAltHex prints C's "%#x": 0 as "0", others with a 0x prefix.
func appendAltHex(dst []byte, v uint64) []byte {
	if v == 0 {
		return append(dst, '0')
	}
	dst = append(dst, "0x"...)
	return strconv.AppendUint(dst, v, 16)
}

func appendHexPad(dst []byte, v uint64, width int) []byte {
	s := strconv.FormatUint(v, 16)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendHexBytes prints bytes as one hex number without leading zero
// bytes (Open vSwitch's ds_put_hex): 0000000a is "0xa", all zero is "0".
func appendHexBytes(dst, v []byte) []byte {
	const digits = "0123456789abcdef"
	printed := false
	for _, c := range v {
		switch {
		case printed:
			dst = append(dst, digits[c>>4], digits[c&0xf])
		case c != 0:
			dst = append(dst, "0x"...)
			if c >= 0x10 {
				dst = append(dst, digits[c>>4])
			}
			dst = append(dst, digits[c&0xf])
			printed = true
		}
	}
	if !printed {
		dst = append(dst, '0')
	}
	return dst
}

func appendMAC(dst, a []byte) []byte {
	const digits = "0123456789abcdef"
	for i, c := range a[:6] {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, digits[c>>4], digits[c&0xf])
	}
	return dst
}

func appendIPv4(dst, a []byte) []byte {
	return netip.AddrFrom4([4]byte(a[:4])).AppendTo(dst)
}

// appendIPv6 prints like glibc's inet_ntop, which writes an address whose
// first 96 bits are zero (other than :: and ::1-style) with a dotted IPv4
// tail, as Go does not.
func appendIPv6(dst, a []byte) []byte {
	if isZero(a[:12]) && (a[12] != 0 || a[13] != 0) {
		dst = append(dst, "::"...)
		return appendIPv4(dst, a[12:16])
	}
	return netip.AddrFrom16([16]byte(a[:16])).AppendTo(dst)
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// HeaderError reports where ParseHeader failed.
type HeaderError struct {
	Offset int // byte offset in the text given to ParseHeader
	Msg    string
}

func (e *HeaderError) Error() string {
	return fmt.Sprintf("tnl: parse header: %s (offset %d)", e.Msg, e.Offset)
}

// ParseHeader parses the header(...) text AppendHeaderText prints (and
// Open vSwitch's ovs_parse_tnl_push reads) at the start of s and returns
// the header and the number of bytes consumed, up to and including the
// closing parenthesis. Numbers Open vSwitch scans with %i accept decimal,
// 0x hexadecimal and 0 octal. As in Open vSwitch, size= and type= must
// agree with what the rest describes; the IPv4 checksum is computed.
func ParseHeader(s string) (Header, int, error) {
	sc := &scanner{s: s}
	h, err := sc.header()
	if err != nil {
		return Header{}, 0, err
	}
	return h, sc.pos, nil
}

type scanner struct {
	s   string
	pos int
}

func (sc *scanner) fail(msg string) error { return &HeaderError{Offset: sc.pos, Msg: msg} }

func (sc *scanner) lit(l string) error {
	if !strings.HasPrefix(sc.s[sc.pos:], l) {
		return sc.fail(fmt.Sprintf("expected %q", l))
	}
	sc.pos += len(l)
	return nil
}

func (sc *scanner) try(l string) bool {
	if strings.HasPrefix(sc.s[sc.pos:], l) {
		sc.pos += len(l)
		return true
	}
	return false
}

// token returns the text up to the next ',' or ')'.
func (sc *scanner) token() string {
	start := sc.pos
	for sc.pos < len(sc.s) && sc.s[sc.pos] != ',' && sc.s[sc.pos] != ')' {
		sc.pos++
	}
	return sc.s[start:sc.pos]
}

// num scans C's %i: optional 0x (hex) or leading 0 (octal), else decimal.
func (sc *scanner) num(bits int) (uint64, error) {
	start := sc.pos
	base, digits := 10, sc.pos
	switch {
	case sc.try("0x") || sc.try("0X"):
		base, digits = 16, sc.pos
	case strings.HasPrefix(sc.s[sc.pos:], "0"):
		base = 8
	}
	for sc.pos < len(sc.s) && isDigit(sc.s[sc.pos], base) {
		sc.pos++
	}
	v, err := strconv.ParseUint(sc.s[digits:sc.pos], base, bits)
	if err != nil {
		sc.pos = start
		return 0, sc.fail("bad number")
	}
	return v, nil
}

// hex scans "0x" and a hexadecimal number (C's 0x%x).
func (sc *scanner) hex(bits int) (uint64, error) {
	if err := sc.lit("0x"); err != nil {
		return 0, err
	}
	start := sc.pos
	for sc.pos < len(sc.s) && isDigit(sc.s[sc.pos], 16) {
		sc.pos++
	}
	v, err := strconv.ParseUint(sc.s[start:sc.pos], 16, bits)
	if err != nil {
		sc.pos = start
		return 0, sc.fail("bad hexadecimal number")
	}
	return v, nil
}

func isDigit(c byte, base int) bool {
	switch base {
	case 8:
		return c >= '0' && c <= '7'
	case 16:
		return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
	}
	return c >= '0' && c <= '9'
}

func (sc *scanner) field(name string, bits int, hex bool) (uint64, error) {
	if err := sc.lit(name + "="); err != nil {
		return 0, err
	}
	if hex {
		return sc.hex(bits)
	}
	return sc.num(bits)
}

func (sc *scanner) mac(dst []byte) error {
	start := sc.pos
	tok := sc.token()
	var m [6]byte
	if len(tok) != 17 {
		sc.pos = start
		return sc.fail("bad Ethernet address")
	}
	for i := range m {
		v, err := strconv.ParseUint(tok[3*i:3*i+2], 16, 8)
		if err != nil || i < 5 && tok[3*i+2] != ':' {
			sc.pos = start
			return sc.fail("bad Ethernet address")
		}
		m[i] = byte(v)
	}
	copy(dst, m[:])
	return nil
}

func (sc *scanner) addr(v6 bool) (netip.Addr, error) {
	start := sc.pos
	a, err := netip.ParseAddr(sc.token())
	if err != nil || a.Is6() != v6 || a.Zone() != "" {
		sc.pos = start
		return netip.Addr{}, sc.fail("bad IP address")
	}
	return a, nil
}

func (sc *scanner) header() (Header, error) {
	var h Header
	b := h.Data[:]
	if err := sc.lit("header("); err != nil {
		return h, err
	}
	size, err := sc.field("size", 32, false)
	if err != nil {
		return h, err
	}
	if err := sc.lit(","); err != nil {
		return h, err
	}
	typ, err := sc.field("type", 32, false)
	if err != nil {
		return h, err
	}
	if err := sc.lit(",eth(dst="); err != nil {
		return h, err
	}
	if err := sc.mac(b[0:6]); err != nil {
		return h, err
	}
	if err := sc.lit(",src="); err != nil {
		return h, err
	}
	if err := sc.mac(b[6:12]); err != nil {
		return h, err
	}
	if err := sc.lit(","); err != nil {
		return h, err
	}
	dlType, err := sc.field("dl_type", 16, true)
	if err != nil {
		return h, err
	}
	binary.BigEndian.PutUint16(b[12:], uint16(dlType))
	if err := sc.lit("),"); err != nil {
		return h, err
	}
	n := ethLen
	if dlType == ethTypeIPv4 {
		if err := sc.ipv4(b[n : n+ipv4Len]); err != nil {
			return h, err
		}
		n += ipv4Len
	} else {
		if err := sc.ipv6(b[n : n+ipv6Len]); err != nil {
			return h, err
		}
		n += ipv6Len
	}
	if sc.try("gre((") {
		return sc.gre(&h, n, size, typ)
	}
	udp := b[n : n+udpLen]
	if err := sc.lit("udp("); err != nil {
		return h, sc.fail("only UDP (vxlan, geneve) and GRE tunnels are supported")
	}
	for i, name := range [3]string{"src", "dst", "csum"} {
		if i > 0 {
			if err := sc.lit(","); err != nil {
				return h, err
			}
		}
		v, err := sc.field(name, 16, name == "csum")
		if err != nil {
			return h, err
		}
		binary.BigEndian.PutUint16(udp[[3]int{0, 2, 6}[i]:], uint16(v))
	}
	if err := sc.lit("),"); err != nil {
		return h, err
	}
	n += udpLen
	var want Type
	switch {
	case sc.try("vxlan("):
		flags, err := sc.field("flags", 32, true)
		if err != nil {
			return h, err
		}
		if err := sc.lit(","); err != nil {
			return h, err
		}
		vni, err := sc.field("vni", 32, true)
		if err != nil {
			return h, err
		}
		binary.BigEndian.PutUint32(b[n:], uint32(flags))
		binary.BigEndian.PutUint32(b[n+4:], uint32(vni)<<8)
		n += vxlanLen
		want = TypeVXLAN
	case sc.try("geneve("):
		g := b[n : n+geneveLen]
		if sc.try("oam,") {
			g[1] |= 0x80
		}
		if sc.try("crit,") {
			g[1] |= 0x40
		}
		vni, err := sc.field("vni", 32, false)
		if err != nil {
			return h, err
		}
		binary.BigEndian.PutUint16(g[2:], ethTypeTEB)
		binary.BigEndian.PutUint32(g[4:], uint32(vni)<<8)
		n += geneveLen
		if sc.try(",options(") {
			olen, err := sc.geneveOpts(b[n:])
			if err != nil {
				return h, err
			}
			g[0] = byte(olen / 4)
			n += olen
			if err := sc.lit(")"); err != nil {
				return h, err
			}
		}
		want = TypeGeneve
	default:
		return h, sc.fail("only UDP (vxlan, geneve) and GRE tunnels are supported")
	}
	if err := sc.lit("))"); err != nil {
		return h, err
	}
	return h, finishHeader(&h, want, n, size, typ)
}

// finishHeader checks the size= and type= of a parsed header against
// what its text described and sets them.
func finishHeader(h *Header, want Type, n int, size, typ uint64) error {
	if typ != uint64(want) {
		return &HeaderError{Offset: 0, Msg: fmt.Sprintf("type=%d does not match the tunnel header (%d)", typ, want)}
	}
	if size != uint64(n) {
		return &HeaderError{Offset: 0, Msg: fmt.Sprintf("size=%d does not match the header length %d", size, n)}
	}
	h.Type, h.Len = want, uint16(n)
	return nil
}

// gre parses what follows "gre((" at offset n of h's data:
// flags=0x..,proto=0x..) then csum=, key= and seq= (each 0x hex) for the
// flags set, as Open vSwitch's ovs_parse_tnl_push. The type is
// TypeIP6GRE after an IPv6 header, else TypeGRE.
func (sc *scanner) gre(h *Header, n int, size, typ uint64) (Header, error) {
	g := h.Data[n:]
	flags, err := sc.field("flags", 16, true)
	if err != nil {
		return *h, err
	}
	if err := sc.lit(","); err != nil {
		return *h, err
	}
	proto, err := sc.field("proto", 16, true)
	if err != nil {
		return *h, err
	}
	if err := sc.lit(")"); err != nil {
		return *h, err
	}
	binary.BigEndian.PutUint16(g[0:], uint16(flags))
	binary.BigEndian.PutUint16(g[2:], uint16(proto))
	o := greBaseLen
	if flags&greCsum != 0 {
		v, err := sc.commaField("csum", 16)
		if err != nil {
			return *h, err
		}
		binary.BigEndian.PutUint16(g[o:], uint16(v))
		o += 4
	}
	for _, f := range [2]struct {
		flag uint64
		name string
	}{{greKey, "key"}, {greSeq, "seq"}} {
		if flags&f.flag == 0 {
			continue
		}
		v, err := sc.commaField(f.name, 32)
		if err != nil {
			return *h, err
		}
		binary.BigEndian.PutUint32(g[o:], uint32(v))
		o += 4
	}
	if err := sc.lit("))"); err != nil {
		return *h, err
	}
	want := TypeGRE
	if binary.BigEndian.Uint16(h.Data[12:]) != ethTypeIPv4 {
		want = TypeIP6GRE
	}
	if err := finishHeader(h, want, n+o, size, typ); err != nil {
		return Header{}, err
	}
	return *h, nil
}

// commaField scans ",name=0xHEX".
func (sc *scanner) commaField(name string, bits int) (uint64, error) {
	if err := sc.lit(","); err != nil {
		return 0, err
	}
	return sc.field(name, bits, true)
}

func (sc *scanner) ipv4(ip []byte) error {
	if err := sc.lit("ipv4(src="); err != nil {
		return err
	}
	src, err := sc.addr(false)
	if err != nil {
		return err
	}
	if err := sc.lit(",dst="); err != nil {
		return err
	}
	dst, err := sc.addr(false)
	if err != nil {
		return err
	}
	var v [4]uint64
	for i, name := range [4]string{"proto", "tos", "ttl", "frag"} {
		if err := sc.lit(","); err != nil {
			return err
		}
		bits := 8
		if name == "frag" {
			bits = 16
		}
		if v[i], err = sc.field(name, bits, name == "frag"); err != nil {
			return err
		}
	}
	if err := sc.lit("),"); err != nil {
		return err
	}
	ip[0] = 0x45
	ip[1] = byte(v[1])
	binary.BigEndian.PutUint16(ip[6:], uint16(v[3]))
	ip[8] = byte(v[2])
	ip[9] = byte(v[0])
	s4, d4 := src.As4(), dst.As4()
	copy(ip[12:], s4[:])
	copy(ip[16:], d4[:])
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:ipv4Len]))
	return nil
}

func (sc *scanner) ipv6(ip []byte) error {
	if err := sc.lit("ipv6(src="); err != nil {
		return err
	}
	src, err := sc.addr(true)
	if err != nil {
		return err
	}
	if err := sc.lit(",dst="); err != nil {
		return err
	}
	dst, err := sc.addr(true)
	if err != nil {
		return err
	}
	var v [4]uint64
	for i, name := range [4]string{"label", "proto", "tclass", "hlimit"} {
		if err := sc.lit(","); err != nil {
			return err
		}
		bits := 8
		if name == "label" {
			bits = 20
		}
		if v[i], err = sc.field(name, bits, name == "tclass"); err != nil {
			return err
		}
	}
	if err := sc.lit("),"); err != nil {
		return err
	}
	binary.BigEndian.PutUint32(ip, 6<<28|uint32(v[2])<<20|uint32(v[0]))
	ip[6] = byte(v[1])
	ip[7] = byte(v[3])
	s6, d6 := src.As16(), dst.As16()
	copy(ip[8:], s6[:])
	copy(ip[24:], d6[:])
	return nil
}

// geneveOpts parses {class=C,type=T,len=L,DATA} options into dst and
// returns their length. DATA is a hexadecimal number right-aligned in L
// bytes, as Open vSwitch's scan_geneve reads it.
func (sc *scanner) geneveOpts(dst []byte) (int, error) {
	n := 0
	for sc.try("{") {
		if n+4 > MaxGeneveOpts {
			return 0, sc.fail("Geneve options too long")
		}
		opt := dst[n:]
		class, err := sc.field("class", 16, false)
		if err != nil {
			return 0, err
		}
		binary.BigEndian.PutUint16(opt, uint16(class))
		if err := sc.lit(","); err != nil {
			return 0, err
		}
		typ, err := sc.field("type", 8, false)
		if err != nil {
			return 0, err
		}
		opt[2] = byte(typ)
		if err := sc.lit(","); err != nil {
			return 0, err
		}
		l, err := sc.field("len", 8, false)
		if err != nil {
			return 0, err
		}
		if l > 124 || l%4 != 0 || n+4+int(l) > MaxGeneveOpts {
			return 0, sc.fail("bad Geneve option length")
		}
		opt[3] = byte(l / 4)
		if l > 0 {
			if err := sc.lit(","); err != nil {
				return 0, err
			}
			if err := sc.hexData(opt[4 : 4+l]); err != nil {
				return 0, err
			}
		}
		if err := sc.lit("}"); err != nil {
			return 0, err
		}
		n += 4 + int(l)
	}
	return n, nil
}

// hexData parses 0xHEX (or 0) right-aligned into dst.
func (sc *scanner) hexData(dst []byte) error {
	start := sc.pos
	tok := sc.token()
	if i := strings.IndexByte(tok, '}'); i >= 0 {
		sc.pos = start + i
		tok = tok[:i]
	}
	digits, ok := strings.CutPrefix(tok, "0x")
	if !ok {
		digits = tok
	}
	if digits == "" || len(digits) > 2*len(dst) {
		sc.pos = start
		return sc.fail("bad Geneve option data")
	}
	clear(dst)
	for i := 0; i < len(digits); i++ {
		c := digits[len(digits)-1-i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			v = c | 0x20 - 'a' + 10
		default:
			sc.pos = start
			return sc.fail("bad Geneve option data")
		}
		dst[len(dst)-1-i/2] |= v << (4 * (i % 2))
	}
	return nil
}
