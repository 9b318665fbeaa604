package flow

import (
	"fmt"
	"net/netip"
	"strings"
)

// SyntaxError reports where ParseMatch failed.
type SyntaxError struct {
	Offset int    // byte offset of the offending token in the input
	Token  string // the input at Offset, up to the next delimiter
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("datapath flow: %s at offset %d (%q)", e.Msg, e.Offset, e.Token)
}

// TooLongError is an attribute whose netlink form would not fit in a
// nested attribute (more than 65531 bytes of sub-attributes), which Open
// vSwitch refuses with E2BIG. Rest is the input from the attribute on.
type TooLongError struct {
	Offset int
	Rest   string
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("datapath flow: attribute at offset %d too long for a netlink message", e.Offset)
}

// maxNested is the room for sub-attributes in one nested netlink
// attribute: its 16-bit length less its own header.
const maxNested = 65535 - 4

// tunnelAttrSize is the netlink size of a tunnel() sub-attribute as
// Open vSwitch encodes it (4-byte header, value padded to 4 bytes);
// flags are one empty attribute each.
var tunnelAttrSize = map[string]int{
	"tun_id": 12, "src": 8, "dst": 8, "ipv6_src": 20, "ipv6_dst": 20,
	"tos": 8, "ttl": 8, "tp_src": 8, "tp_dst": 8,
}

// ParseMatch parses the datapath flow text that Format (and Open vSwitch's
// dpctl/dump-flows, with or without -m) prints. Attributes and fields that
// are absent are wildcarded; a field without /mask is exact. Key bits are
// kept as written, also where the mask is zero, so that a line of
// dump-flows output prints back byte for byte.
//
// Attributes that the printed form implies are inferred: ipv4() without
// eth_type() gives a key Ethertype of 0x0800 with a zero mask, tcp() a key
// protocol of 6, encap() without vlan() a present VLAN tag. Combinations
// the format cannot print (an nd() on a key that is not a Neighbor
// Solicitation or Advertisement, tcp() in a later fragment, more than two
// VLAN headers, ...) are errors.
func ParseMatch(s string) (Match, error) {
	p := parser{s: s}
	if err := p.parse(); err != nil {
		return Match{}, err
	}
	return p.m, nil
}

type parser struct {
	s   string
	pos int
	m   Match

	seen  [numAttrs]int // 1 + offset of each attribute seen, 0 if absent
	depth [numAttrs]int // encap depth each attribute appeared at
	lv    [3]plevel

	implied    uint16 // Ethertype the L3/L4 attributes require
	impliedOff int
	implied2   uint16 // an alternative Ethertype (RARP, MPLS multicast)
}

// plevel is what one attribute list (top level or encap) said about L2.
type plevel struct {
	ethType, ethTypeMask uint16
	ethTypeOff           int // 1 + offset, 0 if absent
	tci, tciMask         uint16
	vlanOff              int // 1 + offset, 0 if absent
	encapOff             int // 1 + offset, 0 if absent
	n                    int // attributes in the list
}

func (p *parser) errAt(off int, format string, args ...any) error {
	end := off
	for end < len(p.s) && end-off < 32 && !strings.ContainsRune(",() \t\n", rune(p.s[end])) {
		end++
	}
	if end == off && end < len(p.s) {
		end++
	}
	return &SyntaxError{Offset: off, Token: p.s[off:end], Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) err(format string, args ...any) error { return p.errAt(p.pos, format, args...) }

func (p *parser) skipDelims() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ',', ' ', '\t', '\r', '\n':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) peek() byte {
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *parser) expect(c byte) error {
	if p.peek() != c {
		return p.err("expected %q", c)
	}
	p.pos++
	return nil
}

func isIdentChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func (p *parser) ident() string {
	start := p.pos
	for p.pos < len(p.s) && isIdentChar(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *parser) parse() error {
	p.skipDelims()
	if strings.HasPrefix(p.s[p.pos:], "ufid:") {
		for p.pos < len(p.s) && p.s[p.pos] != ',' && p.s[p.pos] != ' ' {
			p.pos++
		}
	}
	if err := p.list(0); err != nil {
		return err
	}
	return p.finish()
}

// list parses attributes at encap depth d up to the end (d == 0) or the
// closing parenthesis of the encap (consumed).
func (p *parser) list(d int) error {
	for {
		p.skipDelims()
		switch {
		case p.pos == len(p.s):
			if d > 0 {
				return p.err("unterminated encap()")
			}
			return nil
		case p.peek() == ')':
			if d == 0 {
				return p.err("unbalanced ')'")
			}
			p.pos++
			return nil
		}
		p.lv[d].n++
		if err := p.attr(d); err != nil {
			return err
		}
	}
}

// attrByName maps names to attributes; the list is short, so a scan of
// attrNames does (ct_tuple6's parse-only alias aside).
func attrByName(name string) (attrID, bool) {
	for i, n := range attrNames {
		if n == name {
			return attrID(i), true
		}
	}
	return 0, false
}

func (p *parser) attr(d int) error {
	start := p.pos
	name := p.ident()
	if name == "" {
		return p.err("expected an attribute name")
	}
	id, ok := attrByName(name)
	if !ok {
		return p.errAt(start, "unknown attribute %q", name)
	}
	if err := p.expect('('); err != nil {
		return err
	}
	lv := &p.lv[d]
	switch id {
	case attrEthType:
		if lv.ethTypeOff != 0 {
			return p.errAt(start, "duplicate eth_type")
		}
		lv.ethTypeOff = start + 1
		v, m, err := p.maskedUint(16)
		if err != nil {
			return err
		}
		lv.ethType, lv.ethTypeMask = uint16(v), uint16(m)
		return p.expect(')')
	case attrVLAN:
		if lv.vlanOff != 0 {
			return p.errAt(start, "duplicate vlan")
		}
		lv.vlanOff = start + 1
		return p.vlan(lv)
	case attrEncap:
		if lv.encapOff != 0 {
			return p.errAt(start, "duplicate encap")
		}
		if d == len(p.lv)-1 {
			return p.errAt(start, "more than two VLAN headers")
		}
		lv.encapOff = start + 1
		return p.list(d + 1)
	}
	if p.seen[id] != 0 {
		return p.errAt(start, "duplicate %s", name)
	}
	p.seen[id] = start + 1
	p.depth[id] = d
	if id <= attrEth && d != 0 {
		return p.errAt(start, "%s inside encap()", name)
	}
	k, m := &p.m.Key, &p.m.Mask
	switch id {
	case attrSkbPriority:
		return p.u32Attr(&k.SkbPriority, &m.SkbPriority)
	case attrSkbMark:
		return p.u32Attr(&k.PktMark, &m.PktMark)
	case attrRecircID:
		return p.u32Attr(&k.RecircID, &m.RecircID)
	case attrDPHash:
		return p.u32Attr(&k.DPHash, &m.DPHash)
	case attrCtMark:
		return p.u32Attr(&k.CtMark, &m.CtMark)
	case attrInPort:
		return p.u32Attr(&k.InPort, &m.InPort)
	case attrCtZone:
		if p.peek() == ')' { // ct_zone() prints for a zero mask in terse form
			p.pos++
			return nil
		}
		v, mk, err := p.maskedUint(16)
		if err != nil {
			return err
		}
		k.CtZone, m.CtZone = uint16(v), uint16(mk)
		return p.expect(')')
	case attrCtState:
		v, mk, err := p.flags(ctStateNames[:], 0xff)
		if err != nil {
			return err
		}
		k.CtState, m.CtState = uint8(v), uint8(mk)
		return p.expect(')')
	case attrCtLabel:
		if p.peek() != ')' {
			if err := p.u128(&k.CtLabel, &m.CtLabel); err != nil {
				return err
			}
		}
		return p.expect(')')
	case attrCtTuple4:
		p.imply(start, EthTypeIPv4, 0)
		return p.fields(func(f string) error {
			switch f {
			case "src":
				return p.ipv4(&k.CtNwSrc, &m.CtNwSrc)
			case "dst":
				return p.ipv4(&k.CtNwDst, &m.CtNwDst)
			case "proto":
				return p.u8(&k.CtNwProto, &m.CtNwProto)
			case "tp_src":
				return p.u16(&k.CtTpSrc, &m.CtTpSrc)
			case "tp_dst":
				return p.u16(&k.CtTpDst, &m.CtTpDst)
			}
			return errUnknownField
		})
	case attrCtTuple6:
		p.imply(start, EthTypeIPv6, 0)
		return p.fields(func(f string) error {
			switch f {
			case "src":
				return p.ipv6(&k.CtIPv6Src, &m.CtIPv6Src)
			case "dst":
				return p.ipv6(&k.CtIPv6Dst, &m.CtIPv6Dst)
			case "proto":
				return p.u8(&k.CtNwProto, &m.CtNwProto)
			case "src_port", "tp_src":
				return p.u16(&k.CtTpSrc, &m.CtTpSrc)
			case "dst_port", "tp_dst":
				return p.u16(&k.CtTpDst, &m.CtTpDst)
			}
			return errUnknownField
		})
	case attrTunnel:
		return p.tunnel()
	case attrPacketType:
		var ns, nsm, id, idm uint16
		err := p.fields(func(f string) error {
			switch f {
			case "ns":
				return p.u16(&ns, &nsm)
			case "id":
				return p.u16(&id, &idm)
			}
			return errUnknownField
		})
		k.PacketType, m.PacketType = uint32(ns)<<16|uint32(id), uint32(nsm)<<16|uint32(idm)
		return err
	case attrEth:
		return p.fields(func(f string) error {
			switch f {
			case "src":
				return p.mac(&k.EthSrc, &m.EthSrc)
			case "dst":
				return p.mac(&k.EthDst, &m.EthDst)
			}
			return errUnknownField
		})
	case attrMPLS:
		p.imply(start, EthTypeMPLS, EthTypeMPLSMcst)
		return p.mpls()
	case attrIPv4:
		p.imply(start, EthTypeIPv4, 0)
		return p.fields(func(f string) error {
			switch f {
			case "src":
				return p.ipv4(&k.NwSrc, &m.NwSrc)
			case "dst":
				return p.ipv4(&k.NwDst, &m.NwDst)
			case "proto":
				return p.u8(&k.NwProto, &m.NwProto)
			case "tos":
				return p.u8(&k.NwTos, &m.NwTos)
			case "ttl":
				return p.u8(&k.NwTTL, &m.NwTTL)
			case "frag":
				return p.frag()
			}
			return errUnknownField
		})
	case attrIPv6:
		p.imply(start, EthTypeIPv6, 0)
		return p.fields(func(f string) error {
			switch f {
			case "src":
				return p.ipv6(&k.IPv6Src, &m.IPv6Src)
			case "dst":
				return p.ipv6(&k.IPv6Dst, &m.IPv6Dst)
			case "label":
				off := p.pos
				v, err := p.uint(20)
				if err != nil {
					return p.errAt(off, "bad flow label (20 bits)")
				}
				mk := uint64(0xfffff)
				if p.peek() == '/' {
					p.pos++
					if mk, err = p.uint(20); err != nil {
						return err
					}
				}
				k.IPv6Label, m.IPv6Label = uint32(v), uint32(mk)
				return nil
			case "proto":
				return p.u8(&k.NwProto, &m.NwProto)
			case "tclass":
				return p.u8(&k.NwTos, &m.NwTos)
			case "hlimit":
				return p.u8(&k.NwTTL, &m.NwTTL)
			case "frag":
				return p.frag()
			}
			return errUnknownField
		})
	case attrARP:
		p.imply(start, EthTypeARP, EthTypeRARP)
		return p.fields(func(f string) error {
			switch f {
			case "sip":
				return p.ipv4(&k.NwSrc, &m.NwSrc)
			case "tip":
				return p.ipv4(&k.NwDst, &m.NwDst)
			case "op":
				off := p.pos
				v, mk, err := p.maskedUint(16)
				if err != nil {
					return err
				}
				if v > 0xff || (mk > 0xff && mk != 0xffff) {
					return p.errAt(off, "ARP opcode above 255")
				}
				k.NwProto, m.NwProto = uint8(v), uint8(mk)
				return nil
			case "sha":
				return p.mac(&k.ArpSha, &m.ArpSha)
			case "tha":
				return p.mac(&k.ArpTha, &m.ArpTha)
			}
			return errUnknownField
		})
	case attrTCP, attrUDP, attrSCTP:
		return p.fields(func(f string) error {
			switch f {
			case "src":
				return p.u16(&k.TpSrc, &m.TpSrc)
			case "dst":
				return p.u16(&k.TpDst, &m.TpDst)
			}
			return errUnknownField
		})
	case attrTCPFlags:
		v, mk, err := p.flags(tcpFlagNames[:], 0xfff)
		if err != nil {
			return err
		}
		k.TCPFlags, m.TCPFlags = uint16(v), uint16(mk)
		k.TCPFlags &= m.TCPFlags // +flag/-flag shows only matched bits
		if mk == 0 {
			// The attribute is present, so the key had flags, but "0/0"
			// does not say which: keep a marker outside the 12 flag bits
			// so that it prints back.
			k.TCPFlags = TCPFlagsUnknown
		}
		return p.expect(')')
	case attrICMP, attrICMPv6:
		if id == attrICMP {
			p.imply(start, EthTypeIPv4, 0)
		} else {
			p.imply(start, EthTypeIPv6, 0)
		}
		return p.fields(func(f string) error {
			var v, mk uint8
			var err error
			switch f {
			case "type":
				err = p.u8(&v, &mk)
				k.TpSrc, m.TpSrc = uint16(v), uint16(mk)
			case "code":
				err = p.u8(&v, &mk)
				k.TpDst, m.TpDst = uint16(v), uint16(mk)
			default:
				return errUnknownField
			}
			return err
		})
	case attrND:
		return p.fields(func(f string) error {
			switch f {
			case "target":
				return p.ipv6(&k.NDTarget, &m.NDTarget)
			case "sll":
				return p.mac(&k.ArpSha, &m.ArpSha)
			case "tll":
				return p.mac(&k.ArpTha, &m.ArpTha)
			}
			return errUnknownField
		})
	case attrNDExt:
		return p.fields(func(f string) error {
			switch f {
			case "nd_reserved":
				v, _, err := p.maskedUint(32)
				if err != nil {
					return err
				}
				k.NDReserved = uint32(v)
				return nil
			case "nd_options_type":
				return p.u8(&k.NDOptType, &m.NDOptType)
			}
			return errUnknownField
		})
	}
	return p.errAt(start, "unexpected attribute %q", name)
}

// imply records the Ethertype an attribute needs (alt is a second
// acceptable one).
func (p *parser) imply(off int, t, alt uint16) {
	if p.implied == 0 {
		p.implied, p.implied2, p.impliedOff = t, alt, off
		return
	}
	if p.implied != t {
		p.implied2 = 0xffff // conflict, reported by finish
		p.impliedOff = off
	}
}

var errUnknownField = fmt.Errorf("unknown field")

// fields parses name=value pairs up to and including ')'. fn parses one
// value (the parser is after '=' or, for a nested field, after '(').
func (p *parser) fields(fn func(name string) error) error {
	for {
		if p.peek() == ')' {
			p.pos++
			return nil
		}
		start := p.pos
		name := p.ident()
		if name == "" {
			return p.err("expected a field name")
		}
		switch {
		case p.peek() == '=',
			p.peek() == '(' && (name == "vxlan" || name == "geneve" || name == "flags"):
			p.pos++
		default:
			return p.err("expected '=' after %s", name)
		}
		if err := fn(name); err != nil {
			if err == errUnknownField {
				return p.errAt(start, "unknown field %q", name)
			}
			return err
		}
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
		default:
			return p.err("expected ',' or ')'")
		}
	}
}

