package tnl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Type is a tunnel vport type, numbered as Open vSwitch's
// OVS_VPORT_TYPE_* (the type= of tnl_push's header text).
type Type uint8

// Tunnel types this package builds, pushes and pops.
const (
	TypeGRE    Type = 3
	TypeVXLAN  Type = 4
	TypeGeneve Type = 5
	// TypeIP6GRE is GRE over IPv6. Build picks TypeGRE or TypeIP6GRE
	// from the outer address family, as Open vSwitch does whatever the
	// port's type, and Pop takes either for both families.
	TypeIP6GRE Type = 109
)

func (t Type) String() string {
	if i := t.Info(); i.Name != "" {
		return i.Name
	}
	return fmt.Sprintf("type%d", uint8(t))
}

// IsGRE reports whether t is a GRE tunnel type (over IPv4 or IPv6).
func (t Type) IsGRE() bool { return t == TypeGRE || t == TypeIP6GRE }

// Well-known UDP destination ports (IANA), the defaults of the
// Interface table's options:dst_port.
const (
	PortVXLAN  = 4789
	PortGeneve = 6081
)

// Header sizes and limits.
const (
	ethLen      = 14
	ipv4Len     = 20
	ipv6Len     = 40
	udpLen      = 8
	vxlanLen    = 8
	geneveLen   = 8
	ethTypeIPv4 = 0x0800
	ethTypeIPv6 = 0x86dd
	ethTypeTEB  = 0x6558 // transparent Ethernet bridging: Geneve's payload
	ipProtoUDP  = 17
	ipProtoGRE  = 47
	ipv4DF      = 0x4000

	// GRE (RFC 2890): the base header is flags and protocol; each of
	// the checksum (with 16 reserved bits), key and sequence number
	// present adds 4 bytes, in that order.
	greBaseLen = 4
	greCsum    = 0x8000
	greKey     = 0x2000
	greSeq     = 0x1000

	// vxlanFlags is the VXLAN I flag: a valid VNI follows.
	vxlanFlags = 0x08000000
	// VXLAN-GPE flag bits: P (next protocol present), O (OAM), the
	// version and the next-protocol byte.
	vxlanGPE         = 0x04000000
	vxlanGPEOAM      = 0x01000000
	vxlanGPEUsed     = 0x30000000 | vxlanGPE | vxlanGPEOAM | 0xff
	vxlanGPEEthernet = 3

	// MaxGeneveOpts is the most option bytes a Geneve header can carry
	// (a 6-bit length in 4-byte words).
	MaxGeneveOpts = 63 * 4
	// MaxLen is the longest header Build makes: Ethernet, IPv6, UDP,
	// Geneve and the most options.
	MaxLen = ethLen + ipv6Len + udpLen + geneveLen + MaxGeneveOpts
)

// Params describe the outer header of a tunnel, as Open vSwitch's
// netdev_tnl_build_header_params with the flow's tunnel key.
type Params struct {
	Type           Type
	EthDst, EthSrc [6]byte
	// Src and Dst are the outer IP endpoints: both IPv4 or both IPv6
	// (IPv4-mapped IPv6 addresses count as IPv4).
	Src, Dst netip.Addr
	// Tos is the IPv4 TOS or IPv6 traffic class; TTL the TTL or hop limit.
	Tos, TTL uint8
	// DontFragment sets the IPv4 DF bit (ignored for IPv6).
	DontFragment bool
	// UDPDst is the destination port (PortGeneve, PortVXLAN by default
	// when 0).
	UDPDst uint16
	// Csum asks for a UDP checksum, or GRE's. IPv6 UDP tunnels always
	// carry one, as in Open vSwitch.
	Csum bool
	// VNI is the 24-bit virtual network identifier (tun_id).
	VNI uint32
	// OAM sets the Geneve O bit. Critical sets the C bit; it is also set
	// when any option has the critical type bit (0x80), as Open vSwitch
	// does.
	OAM, Critical bool
	// GeneveOpts are raw Geneve option TLVs as on the wire (a multiple
	// of 4 bytes, at most MaxGeneveOpts).
	GeneveOpts []byte
	// GREKey is the 32-bit GRE key (the low bits of tun_id), sent when
	// GREKeyPresent (the port's out_key is set). GRESeq adds a sequence
	// number, filled by PushSeq. Csum adds the GRE checksum.
	GREKey        uint32
	GREKeyPresent bool
	GRESeq        bool
}

