package flow

import (
	"net/netip"
	"strconv"

	"github.com/gvs-project/gvs/datapath/packet"
)

// The datapath flow text format is the one `ovs-appctl dpctl/dump-flows`
// prints for the userspace datapath: a comma-separated list of attributes
// such as recirc_id(0),in_port(1),eth(...),eth_type(0x0800),ipv4(...).
//
// Which attributes appear is decided the way Open vSwitch decides which
// netlink attributes a datapath flow key has: from the key (not the mask).
// An IPv4 key has ipv4(), a TCP key tcp(), a key with a tunnel destination
// has tunnel(), and so on. The terse form then leaves out every attribute
// whose mask is all zero (nested ones excepted), and inside an attribute
// every field whose mask is zero; the verbose form (dump-flows -m) prints
// everything, with /mask wherever the mask is not exact.
//
// The key is printed as it is stored: Open vSwitch keeps the unmasked
// packet values in its userspace megaflows and prints them
// (ipv4(src=10.0.0.1/0.0.0.0,...)). A Match built by ParseMatch keeps the
// key bits exactly as written, outside the mask too; call Normalize to get
// the canonical form.

// TunFlagUDPIF marks a key whose Geneve options are held raw, as they came
// off the wire: TunMeta holds the option TLVs and TunMetaPresent their
// length in bytes (Open vSwitch's FLOW_TNL_F_UDPIF convention, which its
// userspace datapath uses for every Geneve packet). The bit value is the
// one Open vSwitch uses.
const TunFlagUDPIF = 1 << 4

// Tunnel flag bits of Key.TunFlags.
const (
	tunFlagOAM  = packet.TunFlagOAM
	tunFlagDF   = packet.TunFlagDontFragment
	tunFlagCsum = packet.TunFlagCsum
	tunFlagKey  = packet.TunFlagKey
)

// odpTunFlags lists tunnel flags in the order Open vSwitch prints them
// (lowest FLOW_TNL_F_* bit first) with the Key.TunFlags bit of each.
var odpTunFlags = [4]struct {
	name string
	bit  uint16
}{{"oam", tunFlagOAM}, {"df", tunFlagDF}, {"csum", tunFlagCsum}, {"key", tunFlagKey}}

// TCPFlagsUnknown is a Key.TCPFlags bit outside the 12 TCP flag bits that
// ParseMatch sets for tcp_flags(0/0): Open vSwitch prints that attribute
// only for a key with flags, but the text does not say which flags.
const TCPFlagsUnknown = 1 << 15

// ctStateNames are the ct_state bits, lowest first.
var ctStateNames = [8]string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"}

// tcpFlagNames are the 12 TCP flag bits, lowest first.
var tcpFlagNames = [12]string{"fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr", "ns", "[200]", "[400]", "[800]"}

// fragNames are indexed by the datapath frag type (none, first, later).
var fragNames = [3]string{"no", "first", "later"}

// Format returns the text form of m: terse like `dpctl/dump-flows`, or
// verbose like `dpctl/dump-flows -m`.
func (m *Match) Format(verbose bool) string {
	return string(m.AppendFormat(make([]byte, 0, 256), verbose))
}

// String returns the terse text form.
func (m *Match) String() string { return m.Format(false) }

// AppendFormat appends the text form of m to dst and returns the result.
func (m *Match) AppendFormat(dst []byte, verbose bool) []byte {
	p := printer{b: dst, k: &m.Key, m: &m.Mask, verbose: verbose}
	lv := level{first: true}
	p.metadata(&lv)
	p.packetType(&lv)
	if m.Key.PacketType == 0 {
		p.attr(&lv, attrEth, isZero(m.Mask.EthSrc[:]) && isZero(m.Mask.EthDst[:]))
	}
	p.vlans(&lv, 0)
	p.trailingEthType(&lv)
	return p.b
}

type attrID uint8

const (
	attrSkbPriority attrID = iota
	attrTunnel
	attrSkbMark
	attrCtState
	attrCtZone
	attrCtMark
	attrCtLabel
	attrCtTuple4
	attrCtTuple6
	attrRecircID
	attrDPHash
	attrInPort
	attrPacketType
	attrEth
	attrEthType
	attrVLAN
	attrEncap
	attrIPv4
	attrIPv6
	attrARP
	attrMPLS
	attrTCP
	attrTCPFlags
	attrUDP
	attrSCTP
	attrICMP
	attrICMPv6
	attrND
	attrNDExt
	numAttrs
)