func (p *parser) u32Attr(k, m *uint32) error {
	v, mk, err := p.maskedUint(32)
	if err != nil {
		return err
	}
	*k, *m = uint32(v), uint32(mk)
	return p.expect(')')
}

func (p *parser) u8(k, m *uint8) error {
	v, mk, err := p.maskedUint(8)
	*k, *m = uint8(v), uint8(mk)
	return err
}

func (p *parser) u16(k, m *uint16) error {
	v, mk, err := p.maskedUint(16)
	*k, *m = uint16(v), uint16(mk)
	return err
}

// uint parses an integer as C's %i does: 0x hex, leading-0 octal, or
// decimal; it must fit in bits.
func (p *parser) uint(bits int) (uint64, error) {
	start := p.pos
	base := uint64(10)
	if strings.HasPrefix(p.s[p.pos:], "0x") || strings.HasPrefix(p.s[p.pos:], "0X") {
		base = 16
		p.pos += 2
	} else if p.peek() == '0' && p.pos+1 < len(p.s) && p.s[p.pos+1] >= '0' && p.s[p.pos+1] <= '9' {
		base = 8
		p.pos++
	}
	digits := p.pos
	var v uint64
	for p.pos < len(p.s) {
		d := digitVal(p.s[p.pos])
		if d >= base {
			break
		}
		if v > (^uint64(0)-d)/base {
			return 0, p.errAt(start, "number out of range")
		}
		v = v*base + d
		p.pos++
	}
	if p.pos == digits {
		if base == 16 || p.pos == start {
			return 0, p.errAt(start, "expected a number")
		}
	}
	if bits < 64 && v>>bits != 0 {
		return 0, p.errAt(start, "number wider than %d bits", bits)
	}
	return v, nil
}