// Header is a prebuilt outer header of tnl_push: Ethernet, IPv4 or IPv6,
// UDP and the tunnel header, as bytes with the per-packet fields (IP
// length, UDP source port and length, UDP checksum) still to fill. It is a
// value; compare Headers with ==.
type Header struct {
	Type Type
	Len  uint16
	Data [MaxLen]byte
}

// Bytes returns the header bytes.
func (h *Header) Bytes() []byte { return h.Data[:min(int(h.Len), MaxLen)] }

// IPv6 reports whether the outer IP header is IPv6.
func (h *Header) IPv6() bool {
	return h.Len >= ethLen && binary.BigEndian.Uint16(h.Data[12:]) == ethTypeIPv6
}

// ipLen returns the outer IP header's length.
func (h *Header) ipLen() int {
	if h.IPv6() {
		return ipv6Len
	}
	return ipv4Len
}

// HasSeq reports whether h is a GRE header with a sequence number, which
// PushSeq fills.
func (h *Header) HasSeq() bool {
	g := h.greHeader()
	return g != nil && binary.BigEndian.Uint16(g)&greSeq != 0
}

// greHeader returns the GRE header of a GRE tunnel header (nil for other
// types or a header too short for its flags).
func (h *Header) greHeader() []byte {
	if !h.Type.IsGRE() {
		return nil
	}
	b := h.Bytes()
	off := ethLen + h.ipLen()
	if len(b) < off+greBaseLen {
		return nil
	}
	g := b[off:]
	if len(g) < greHeaderLen(binary.BigEndian.Uint16(g)) {
		return nil
	}
	return g
}

// errors returned by Build.
var (
	errAddrs    = errors.New("tnl: source and destination must be both IPv4 or both IPv6")
	errType     = errors.New("tnl: unsupported tunnel type")
	errVNI      = errors.New("tnl: VNI above 24 bits")
	errOptsLen  = errors.New("tnl: Geneve options not a multiple of 4 bytes or longer than 252")
	errOptsTLVs = errors.New("tnl: Geneve options do not parse as TLVs")
)

// Build returns the tnl_push header for p, laid out byte for byte as Open
// vSwitch's netdev_{vxlan,geneve,gre}_build_header: IPv4 id 0, total
// length 0 with the header checksum computed for it, DF when asked; IPv6
// flow label 0; UDP source port, length 0; UDP checksum 0xffff ("compute
// at push time") when p.Csum or IPv6, else 0; GRE checksum and sequence
// number 0 (filled at push time). A GRE header's type is TypeIP6GRE over
// IPv6 and TypeGRE over IPv4, whichever of the two p.Type is.
func Build(p *Params) (Header, error) {
	var h Header
	src, dst := p.Src.Unmap(), p.Dst.Unmap()
	v6 := src.Is6()
	if !src.IsValid() || !dst.IsValid() || src.Is4() != dst.Is4() {
		return h, errAddrs
	}
	switch p.Type {
	case TypeVXLAN, TypeGeneve:
		if p.VNI >= 1<<24 {
			return h, errVNI
		}
	case TypeGRE, TypeIP6GRE:
		return buildGRE(p, src, dst)
	default:
		return h, fmt.Errorf("%w %d", errType, p.Type)
	}
	if p.Type == TypeGeneve {
		if err := checkOpts(p.GeneveOpts); err != nil {
			return h, err
		}
	}
	h.Type = p.Type
	b := h.Data[:]
	n := buildEthIP(b, p, src, dst, ipProtoUDP)
	udp := b[n : n+udpLen]
	dport := p.UDPDst
	if dport == 0 {
		dport = PortVXLAN
		if p.Type == TypeGeneve {
			dport = PortGeneve
		}
	}
	binary.BigEndian.PutUint16(udp[2:], dport)
	if v6 || p.Csum {
		// A non-zero placeholder marks "compute at push time"; 0xffff
		// adds nothing to a ones' complement sum.
		binary.BigEndian.PutUint16(udp[6:], 0xffff)
	}
	n += udpLen
	switch p.Type {
	case TypeVXLAN:
		binary.BigEndian.PutUint32(b[n:], vxlanFlags)
		binary.BigEndian.PutUint32(b[n+4:], p.VNI<<8)
		n += vxlanLen
	case TypeGeneve:
		g := b[n : n+geneveLen]
		g[0] = byte(len(p.GeneveOpts) / 4) // version 0
		crit := p.Critical || optsCritical(p.GeneveOpts)
		if p.OAM {
			g[1] |= 0x80
		}
		if crit {
			g[1] |= 0x40
		}
		binary.BigEndian.PutUint16(g[2:], ethTypeTEB)
		binary.BigEndian.PutUint32(g[4:], p.VNI<<8)
		n += geneveLen
		n += copy(b[n:], p.GeneveOpts)
	}
	h.Len = uint16(n)
	return h, nil
}