// attrNames are the datapath attribute names, indexed by attrID.
var attrNames = [numAttrs]string{
	attrSkbPriority: "skb_priority",
	attrTunnel:      "tunnel",
	attrSkbMark:     "skb_mark",
	attrCtState:     "ct_state",
	attrCtZone:      "ct_zone",
	attrCtMark:      "ct_mark",
	attrCtLabel:     "ct_label",
	attrCtTuple4:    "ct_tuple4",
	attrCtTuple6:    "ct_tuple6",
	attrRecircID:    "recirc_id",
	attrDPHash:      "dp_hash",
	attrInPort:      "in_port",
	attrPacketType:  "packet_type",
	attrEth:         "eth",
	attrEthType:     "eth_type",
	attrVLAN:        "vlan",
	attrEncap:       "encap",
	attrIPv4:        "ipv4",
	attrIPv6:        "ipv6",
	attrARP:         "arp",
	attrMPLS:        "mpls",
	attrTCP:         "tcp",
	attrTCPFlags:    "tcp_flags",
	attrUDP:         "udp",
	attrSCTP:        "sctp",
	attrICMP:        "icmp",
	attrICMPv6:      "icmpv6",
	attrND:          "nd",
	attrNDExt:       "nd_ext",
}

// printer appends one match's text.
type printer struct {
	b       []byte
	k       *Key
	m       *Mask
	verbose bool
	vlan    int    // VLAN index for attrVLAN/attrEncap bodies
	tpid    uint16 // Ethertype printed by the pending attrEthType of a VLAN
	isTPID  bool
}

// level is the state of one attribute list (the top level or an encap()).
type level struct {
	first       bool
	hasEthType  bool
	hasPktType  bool
	maskEthType uint16 // mask of an Ethertype the key cannot carry (802.3)
}

// attr prints one attribute the key has, following Open vSwitch's rule:
// always in verbose form, otherwise only when its mask is not all zero or
// it is nested (tunnel, encap). An all-wildcarded eth() is still shown
// when no packet_type was shown, because then its presence says the
// packet is Ethernet.
func (p *printer) attr(lv *level, id attrID, wild bool) {
	switch id {
	case attrEthType:
		lv.hasEthType = true
	case attrPacketType:
		lv.hasPktType = true
	}
	nested := id == attrTunnel || id == attrEncap
	switch {
	case p.verbose || !wild || nested:
		if !lv.first {
			p.b = append(p.b, ',')
		}
		lv.first = false
		p.b = append(p.b, attrNames[id]...)
		p.b = append(p.b, '(')
		p.body(id)
		p.b = append(p.b, ')')
	case id == attrEth && !lv.hasPktType:
		// Open vSwitch does not clear its "first field" flag here.
		if !lv.first {
			p.b = append(p.b, ',')
		}
		p.b = append(p.b, "eth()"...)
	case id == attrPacketType:
		lv.hasPktType = false
	}
}

func (p *printer) metadata(lv *level) {
	k, m := p.k, p.m
	p.attr(lv, attrSkbPriority, m.SkbPriority == 0)
	if k.TunDst != 0 || k.TunSrc != 0 || !isZero(k.TunIPv6Dst[:]) || !isZero(k.TunIPv6Src[:]) {
		p.attr(lv, attrTunnel, false)
	}
	p.attr(lv, attrSkbMark, m.PktMark == 0)
	p.attr(lv, attrCtState, m.CtState == 0)
	p.attr(lv, attrCtZone, m.CtZone == 0)
	p.attr(lv, attrCtMark, m.CtMark == 0)
	p.attr(lv, attrCtLabel, isZero(m.CtLabel[:]))
	if k.CtNwProto != 0 {
		portsWild := m.CtTpSrc == 0 && m.CtTpDst == 0 && m.CtNwProto == 0
		switch k.EthType {
		case EthTypeIPv4:
			p.attr(lv, attrCtTuple4, portsWild && m.CtNwSrc == 0 && m.CtNwDst == 0)
		case EthTypeIPv6:
			p.attr(lv, attrCtTuple6, portsWild && isZero(m.CtIPv6Src[:]) && isZero(m.CtIPv6Dst[:]))
		}
	}
	p.attr(lv, attrRecircID, m.RecircID == 0)
	p.attr(lv, attrDPHash, m.DPHash == 0)
	p.attr(lv, attrInPort, m.InPort == 0)
}

func (p *printer) packetType(lv *level) {
	p.attr(lv, attrPacketType, p.m.PacketType == 0)
}

func isVLANType(t uint16) bool { return t == EthTypeVLAN || t == EthTypeQinQ }