func digitVal(c byte) uint64 {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0')
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10
	}
	return 99
}

// maskedUint parses N or N/M; a missing mask is all ones.
func (p *parser) maskedUint(bits int) (v, m uint64, err error) {
	if v, err = p.uint(bits); err != nil {
		return 0, 0, err
	}
	if p.peek() != '/' {
		return v, ^uint64(0) >> (64 - bits), nil
	}
	p.pos++
	m, err = p.uint(bits)
	return v, m, err
}

func (p *parser) token(chars string) string {
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte(chars, p.s[p.pos]) >= 0 {
		p.pos++
	}
	return p.s[start:p.pos]
}

func (p *parser) ipv4Value() (uint32, error) {
	start := p.pos
	t := p.token("0123456789.")
	a, err := netip.ParseAddr(t)
	if err != nil || !a.Is4() {
		return 0, p.errAt(start, "bad IPv4 address")
	}
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), nil
}

func (p *parser) ipv4(k, m *uint32) error {
	v, err := p.ipv4Value()
	if err != nil {
		return err
	}
	*k, *m = v, 0xffffffff
	if p.peek() == '/' {
		p.pos++
		*m, err = p.ipv4Value()
	}
	return err
}

func (p *parser) ipv6Value() ([16]byte, error) {
	start := p.pos
	t := p.token("0123456789abcdefABCDEF:.")
	a, err := netip.ParseAddr(t)
	if err != nil || !a.Is6() {
		return [16]byte{}, p.errAt(start, "bad IPv6 address")
	}
	return a.As16(), nil
}

func (p *parser) ipv6(k, m *[16]byte) error {
	v, err := p.ipv6Value()
	if err != nil {
		return err
	}
	*k = v
	*m = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if p.peek() == '/' {
		p.pos++
		*m, err = p.ipv6Value()
	}
	return err
}

func (p *parser) macValue() ([6]byte, error) {
	start := p.pos
	var a [6]byte
	for i := range a {
		if i > 0 && p.expect(':') != nil {
			return a, p.errAt(start, "bad Ethernet address")
		}
		var v byte
		n := 0
		for n < 2 && p.pos < len(p.s) && digitVal(p.s[p.pos]) < 16 {
			v = v<<4 | byte(digitVal(p.s[p.pos]))
			p.pos++
			n++
		}
		if n == 0 {
			return a, p.errAt(start, "bad Ethernet address")
		}
		a[i] = v
	}
	return a, nil
}