// buildEthIP writes the Ethernet and IP headers of p into b and returns
// their length.
func buildEthIP(b []byte, p *Params, src, dst netip.Addr, proto uint8) int {
	copy(b[0:6], p.EthDst[:])
	copy(b[6:12], p.EthSrc[:])
	n := ethLen
	if src.Is6() {
		binary.BigEndian.PutUint16(b[12:], ethTypeIPv6)
		ip := b[n : n+ipv6Len]
		binary.BigEndian.PutUint32(ip, 6<<28|uint32(p.Tos)<<20)
		ip[6] = proto
		ip[7] = p.TTL
		s, d := src.As16(), dst.As16()
		copy(ip[8:24], s[:])
		copy(ip[24:40], d[:])
		return n + ipv6Len
	}
	binary.BigEndian.PutUint16(b[12:], ethTypeIPv4)
	ip := b[n : n+ipv4Len]
	ip[0] = 0x45
	ip[1] = p.Tos
	if p.DontFragment {
		binary.BigEndian.PutUint16(ip[6:], ipv4DF)
	}
	ip[8] = p.TTL
	ip[9] = proto
	s, d := src.As4(), dst.As4()
	copy(ip[12:16], s[:])
	copy(ip[16:20], d[:])
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip))
	return n + ipv4Len
}

// buildGRE is Build for GRE: the Ethernet payload protocol (0x6558) and,
// in order, a zero checksum word (Csum), the key (GREKeyPresent) and a
// zero sequence number (GRESeq).
func buildGRE(p *Params, src, dst netip.Addr) (Header, error) {
	var h Header
	h.Type = TypeGRE
	if src.Is6() {
		h.Type = TypeIP6GRE
	}
	b := h.Data[:]
	n := buildEthIP(b, p, src, dst, ipProtoGRE)
	g := b[n:]
	var flags uint16
	o := greBaseLen
	if p.Csum {
		flags |= greCsum
		o += 4
	}
	if p.GREKeyPresent {
		flags |= greKey
		binary.BigEndian.PutUint32(g[o:], p.GREKey)
		o += 4
	}
	if p.GRESeq {
		flags |= greSeq
		o += 4
	}
	binary.BigEndian.PutUint16(g[0:], flags)
	binary.BigEndian.PutUint16(g[2:], ethTypeTEB)
	h.Len = uint16(n + o)
	return h, nil
}

// greHeaderLen is the length of a GRE header with flags.
func greHeaderLen(flags uint16) int {
	n := greBaseLen
	for _, f := range [3]uint16{greCsum, greKey, greSeq} {
		if flags&f != 0 {
			n += 4
		}
	}
	return n
}

// checkOpts checks that raw Geneve options are whole TLVs.
func checkOpts(opts []byte) error {
	if len(opts)%4 != 0 || len(opts) > MaxGeneveOpts {
		return errOptsLen
	}
	for len(opts) > 0 {
		n := 4 + int(opts[3]&0x1f)*4
		if len(opts) < n {
			return errOptsTLVs
		}
		opts = opts[n:]
	}
	return nil
}

// optsCritical reports whether any option has the critical bit (the top
// bit of its type).
func optsCritical(opts []byte) bool {
	for len(opts) >= 4 {
		if opts[2]&0x80 != 0 {
			return true
		}
		n := 4 + int(opts[3]&0x1f)*4
		if n > len(opts) {
			break
		}
		opts = opts[n:]
	}
	return false
}