// vlans prints the VLAN headers from index i on, each as
// eth_type(TPID),vlan(...),encap(...) with the rest nested in the encap,
// then the Ethertype and L3/L4.
func (p *printer) vlans(lv *level, i int) {
	k := p.k
	if k.PacketType == 0 && i < len(k.VLANs) {
		tci, tpid := k.VLANs[i].TCI, k.VLANs[i].TPID
		if tci == 0 && isVLANType(k.EthType) {
			tpid = k.EthType // a truncated tag: its TPID is the Ethertype
		}
		if tci != 0 || isVLANType(k.EthType) {
			p.tpid, p.isTPID = tpid, true
			p.attr(lv, attrEthType, false)
			p.isTPID = false
			p.vlan = i
			p.attr(lv, attrVLAN, p.m.VLANs[i].TCI == 0)
			p.vlan = i
			p.attr(lv, attrEncap, false)
			return
		}
	}
	p.l3(lv)
}

// encap prints the attributes nested in the encap() of VLAN i.
func (p *printer) encap(i int) {
	if p.k.VLANs[i].TCI == 0 {
		return
	}
	inner := level{first: true}
	p.vlans(&inner, i+1)
	p.trailingEthType(&inner)
}

// trailingEthType prints eth_type(0/MASK) for a frame without an
// Ethertype (802.3), whose mask matches on that absence.
func (p *printer) trailingEthType(lv *level) {
	if !lv.hasEthType && lv.maskEthType != 0 {
		p.b = append(p.b, ",eth_type(0/"...)
		p.b = appendHex04(p.b, lv.maskEthType)
		p.b = append(p.b, ')')
	}
}

func (p *printer) l3(lv *level) {
	k, m := p.k, p.m
	if k.EthType < EthTypeMin {
		lv.maskEthType = m.EthType
		return
	}
	p.attr(lv, attrEthType, m.EthType == 0)
	switch k.EthType {
	case EthTypeIPv4:
		p.attr(lv, attrIPv4, m.NwSrc == 0 && m.NwDst == 0 && p.nwWild())
	case EthTypeIPv6:
		p.attr(lv, attrIPv6, isZero(m.IPv6Src[:]) && isZero(m.IPv6Dst[:]) &&
			m.IPv6Label&0xfffff == 0 && p.nwWild())
	case EthTypeARP, EthTypeRARP:
		p.attr(lv, attrARP, m.NwSrc == 0 && m.NwDst == 0 && m.NwProto == 0 &&
			isZero(m.ArpSha[:]) && isZero(m.ArpTha[:]))
	case EthTypeMPLS, EthTypeMPLSMcst:
		p.attr(lv, attrMPLS, m.MPLSLSE == 0)
	default:
		return
	}
	if (k.EthType != EthTypeIPv4 && k.EthType != EthTypeIPv6) || k.NwFrag&FragLater != 0 {
		return
	}
	portsWild := m.TpSrc == 0 && m.TpDst == 0
	icmpWild := m.TpSrc&0xff == 0 && m.TpDst&0xff == 0
	switch {
	case k.NwProto == IPProtoTCP:
		p.attr(lv, attrTCP, portsWild)
		if k.TCPFlags != 0 || m.TCPFlags != 0 {
			p.attr(lv, attrTCPFlags, m.TCPFlags&0xfff == 0)
		}
	case k.NwProto == IPProtoUDP:
		p.attr(lv, attrUDP, portsWild)
	case k.NwProto == IPProtoSCTP:
		p.attr(lv, attrSCTP, portsWild)
	case k.NwProto == IPProtoICMP && k.EthType == EthTypeIPv4:
		p.attr(lv, attrICMP, icmpWild)
	case k.NwProto == IPProtoICMPv6 && k.EthType == EthTypeIPv6:
		p.attr(lv, attrICMPv6, icmpWild)
		if !k.isND() {
			return
		}
		ndm := p.ndMask()
		p.attr(lv, attrND, !ndm || isZero(m.NDTarget[:]) && isZero(m.ArpSha[:]) && isZero(m.ArpTha[:]))
		if k.NDReserved != 0 || k.NDOptType != 0 {
			p.attr(lv, attrNDExt, !ndm || m.NDReserved == 0 && m.NDOptType == 0)
		}
	}
}

// nwWild reports whether the fields IPv4 and IPv6 share are wildcarded.
func (p *printer) nwWild() bool {
	m := p.m
	return m.NwProto == 0 && m.NwTos == 0 && m.NwTTL == 0 && m.NwFrag&FragAny == 0
}

// isND reports whether k is an ICMPv6 Neighbor Solicitation or
// Advertisement, the keys that carry nd().
func (k *Key) isND() bool {
	return k.EthType == EthTypeIPv6 && k.NwProto == IPProtoICMPv6 && k.TpDst == 0 &&
		(k.TpSrc == 135 || k.TpSrc == 136)
}