func (p *parser) mac(k, m *[6]byte) error {
	v, err := p.macValue()
	if err != nil {
		return err
	}
	*k, *m = v, [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if p.peek() == '/' {
		p.pos++
		*m, err = p.macValue()
	}
	return err
}

// hexBytes parses a 0x-prefixed hex number (or a decimal one) into the
// big-endian byte string dst.
func (p *parser) hexBytes(dst []byte) error {
	start := p.pos
	clear(dst)
	if !strings.HasPrefix(p.s[p.pos:], "0x") && !strings.HasPrefix(p.s[p.pos:], "0X") {
		v, err := p.uint(64)
		if err != nil {
			return err
		}
		if len(dst) < 8 && v>>(8*len(dst)) != 0 {
			return p.errAt(start, "number too large")
		}
		for i := len(dst) - 1; i >= 0 && v != 0; i-- {
			dst[i] = byte(v)
			v >>= 8
		}
		return nil
	}
	p.pos += 2
	digits := p.token("0123456789abcdefABCDEF")
	if digits == "" {
		return p.errAt(start, "expected hex digits")
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 2*len(dst) {
		return p.errAt(start, "hex value longer than %d bytes", len(dst))
	}
	for i := 0; i < len(digits); i++ {
		d := byte(digitVal(digits[len(digits)-1-i]))
		dst[len(dst)-1-i/2] |= d << (4 * (i % 2))
	}
	return nil
}

func (p *parser) u128(k, m *[16]byte) error {
	if err := p.hexBytes(k[:]); err != nil {
		return err
	}
	if p.peek() != '/' {
		for i := range m {
			m[i] = 0xff
		}
		return nil
	}
	p.pos++
	return p.hexBytes(m[:])
}

// flags parses ct_state/tcp_flags values: "N/M", "+a-b", "a|b" or "0".
func (p *parser) flags(names []string, allowed uint32) (v, m uint32, err error) {
	start := p.pos
	c := p.peek()
	switch {
	case c >= '0' && c <= '9':
		save := p.pos
		v64, err := p.uint(32)
		if err == nil && p.peek() == '/' {
			p.pos++
			m64, err := p.uint(32)
			if err != nil {
				return 0, 0, err
			}
			if uint32(v64)&^allowed != 0 || uint32(m64)&^allowed != 0 {
				return 0, 0, p.errAt(start, "unknown flag bits")
			}
			return uint32(v64), uint32(m64), nil
		}
		p.pos = save
	case c == '+' || c == '-':
		for p.peek() == '+' || p.peek() == '-' {
			set := p.peek() == '+'
			p.pos++
			off := p.pos
			bit, ok := p.flagName(names)
			if !ok {
				return 0, 0, p.errAt(off, "unknown flag")
			}
			if m&bit != 0 {
				return 0, 0, p.errAt(off, "flag given twice")
			}
			m |= bit
			if set {
				v |= bit
			}
		}
		return v, m, nil
	case c == ')':
		// No flag named: none set, all matched (as Open vSwitch reads
		// "flags()").
		return 0, allowed, nil
	}
	for {
		off := p.pos
		if c := p.peek(); c >= '0' && c <= '9' {
			n, err := p.uint(32)
			if err != nil {
				return 0, 0, err
			}
			if uint32(n)&^allowed != 0 {
				return 0, 0, p.errAt(off, "unknown flag bits")
			}
			v |= uint32(n)
		} else {
			bit, ok := p.flagName(names)
			if !ok {
				return 0, 0, p.errAt(off, "unknown flag")
			}
			v |= bit
		}
		if p.peek() != '|' {
			return v, allowed, nil
		}
		p.pos++
	}
}

// flagName matches the longest flag name at the current position.
func (p *parser) flagName(names []string) (uint32, bool) {
	best := -1
	for i, n := range names {
		if strings.HasPrefix(p.s[p.pos:], n) && (best < 0 || len(n) > len(names[best])) {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	p.pos += len(names[best])
	return 1 << best, true
}

func (p *parser) frag() error {
	off := p.pos
	t := p.ident()
	k := &p.m.Key
	switch t {
	case "no":
		k.NwFrag = 0
	case "first":
		k.NwFrag = FragAny
	case "later":
		k.NwFrag = FragAny | FragLater
	default:
		return p.errAt(off, "frag must be no, first or later")
	}
	p.m.Mask.NwFrag = FragMask
	return nil
}

// vlan parses vid=, pcp= and cfi= into the TCI of level lv. The CFI bit
// (tag present) is set and matched unless cfi= says otherwise.
func (p *parser) vlan(lv *plevel) error {
	lv.tci, lv.tciMask = VLANCFI, VLANCFI
	return p.fields(func(f string) error {
		var bits, shift uint
		switch f {
		case "vid":
			bits, shift = 12, 0
		case "pcp":
			bits, shift = 3, 13
		case "cfi":
			bits, shift = 1, 12
		default:
			return errUnknownField
		}
		off := p.pos
		v, m, err := p.maskedUint(16)
		if err != nil {
			return err
		}
		full := uint64(1)<<bits - 1
		if v > full || (m > full && m != 0xffff) {
			return p.errAt(off, "%s wider than %d bits", f, bits)
		}
		m &= full
		field := uint16(full) << shift
		lv.tci = lv.tci&^field | uint16(v)<<shift
		lv.tciMask = lv.tciMask&^field | uint16(m)<<shift
		return nil
	})
}

func (p *parser) mpls() error {
	k, m := &p.m.Key, &p.m.Mask
	var seen uint
	return p.fields(func(f string) error {
		var bits, shift, idx uint
		switch f {
		case "label":
			bits, shift, idx = 20, mplsLabelShift, 0
		case "tc":
			bits, shift, idx = 3, mplsTCShift, 1
		case "ttl":
			bits, shift, idx = 8, 0, 2
		case "bos":
			bits, shift, idx = 1, mplsBOSShift, 3
		default:
			return errUnknownField
		}
		off := p.pos
		if seen&(1<<idx) != 0 {
			return p.errAt(off, "only one MPLS label stack entry is kept")
		}
		seen |= 1 << idx
		v, mk, err := p.maskedUint(32)
		if err != nil {
			return err
		}
		full := uint64(1)<<bits - 1
		if v > full || (mk > full && mk != 0xffffffff) {
			return p.errAt(off, "%s wider than %d bits", f, bits)
		}
		mk &= full
		field := uint32(full) << shift
		k.MPLSLSE = k.MPLSLSE&^field | uint32(v)<<shift
		m.MPLSLSE = m.MPLSLSE&^field | uint32(mk)<<shift
		return nil
	})
}

func (p *parser) tunnel() error {
	k, m := &p.m.Key, &p.m.Mask
	start := p.pos
	size := 0
	err := p.fields(func(f string) error {
		if size += tunnelAttrSize[f]; size > maxNested {
			attr := strings.LastIndex(p.s[:start], "tunnel(")
			if attr < 0 {
				attr = start
			}
			return &TooLongError{Offset: attr, Rest: p.s[attr:]}
		}
		switch f {
		case "tun_id":
			v, mk, err := p.maskedUint(64)
			k.TunID, m.TunID = v, mk
			k.TunFlags |= tunFlagKey
			m.TunFlags |= tunFlagKey
			return err
		case "src":
			return p.ipv4(&k.TunSrc, &m.TunSrc)
		case "dst":
			return p.ipv4(&k.TunDst, &m.TunDst)
		case "ipv6_src":
			return p.ipv6(&k.TunIPv6Src, &m.TunIPv6Src)
		case "ipv6_dst":
			return p.ipv6(&k.TunIPv6Dst, &m.TunIPv6Dst)
		case "tos":
			return p.u8(&k.TunTos, &m.TunTos)
		case "ttl":
			return p.u8(&k.TunTTL, &m.TunTTL)
		case "tp_src":
			return p.u16(&k.TunTpSrc, &m.TunTpSrc)
		case "tp_dst":
			return p.u16(&k.TunTpDst, &m.TunTpDst)
		case "vxlan":
			if !strings.HasPrefix(p.s[p.pos:], "gbp(") {
				return p.err("expected gbp(")
			}
			p.pos += 4
			if err := p.fields(func(f string) error {
				switch f {
				case "id":
					return p.u16(&k.TunGbpID, &m.TunGbpID)
				case "flags":
					return p.u8(&k.TunGbpFlags, &m.TunGbpFlags)
				}
				return errUnknownField
			}); err != nil {
				return err
			}
			return p.expect(')')
		case "geneve":
			return p.geneve()
		case "flags":
			return p.tunFlags()
		}
		return errUnknownField
	})
	if err != nil {
		return err
	}
	// A sub-attribute whose key value is zero is absent from a datapath
	// key, so its mask cannot be printed: drop it.
	if k.TunSrc == 0 {
		m.TunSrc = 0
	}
	if k.TunDst == 0 {
		m.TunDst = 0
	}
	if isZero(k.TunIPv6Src[:]) {
		m.TunIPv6Src = [16]byte{}
	}
	if isZero(k.TunIPv6Dst[:]) {
		m.TunIPv6Dst = [16]byte{}
	}
	if k.TunTos == 0 {
		m.TunTos = 0
	}
	if k.TunTpSrc == 0 {
		m.TunTpSrc = 0
	}
	if k.TunTpDst == 0 {
		m.TunTpDst = 0
	}
	if k.TunGbpID == 0 && k.TunGbpFlags == 0 {
		m.TunGbpID, m.TunGbpFlags = 0, 0
	}
	if k.TunSrc == 0 && k.TunDst == 0 && isZero(k.TunIPv6Src[:]) && isZero(k.TunIPv6Dst[:]) {
		return p.errAt(start, "tunnel() needs a non-zero src, dst, ipv6_src or ipv6_dst")
	}
	return nil
}

// tunFlags parses flags(...) inside tunnel(): df, csum and oam are kept;
// key follows tun_id's presence and is ignored here, as in Open vSwitch.
func (p *parser) tunFlags() error {
	names := make([]string, len(odpTunFlags))
	for i, f := range odpTunFlags {
		names[i] = f.name
	}
	v, mk, err := p.flags(names, 0xf)
	if err != nil {
		return err
	}
	k, m := &p.m.Key, &p.m.Mask
	for i, f := range odpTunFlags {
		if f.bit == tunFlagKey {
			continue
		}
		k.TunFlags &^= f.bit
		m.TunFlags &^= f.bit
		if v&(1<<i) != 0 {
			k.TunFlags |= f.bit
		}
		if mk&(1<<i) != 0 {
			m.TunFlags |= f.bit
		}
	}
	return p.expect(')')
}

// geneve parses {class=,type=,len=,DATA[/MASK]} options into TunMeta.
func (p *parser) geneve() error {
	k, m := &p.m.Key, &p.m.Mask
	n := 0
	for p.peek() == '{' {
		p.pos++
		if n+4 > len(k.TunMeta) {
			return p.err("Geneve options longer than %d bytes", len(k.TunMeta))
		}
		opt, mopt := k.TunMeta[n:], m.TunMeta[n:]
		mopt[0], mopt[1], mopt[2], mopt[3] = 0, 0, 0, 0 // absent fields are wildcarded
		dataLen := 0
		// An option is a field list with a trailing unnamed data value.
		for p.peek() != '}' {
			off := p.pos
			switch {
			case strings.HasPrefix(p.s[p.pos:], "class="):
				p.pos += 6
				var c, cm uint16
				if err := p.u16(&c, &cm); err != nil {
					return err
				}
				opt[0], opt[1], mopt[0], mopt[1] = byte(c>>8), byte(c), byte(cm>>8), byte(cm)
			case strings.HasPrefix(p.s[p.pos:], "type="):
				p.pos += 5
				if err := p.u8(&opt[2], &mopt[2]); err != nil {
					return err
				}
			case strings.HasPrefix(p.s[p.pos:], "len="):
				p.pos += 4
				var l, lm uint8
				if err := p.u8(&l, &lm); err != nil {
					return err
				}
				if l > 124 || l%4 != 0 || n+4+int(l) > len(k.TunMeta) {
					return p.errAt(off, "bad Geneve option length")
				}
				dataLen = int(l)
				opt[3] = l / 4
				mopt[3] = lm & 0x1f
				for i := 0; i < dataLen; i++ {
					mopt[4+i] = 0xff
				}
			default:
				if err := p.hexBytes(opt[4 : 4+dataLen]); err != nil {
					return err
				}
				if p.peek() == '/' {
					p.pos++
					if err := p.hexBytes(mopt[4 : 4+dataLen]); err != nil {
						return err
					}
				}
			}
			if p.peek() == ',' {
				p.pos++
			} else if p.peek() != '}' {
				return p.err("expected ',' or '}'")
			}
		}
		p.pos++
		n += 4 + dataLen
	}
	if err := p.expect(')'); err != nil {
		return err
	}
	k.TunFlags |= TunFlagUDPIF
	m.TunFlags |= TunFlagUDPIF
	k.TunMetaPresent, m.TunMetaPresent = uint64(n), 0xff
	return nil
}

// finish resolves the VLAN levels and the Ethertype and checks that the
// attributes fit together the way the format can print them.
func (p *parser) finish() error {
	k, m := &p.m.Key, &p.m.Mask
	if p.seen[attrPacketType] != 0 && k.PacketType != 0 {
		if p.seen[attrEth] != 0 {
			return p.errAt(p.seen[attrEth]-1, "eth() with a non-Ethernet packet_type")
		}
		if p.lv[0].vlanOff != 0 || p.lv[0].encapOff != 0 {
			return p.errAt(max(p.lv[0].vlanOff, p.lv[0].encapOff)-1, "VLAN with a non-Ethernet packet_type")
		}
	}
	d := 0
	for ; d < len(k.VLANs); d++ {
		lv := &p.lv[d]
		if lv.vlanOff == 0 && lv.encapOff == 0 {
			break
		}
		off := lv.vlanOff - 1
		if off < 0 {
			off = lv.encapOff - 1
		}
		if lv.ethTypeOff == 0 || !isVLANType(lv.ethType) || lv.ethTypeMask != 0xffff {
			return p.errAt(off, "a VLAN needs eth_type(0x8100) or eth_type(0x88a8) before it")
		}
		if lv.vlanOff == 0 { // the terse form leaves out a wildcarded vlan()
			lv.tci, lv.tciMask = VLANCFI, 0
		}
		if lv.tci == 0 {
			// A truncated tag: the TPID is the Ethertype, nothing inside.
			if p.lv[d+1].n != 0 {
				return p.errAt(off, "encap() of a truncated VLAN (TCI 0) must be empty")
			}
			m.VLANs[d].TCI = lv.tciMask
			k.EthType, m.EthType = lv.ethType, 0xffff
			return p.check(d)
		}
		if lv.encapOff == 0 {
			return p.errAt(off, "vlan() without encap()")
		}
		k.VLANs[d] = VLAN{TPID: lv.ethType, TCI: lv.tci}
		m.VLANs[d] = VLAN{TPID: 0xffff, TCI: lv.tciMask}
	}
	lv := &p.lv[d]
	switch {
	case lv.ethTypeOff == 0:
		if p.implied2 == 0xffff {
			return p.errAt(p.impliedOff, "attributes of different network protocols")
		}
		k.EthType = p.implied
		if k.EthType == 0 && (p.seen[attrTCP]|p.seen[attrUDP]|p.seen[attrSCTP]|p.seen[attrTCPFlags]) != 0 {
			// The terse form leaves out a wildcarded eth_type() and
			// ipv4(); either IP version prints the same, take IPv4.
			k.EthType = EthTypeIPv4
		}
	case lv.ethType < EthTypeMin:
		if lv.ethType != 0 {
			return p.errAt(lv.ethTypeOff-1, "eth_type below 0x0600 (use eth_type(0/0xffff) for 802.3)")
		}
		if p.implied != 0 {
			return p.errAt(p.impliedOff, "attribute does not fit an 802.3 frame")
		}
		if lv.ethTypeMask != 0 {
			k.EthType, m.EthType = EthTypeNone, lv.ethTypeMask
		}
	default:
		k.EthType, m.EthType = lv.ethType, lv.ethTypeMask
		if isVLANType(k.EthType) && d < len(k.VLANs) && k.PacketType == 0 {
			return p.errAt(lv.ethTypeOff-1, "eth_type(0x%04x) needs vlan() and encap()", k.EthType)
		}
		if p.implied != 0 && k.EthType != p.implied && k.EthType != p.implied2 {
			return p.errAt(p.impliedOff, "attribute does not fit eth_type(0x%04x)", k.EthType)
		}
	}
	return p.check(d)
}

// check validates L3/L4 against the resolved Ethertype; d is the depth
// that holds them.
func (p *parser) check(d int) error {
	k, m := &p.m.Key, &p.m.Mask
	for id := attrEthType; id < numAttrs; id++ {
		if p.seen[id] != 0 && p.depth[id] != d {
			return p.errAt(p.seen[id]-1, "%s outside the innermost encap()", attrNames[id])
		}
	}
	isIP := k.EthType == EthTypeIPv4 || k.EthType == EthTypeIPv6
	for _, c := range []struct {
		id    attrID
		proto uint8
	}{{attrTCP, IPProtoTCP}, {attrTCPFlags, IPProtoTCP}, {attrUDP, IPProtoUDP}, {attrSCTP, IPProtoSCTP}, {attrICMP, IPProtoICMP}, {attrICMPv6, IPProtoICMPv6}} {
		off := p.seen[c.id] - 1
		if off < 0 {
			continue
		}
		if !isIP {
			return p.errAt(off, "%s needs ipv4 or ipv6", attrNames[c.id])
		}
		if k.NwFrag&FragLater != 0 {
			return p.errAt(off, "%s in a later fragment", attrNames[c.id])
		}
		if k.NwProto != c.proto {
			if m.NwProto != 0 {
				return p.errAt(off, "%s does not fit proto=%d", attrNames[c.id], k.NwProto)
			}
			k.NwProto = c.proto
		}
	}
	for _, id := range []attrID{attrCtTuple4, attrCtTuple6} {
		if off := p.seen[id] - 1; off >= 0 && k.CtNwProto == 0 {
			if m.CtNwProto != 0 {
				return p.errAt(off, "%s needs a non-zero proto", attrNames[id])
			}
			// The terse form leaves out a wildcarded proto, but the key
			// had one: keep a placeholder so that the tuple prints back.
			k.CtNwProto = 0xff
		}
	}
	ndMask := m.TpSrc&0xff == 0xff && m.TpDst&0xff == 0xff
	if off := p.seen[attrND] - 1; off >= 0 {
		if !k.isND() || p.seen[attrICMPv6] == 0 {
			return p.errAt(off, "nd needs icmpv6(type=135 or 136,code=0)")
		}
		if !ndMask && !(isZero(m.NDTarget[:]) && isZero(m.ArpSha[:]) && isZero(m.ArpTha[:])) {
			return p.errAt(off, "nd fields need icmpv6 type and code matched exactly")
		}
	}
	if off := p.seen[attrNDExt] - 1; off >= 0 {
		if p.seen[attrND] == 0 {
			return p.errAt(off, "nd_ext without nd")
		}
		if k.NDReserved == 0 && k.NDOptType == 0 {
			m.NDReserved, m.NDOptType = 0, 0 // absent from a datapath key
		} else {
			if !ndMask {
				return p.errAt(off, "nd_ext needs icmpv6 type and code matched exactly")
			}
			m.NDReserved = 0xffffffff
		}
	}
	return nil
}