// ndMask reports whether the mask has nd() fields: Open vSwitch exports
// them only when the ICMPv6 type and code are matched exactly.
func (p *printer) ndMask() bool { return p.m.TpSrc&0xff == 0xff && p.m.TpDst&0xff == 0xff }

func (p *printer) body(id attrID) {
	k, m := p.k, p.m
	switch id {
	case attrSkbPriority:
		p.u32Attr(k.SkbPriority, m.SkbPriority)
	case attrSkbMark:
		p.u32Attr(k.PktMark, m.PktMark)
	case attrRecircID:
		p.u32Attr(k.RecircID, m.RecircID)
	case attrDPHash:
		p.u32Attr(k.DPHash, m.DPHash)
	case attrTunnel:
		p.tunnel()
	case attrCtState:
		if p.verbose {
			p.b = appendHexC(p.b, uint64(k.CtState))
			p.b = append(p.b, '/')
			p.b = appendHexC(p.b, uint64(m.CtState))
		} else {
			p.b = appendFlagsMasked(p.b, ctStateNames[:], uint32(k.CtState), uint32(m.CtState), 0xffffffff)
		}
	case attrCtZone:
		if p.verbose || m.CtZone != 0 {
			p.b = appendHexC(p.b, uint64(k.CtZone))
			if m.CtZone != 0xffff {
				p.b = append(p.b, '/')
				p.b = appendHexC(p.b, uint64(m.CtZone))
			}
		}
	case attrCtMark:
		if p.verbose || m.CtMark != 0 {
			p.u32Attr(k.CtMark, m.CtMark)
		}
	case attrCtLabel:
		if p.verbose || !isZero(m.CtLabel[:]) {
			p.b = appendHexBytes(p.b, k.CtLabel[:])
			if !isOnes(m.CtLabel[:]) {
				p.b = append(p.b, '/')
				p.b = appendHexBytes(p.b, m.CtLabel[:])
			}
		}
	case attrCtTuple4:
		p.ipv4("src", k.CtNwSrc, m.CtNwSrc)
		p.ipv4("dst", k.CtNwDst, m.CtNwDst)
		p.u8u("proto", k.CtNwProto, m.CtNwProto)
		p.u16d("tp_src", k.CtTpSrc, m.CtTpSrc)
		p.u16d("tp_dst", k.CtTpDst, m.CtTpDst)
		p.chomp()
	case attrCtTuple6:
		p.ipv6("src", &k.CtIPv6Src, &m.CtIPv6Src)
		p.ipv6("dst", &k.CtIPv6Dst, &m.CtIPv6Dst)
		p.u8u("proto", k.CtNwProto, m.CtNwProto)
		p.u16d("src_port", k.CtTpSrc, m.CtTpSrc)
		p.u16d("dst_port", k.CtTpDst, m.CtTpDst)
		p.chomp()
	case attrInPort:
		p.b = strconv.AppendUint(p.b, uint64(k.InPort), 10)
		if m.InPort != 0xffffffff {
			p.b = append(p.b, '/')
			p.b = appendHexC(p.b, uint64(m.InPort))
		}
	case attrPacketType:
		p.u16d("ns", uint16(k.PacketType>>16), uint16(m.PacketType>>16))
		p.u16x("id", uint16(k.PacketType), uint16(m.PacketType))
		p.chomp()
	case attrEth:
		p.eth("src", &k.EthSrc, &m.EthSrc)
		p.eth("dst", &k.EthDst, &m.EthDst)
		p.chomp()
	case attrEthType:
		if p.isTPID {
			p.b = appendHex04(p.b, p.tpid)
			break
		}
		p.b = appendHex04(p.b, k.EthType)
		if m.EthType != 0xffff {
			p.b = append(p.b, '/')
			p.b = appendHex04(p.b, m.EthType)
		}
	case attrVLAN:
		p.vlanTCI(k.VLANs[p.vlan].TCI, m.VLANs[p.vlan].TCI)
	case attrEncap:
		p.encap(p.vlan)
	case attrMPLS:
		p.mpls(k.MPLSLSE, m.MPLSLSE)
	case attrIPv4:
		p.ipv4("src", k.NwSrc, m.NwSrc)
		p.ipv4("dst", k.NwDst, m.NwDst)
		p.u8u("proto", k.NwProto, m.NwProto)
		p.u8x("tos", k.NwTos, m.NwTos)
		p.u8u("ttl", k.NwTTL, m.NwTTL)
		p.frag()
		p.chomp()
	case attrIPv6:
		p.ipv6("src", &k.IPv6Src, &m.IPv6Src)
		p.ipv6("dst", &k.IPv6Dst, &m.IPv6Dst)
		if p.verbose || m.IPv6Label != 0 {
			p.b = append(p.b, "label="...)
			p.b = appendHexC(p.b, uint64(k.IPv6Label))
			if m.IPv6Label&0xfffff != 0xfffff {
				p.b = append(p.b, '/')
				p.b = appendHexC(p.b, uint64(m.IPv6Label))
			}
			p.b = append(p.b, ',')
		}
		p.u8u("proto", k.NwProto, m.NwProto)
		p.u8x("tclass", k.NwTos, m.NwTos)
		p.u8u("hlimit", k.NwTTL, m.NwTTL)
		p.frag()
		p.chomp()
	case attrARP:
		p.ipv4("sip", k.NwSrc, m.NwSrc)
		p.ipv4("tip", k.NwDst, m.NwDst)
		opMask := uint16(m.NwProto)
		if m.NwProto == 0xff {
			opMask = 0xffff
		}
		p.u16d("op", uint16(k.NwProto), opMask)
		p.eth("sha", &k.ArpSha, &m.ArpSha)
		p.eth("tha", &k.ArpTha, &m.ArpTha)
		p.chomp()
	case attrTCP, attrUDP, attrSCTP:
		p.u16d("src", k.TpSrc, m.TpSrc)
		p.u16d("dst", k.TpDst, m.TpDst)
		p.chomp()
	case attrTCPFlags:
		mask := uint32(m.TCPFlags & 0xfff)
		if mask == 0xfff {
			p.b = appendFlags(p.b, tcpFlagNames[:], uint32(k.TCPFlags))
		} else {
			p.b = appendFlagsMasked(p.b, tcpFlagNames[:], uint32(k.TCPFlags), mask, 0xfff)
		}
	case attrICMP, attrICMPv6:
		p.u8u("type", uint8(k.TpSrc), uint8(m.TpSrc))
		p.u8u("code", uint8(k.TpDst), uint8(m.TpDst))
		p.chomp()
	case attrND:
		var zm Mask
		nm := &zm
		if p.ndMask() {
			nm = m
		}
		p.ipv6("target", &k.NDTarget, &nm.NDTarget)
		p.eth("sll", &k.ArpSha, &nm.ArpSha)
		p.eth("tll", &k.ArpTha, &nm.ArpTha)
		p.chomp()
	case attrNDExt:
		optMask := uint8(0)
		if p.ndMask() {
			optMask = m.NDOptType
		}
		p.b = append(p.b, "nd_reserved=0x"...)
		p.b = strconv.AppendUint(p.b, uint64(k.NDReserved), 16)
		p.b = append(p.b, ',')
		p.u8u("nd_options_type", k.NDOptType, optMask)
		p.chomp()
	}
}

// u32Attr prints a whole-attribute 32-bit value as "%#x[/%#x]".
func (p *printer) u32Attr(k, m uint32) {
	p.b = appendHexC(p.b, uint64(k))
	if m != 0xffffffff {
		p.b = append(p.b, '/')
		p.b = appendHexC(p.b, uint64(m))
	}
}

func (p *printer) chomp() {
	if n := len(p.b); n > 0 && p.b[n-1] == ',' {
		p.b = p.b[:n-1]
	}
}

func (p *printer) field(name string) {
	p.b = append(p.b, name...)
	p.b = append(p.b, '=')
}

func (p *printer) ipv4(name string, k, m uint32) {
	if !p.verbose && m == 0 {
		return
	}
	p.field(name)
	p.b = appendIPv4(p.b, k)
	if m != 0xffffffff {
		p.b = append(p.b, '/')
		p.b = appendIPv4(p.b, m)
	}
	p.b = append(p.b, ',')
}

func (p *printer) ipv6(name string, k, m *[16]byte) {
	if !p.verbose && isZero(m[:]) {
		return
	}
	p.field(name)
	p.b = appendIPv6(p.b, k)
	if !isOnes(m[:]) {
		p.b = append(p.b, '/')
		p.b = appendIPv6(p.b, m)
	}
	p.b = append(p.b, ',')
}

func (p *printer) eth(name string, k, m *[6]byte) {
	if !p.verbose && isZero(m[:]) {
		return
	}
	p.field(name)
	p.b = appendMAC(p.b, k)
	if !isOnes(m[:]) {
		p.b = append(p.b, '/')
		p.b = appendMAC(p.b, m)
	}
	p.b = append(p.b, ',')
}

func (p *printer) u8u(name string, k, m uint8) {
	if !p.verbose && m == 0 {
		return
	}
	p.field(name)
	p.b = strconv.AppendUint(p.b, uint64(k), 10)
	if m != 0xff {
		p.b = append(p.b, '/')
		p.b = appendHexC(p.b, uint64(m))
	}
	p.b = append(p.b, ',')
}

func (p *printer) u8x(name string, k, m uint8) {
	if !p.verbose && m == 0 {
		return
	}
	p.field(name)
	p.b = appendHexC(p.b, uint64(k))
	if m != 0xff {
		p.b = append(p.b, '/')
		p.b = appendHexC(p.b, uint64(m))
	}
	p.b = append(p.b, ',')
}

func (p *printer) u16d(name string, k, m uint16) {
	if !p.verbose && m == 0 {
		return
	}
	p.field(name)
	p.b = strconv.AppendUint(p.b, uint64(k), 10)
	if m != 0xffff {
		p.b = append(p.b, '/')
		p.b = appendHexC(p.b, uint64(m))
	}
	p.b = append(p.b, ',')
}

func (p *printer) u16x(name string, k, m uint16) {
	if !p.verbose && m == 0 {
		return
	}
	p.field(name)
	p.b = appendHexC(p.b, uint64(k))
	if m != 0xffff {
		p.b = append(p.b, '/')
		p.b = appendHexC(p.b, uint64(m))
	}
	p.b = append(p.b, ',')
}

// frag prints the fragment type. The datapath field is an enumeration, so
// the mask is all or nothing: exact when FragAny is matched, else absent.
func (p *printer) frag() {
	if p.m.NwFrag&FragAny == 0 {
		return
	}
	t := 0
	if p.k.NwFrag&FragAny != 0 {
		t = 1
		if p.k.NwFrag&FragLater != 0 {
			t = 2
		}
	}
	p.field("frag")
	p.b = append(p.b, fragNames[t]...)
	p.b = append(p.b, ',')
}

// vlanTCI prints vid, pcp and, for a TCI without the CFI bit, cfi=0.
func (p *printer) vlanTCI(k, m uint16) {
	vid, vidMask := k&0xfff, m&0xfff
	pcp, pcpMask := k>>13, m>>13
	if p.verbose || vid != 0 || vidMask != 0 {
		p.field("vid")
		p.b = strconv.AppendUint(p.b, uint64(vid), 10)
		if vidMask != 0xfff {
			p.b = append(p.b, "/0x"...)
			p.b = strconv.AppendUint(p.b, uint64(vidMask), 16)
		}
		p.b = append(p.b, ',')
	}
	if p.verbose || pcp != 0 || pcpMask != 0 {
		p.field("pcp")
		p.b = strconv.AppendUint(p.b, uint64(pcp), 10)
		if pcpMask != 7 {
			p.b = append(p.b, "/0x"...)
			p.b = strconv.AppendUint(p.b, uint64(pcpMask), 16)
		}
		p.b = append(p.b, ',')
	}
	if k&VLANCFI == 0 {
		p.b = append(p.b, "cfi=0,"...)
	}
	p.chomp()
}

// MPLS label stack entry layout.
const (
	mplsLabelShift = 12
	mplsTCShift    = 9
	mplsBOSShift   = 8
)

func (p *printer) mpls(k, m uint32) {
	label, tc, bos, ttl := k>>mplsLabelShift, k>>mplsTCShift&7, k>>mplsBOSShift&1, k&0xff
	ap := func(v uint32) { p.b = strconv.AppendUint(p.b, uint64(v), 10) }
	if m == 0xffffffff {
		p.b = append(p.b, "label="...)
		ap(label)
		p.b = append(p.b, ",tc="...)
		ap(tc)
		p.b = append(p.b, ",ttl="...)
		ap(ttl)
		p.b = append(p.b, ",bos="...)
		ap(bos)
		return
	}
	hx := func(v uint32) { p.b = strconv.AppendUint(p.b, uint64(v), 16) }
	p.b = append(p.b, "label="...)
	ap(label)
	p.b = append(p.b, "/0x"...)
	hx(m >> mplsLabelShift)
	p.b = append(p.b, ",tc="...)
	ap(tc)
	p.b = append(p.b, '/')
	hx(m >> mplsTCShift & 7)
	p.b = append(p.b, ",ttl="...)
	ap(ttl)
	p.b = append(p.b, "/0x"...)
	hx(m & 0xff)
	p.b = append(p.b, ",bos="...)
	ap(bos)
	p.b = append(p.b, '/')
	hx(m >> mplsBOSShift & 1)
}

// tunnel prints the tunnel() body. Sub-attributes appear as Open vSwitch
// puts them in a key: tun_id when set or flagged, addresses, tos, ports
// and options only when non-zero, ttl always; the flags last.
func (p *printer) tunnel() {
	k, m := p.k, p.m
	hasID := k.TunID != 0 || k.TunFlags&tunFlagKey != 0
	if hasID {
		if p.verbose || m.TunID != 0 {
			p.b = append(p.b, "tun_id=0x"...)
			p.b = strconv.AppendUint(p.b, k.TunID, 16)
			if m.TunID != ^uint64(0) {
				p.b = append(p.b, '/')
				p.b = appendHexC(p.b, m.TunID)
			}
			p.b = append(p.b, ',')
		}
	}
	if k.TunSrc != 0 {
		p.ipv4("src", k.TunSrc, m.TunSrc)
	}
	if k.TunDst != 0 {
		p.ipv4("dst", k.TunDst, m.TunDst)
	}
	if !isZero(k.TunIPv6Src[:]) {
		p.ipv6("ipv6_src", &k.TunIPv6Src, &m.TunIPv6Src)
	}
	if !isZero(k.TunIPv6Dst[:]) {
		p.ipv6("ipv6_dst", &k.TunIPv6Dst, &m.TunIPv6Dst)
	}
	if k.TunTos != 0 {
		p.u8x("tos", k.TunTos, m.TunTos)
	}
	p.u8u("ttl", k.TunTTL, m.TunTTL)
	if k.TunTpSrc != 0 {
		p.u16d("tp_src", k.TunTpSrc, m.TunTpSrc)
	}
	if k.TunTpDst != 0 {
		p.u16d("tp_dst", k.TunTpDst, m.TunTpDst)
	}
	if k.TunGbpID != 0 || k.TunGbpFlags != 0 {
		p.b = append(p.b, "vxlan(gbp("...)
		p.u16d("id", k.TunGbpID, m.TunGbpID)
		p.u8x("flags", k.TunGbpFlags, m.TunGbpFlags)
		p.chomp()
		p.b = append(p.b, ")),"...)
	}
	if k.TunFlags&TunFlagUDPIF != 0 {
		p.b = append(p.b, "geneve("...)
		p.geneve()
		p.b = append(p.b, "),"...)
	}
	// Flags: the key flag follows tun_id's presence in both key and mask.
	var flags, mflags uint16
	for i, f := range odpTunFlags {
		switch {
		case f.bit == tunFlagKey:
			if hasID {
				flags |= 1 << i
				mflags |= 1 << i
			}
		default:
			if k.TunFlags&f.bit != 0 {
				flags |= 1 << i
			}
			if m.TunFlags&f.bit != 0 {
				mflags |= 1 << i
			}
		}
	}
	if p.verbose || mflags != 0 {
		p.b = append(p.b, "flags("...)
		if mflags == 0xf {
			p.b = appendTunFlags(p.b, flags)
		} else {
			p.b = appendTunFlagsMasked(p.b, flags, mflags)
		}
		p.b = append(p.b, "),"...)
	}
	p.chomp()
}

func appendTunFlags(b []byte, flags uint16) []byte {
	if flags == 0 {
		return append(b, '0')
	}
	for i, f := range odpTunFlags {
		if flags&(1<<i) != 0 {
			b = append(b, f.name...)
			b = append(b, '|')
		}
	}
	return b[:len(b)-1]
}

func appendTunFlagsMasked(b []byte, flags, mask uint16) []byte {
	if mask == 0 {
		return append(b, "0/0"...)
	}
	for i, f := range odpTunFlags {
		if mask&(1<<i) != 0 {
			if flags&(1<<i) != 0 {
				b = append(b, '+')
			} else {
				b = append(b, '-')
			}
			b = append(b, f.name...)
		}
	}
	return b
}

// geneve prints raw Geneve options as {class=,type=,len=,DATA} entries.
func (p *printer) geneve() {
	k, m := p.k, p.m
	n := int(min(k.TunMetaPresent, uint64(len(k.TunMeta))))
	opts, mopts := k.TunMeta[:n], m.TunMeta[:n]
	for len(opts) > 0 {
		if len(opts) < 4 {
			p.b = append(p.b, "opt len "...)
			p.b = strconv.AppendInt(p.b, int64(len(opts)), 10)
			p.b = append(p.b, " less than minimum 4"...)
			return
		}
		dataLen := int(opts[3]&0x1f) * 4
		lenMask := mopts[3] & 0x1f
		if lenMask == 0x1f {
			lenMask = 0xff
		}
		if 4+dataLen > len(opts) {
			p.b = append(p.b, "opt len "...)
			p.b = strconv.AppendInt(p.b, int64(4+dataLen), 10)
			p.b = append(p.b, " greater than remaining "...)
			p.b = strconv.AppendInt(p.b, int64(len(opts)), 10)
			return
		}
		p.b = append(p.b, '{')
		p.u16x("class", uint16(opts[0])<<8|uint16(opts[1]), uint16(mopts[0])<<8|uint16(mopts[1]))
		p.u8x("type", opts[2], mopts[2])
		p.u8u("len", uint8(dataLen), lenMask)
		data, mdata := opts[4:4+dataLen], mopts[4:4+dataLen]
		if dataLen > 0 && (p.verbose || !isZero(mdata)) {
			p.b = appendHexBytes(p.b, data)
			if !isOnes(mdata) {
				p.b = append(p.b, '/')
				p.b = appendHexBytes(p.b, mdata)
			}
		} else {
			p.chomp()
		}
		p.b = append(p.b, '}')
		opts, mopts = opts[4+dataLen:], mopts[4+dataLen:]
	}
}

// appendFlags prints set flags joined by '|', unnamed bits as one hex
// number at the end, or "0" for none (Open vSwitch's format_flags).
func appendFlags(b []byte, names []string, flags uint32) []byte {
	if flags == 0 {
		return append(b, '0')
	}
	var bad uint32
	for i := 0; i < 32; i++ {
		bit := uint32(1) << i
		if flags&bit == 0 {
			continue
		}
		if i < len(names) {
			b = append(b, names[i]...)
			b = append(b, '|')
		} else {
			bad |= bit
		}
	}
	if bad != 0 {
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(bad), 16)
		b = append(b, '|')
	}
	return b[:len(b)-1]
}

// appendFlagsMasked prints +name/-name for every matched bit.
func appendFlagsMasked(b []byte, names []string, flags, mask, maxMask uint32) []byte {
	if mask == maxMask {
		return appendFlags(b, names, flags)
	}
	if mask == 0 {
		return append(b, "0/0"...)
	}
	for i := 0; i < 32; i++ {
		bit := uint32(1) << i
		if mask&bit == 0 {
			continue
		}
		if flags&bit != 0 {
			b = append(b, '+')
		} else {
			b = append(b, '-')
		}
		if i < len(names) {
			b = append(b, names[i]...)
		} else {
			b = append(b, "[Unknown]"...)
		}
	}
	return b
}

// appendHexC formats v as C's "%#x": "0" for zero, else 0x-prefixed.
func appendHexC(b []byte, v uint64) []byte {
	if v == 0 {
		return append(b, '0')
	}
	b = append(b, "0x"...)
	return strconv.AppendUint(b, v, 16)
}

// appendHex04 formats v as "0x%04x".
func appendHex04(b []byte, v uint16) []byte {
	const digits = "0123456789abcdef"
	return append(b, '0', 'x', digits[v>>12], digits[v>>8&0xf], digits[v>>4&0xf], digits[v&0xf])
}

// appendHexBytes prints a big-endian byte string as one hex number
// without leading zeros ("0" when all zero), as Open vSwitch's ds_put_hex.
func appendHexBytes(b []byte, v []byte) []byte {
	const digits = "0123456789abcdef"
	printed := false
	for _, c := range v {
		switch {
		case printed:
			b = append(b, digits[c>>4], digits[c&0xf])
		case c != 0:
			b = append(b, "0x"...)
			if c >= 0x10 {
				b = append(b, digits[c>>4])
			}
			b = append(b, digits[c&0xf])
			printed = true
		}
	}
	if !printed {
		b = append(b, '0')
	}
	return b
}

func appendIPv4(b []byte, v uint32) []byte {
	b = strconv.AppendUint(b, uint64(v>>24), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(v>>16&0xff), 10)
	b = append(b, '.')
	b = strconv.AppendUint(b, uint64(v>>8&0xff), 10)
	b = append(b, '.')
	return strconv.AppendUint(b, uint64(v&0xff), 10)
}

// appendIPv6 formats like glibc's inet_ntop, which prints an address whose
// first 96 bits are zero (and that is not :: or ::1-style) with a dotted
// IPv4 tail, as Go does not.
func appendIPv6(b []byte, a *[16]byte) []byte {
	if isZero(a[:12]) && (a[12] != 0 || a[13] != 0) {
		b = append(b, "::"...)
		return appendIPv4(b, uint32(a[12])<<24|uint32(a[13])<<16|uint32(a[14])<<8|uint32(a[15]))
	}
	return netip.AddrFrom16(*a).AppendTo(b)
}

func appendMAC(b []byte, a *[6]byte) []byte {
	const digits = "0123456789abcdef"
	for i, c := range a {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, digits[c>>4], digits[c&0xf])
	}
	return b
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func isOnes(b []byte) bool {
	for _, c := range b {
		if c != 0xff {
			return false
		}
	}
	return true
}
