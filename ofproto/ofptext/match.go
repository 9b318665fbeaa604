package ofptext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// DefaultPriority is OpenFlow's default flow priority (not printed).
const DefaultPriority = 0x8000

// shorthand is one protocol keyword: eth_type and (if proto >= 0) nw_proto.
type shorthand struct {
	name    string
	ethType uint16
	proto   int
}

// shorthands in the order ovs-ofctl prefers when printing.
var shorthands = []shorthand{
	{"ip", flow.EthTypeIPv4, -1}, {"ipv6", flow.EthTypeIPv6, -1},
	{"icmp", flow.EthTypeIPv4, flow.IPProtoICMP}, {"icmp6", flow.EthTypeIPv6, flow.IPProtoICMPv6},
	{"tcp", flow.EthTypeIPv4, flow.IPProtoTCP}, {"tcp6", flow.EthTypeIPv6, flow.IPProtoTCP},
	{"udp", flow.EthTypeIPv4, flow.IPProtoUDP}, {"udp6", flow.EthTypeIPv6, flow.IPProtoUDP},
	{"sctp", flow.EthTypeIPv4, flow.IPProtoSCTP}, {"sctp6", flow.EthTypeIPv6, flow.IPProtoSCTP},
	{"arp", flow.EthTypeARP, -1}, {"rarp", flow.EthTypeRARP, -1},
	{"mpls", flow.EthTypeMPLS, -1}, {"mplsm", flow.EthTypeMPLSMcst, -1},
}

// shorthandAliases are further keywords ovs-ofctl accepts: "ip6" for
// "ipv6", and "eth" for an Ethernet packet type (ethType 0 here).
var shorthandAliases = []shorthand{{"ip6", flow.EthTypeIPv6, -1}, {"eth", 0, -1}}

func lookupShorthand(s string) (shorthand, bool) {
	for _, sh := range shorthandAliases {
		if sh.name == s {
			return sh, true
		}
	}
	for _, sh := range shorthands {
		if sh.name == s {
			return sh, true
		}
	}
	return shorthand{}, false
}

// matchWriter accumulates "name=value," items.
type matchWriter struct {
	sb strings.Builder
	m  *mf.Match
	// megaflow: ICMP type and code are the low byte of a 16-bit field
	// whose megaflow mask is 0x00ff, printed 0xV/0xff as Open vSwitch.
	megaflow bool
	val      [128]byte
	msk      [128]byte
}

func (w *matchWriter) item(s string) {
	w.sb.WriteString(s)
	w.sb.WriteByte(',')
}

// field prints f under name if the match tests any of its bits.
// be16Masked are the 16-bit fields ovs-ofctl's match printer shows
// partially masked as 0xV/0xM, with 0x even for zero.
var be16Masked = map[mf.ID]bool{mf.IDTCPSrc: true, mf.IDTCPDst: true, mf.IDCtTpSrc: true, mf.IDCtTpDst: true}

// icmpTypeCode are the ICMP fields (see matchWriter.megaflow).
var icmpTypeCode = map[mf.ID]bool{mf.IDICMPv4Type: true, mf.IDICMPv4Code: true, mf.IDICMPv6Type: true, mf.IDICMPv6Code: true}

func (w *matchWriter) field(id mf.ID, name string) {
	f := mf.ByID(id)
	if w.m.IsWild(f) {
		return
	}
	if id >= mf.IDTunMetadata0 && id < mf.IDTunMetadata0+64 {
		// An option matched as absent (tun_metadata_match_format).
		bit := uint64(1) << (id - mf.IDTunMetadata0)
		if w.m.Mask.Key.TunMetaPresent&bit != 0 && w.m.Flow.Key.TunMetaPresent&bit == 0 {
			w.item(name + "=NP")
			return
		}
	}
	n := w.m.Width(f)
	v, m := w.val[:n], w.msk[:n]
	w.m.Get(f, v, m)
	if isZero(m) {
		return
	}
	switch {
	case id == mf.IDCtZone: // ovs-ofctl's match printer: decimal, unlike set_field
		w.item(name + "=" + strconv.FormatUint(getUint(v), 10))
	case w.megaflow && icmpTypeCode[id]:
		w.item(name + "=0x" + strconv.FormatUint(getUint(v), 16) + "/0x" + strconv.FormatUint(getUint(m), 16))
	case be16Masked[id] && getUint(m) != 0xffff: // "0x%x/0x%x", 0 as 0x0
		w.item(name + "=0x" + strconv.FormatUint(getUint(v), 16) + "/0x" + strconv.FormatUint(getUint(m), 16))
	case id == mf.IDNshFlags && getUint(m) != 0xff: // "0x%02x/0x%02x"
		w.item(fmt.Sprintf("%s=0x%02x/0x%02x", name, getUint(v), getUint(m)))
	case id == mf.IDIPv6Label: // "0x%05x", the mask only when partial
		if getUint(m)&0xfffff == 0xfffff {
			w.item(fmt.Sprintf("%s=0x%05x", name, getUint(v)))
		} else {
			w.item(fmt.Sprintf("%s=0x%05x/0x%05x", name, getUint(v), getUint(m)))
		}
	case id == mf.IDRecircID: // hexadecimal, likewise ("%#x": 0 prints as 0)
		if getUint(v) == 0 {
			w.item(name + "=0")
		} else {
			w.item(name + "=0x" + strconv.FormatUint(getUint(v), 16))
		}
	default:
		w.item(name + "=" + formatValue(f, v, m))
	}
}

// megaflowTunFlags prints a megaflow's tunnel flags as Open vSwitch's
// match_format does: every flag the datapath keeps (oam, df, csum, key),
// not only the public oam that the OpenFlow field tun_flags holds. Tunnel
// receive masks df, csum and key, so a tunnelled megaflow shows them.
func (w *matchWriter) megaflowTunFlags() {
	const all = 0xf
	m := uint64(w.m.Mask.TunFlags) & all
	if m == 0 {
		return
	}
	w.item("tun_flags=" + formatFlags(megaflowTunFlags, uint64(w.m.Flow.TunFlags)&m, m, m == all))
}

// FormatMatch prints m (and a non-default priority) exactly as ovs-ofctl's
// match formatter: fields in its fixed order with its legacy names,
// protocol shorthands for exact eth_type/nw_proto, no trailing comma.
func FormatMatch(m *mf.Match, priority uint16) string {
	return formatMatch(m, priority, false)
}

// FormatMegaflow prints a datapath megaflow as ofproto/trace's
// "Megaflow:" line: like FormatMatch, but the packet type is printed
// ("eth") as Open vSwitch prints it for megaflows.
func FormatMegaflow(m *mf.Match) string { return formatMatch(m, DefaultPriority, true) }

func formatMatch(m *mf.Match, priority uint16, megaflow bool) string {
	w := &matchWriter{m: m, megaflow: megaflow}
	if priority != DefaultPriority {
		w.item("priority=" + strconv.Itoa(int(priority)))
	}
	fl, mk := &m.Flow, &m.Mask
	for _, id := range []mf.ID{mf.IDPktMark, mf.IDRecircID, mf.IDDPHash, mf.IDConjID, mf.IDSkbPriority,
		mf.IDActsetOutput, mf.IDCtState, mf.IDCtZone, mf.IDCtMark, mf.IDCtLabel} {
		w.field(id, mf.ByID(id).Name)
	}
	for _, id := range []mf.ID{mf.IDCtNwSrc, mf.IDCtNwDst, mf.IDCtIPv6Src, mf.IDCtIPv6Dst, mf.IDCtNwProto} {
		w.field(id, mf.ByID(id).Name)
	}
	if mk.CtNwProto != 0 { // ovs-ofctl prints the ct ports only with ct_nw_proto
		w.field(mf.IDCtTpSrc, "ct_tp_src")
		w.field(mf.IDCtTpDst, "ct_tp_dst")
	}
	// The default packet type (Ethernet) is printed for megaflows only.
	if mk.PacketType != 0 && (megaflow || fl.PacketType != 0) {
		if fl.PacketType == 0 && mk.PacketType == ^uint32(0) {
			w.item("eth")
		} else {
			w.item(formatPacketType(fl.PacketType))
		}
	}
	dl := fl.EthType
	skipType, skipProto := false, false
	if mk.EthType == 0xffff {
		for _, sh := range shorthands {
			if sh.ethType != dl {
				continue
			}
			if sh.proto < 0 {
				if mk.NwProto == 0xff && (dl == flow.EthTypeIPv4 || dl == flow.EthTypeIPv6) && protoShorthand(dl, fl.NwProto) {
					continue
				}
				w.item(sh.name)
				skipType = true
				break
			}
			if mk.NwProto == 0xff && int(fl.NwProto) == sh.proto {
				w.item(sh.name)
				skipType, skipProto = true, true
				break
			}
		}
	}
	for i := 0; i < mf.NumRegs; i++ {
		w.field(mf.IDReg0+mf.ID(i), "reg"+strconv.Itoa(i))
	}
	for _, id := range []mf.ID{mf.IDTunID, mf.IDTunSrc, mf.IDTunDst, mf.IDTunIPv6Src, mf.IDTunIPv6Dst,
		mf.IDTunGbpID, mf.IDTunGbpFlags, mf.IDTunTos, mf.IDTunTTL} {
		w.field(id, mf.ByID(id).Name)
	}
	formatTunnelOptions(w, fl, mk)
	if w.megaflow {
		w.megaflowTunFlags()
	} else {
		w.field(mf.IDTunFlags, "tun_flags")
	}
	for i := 0; i < 64; i++ {
		id := mf.IDTunMetadata0 + mf.ID(i)
		w.field(id, mf.ByID(id).Name)
	}
	w.field(mf.IDMetadata, "metadata")
	w.field(mf.IDInPort, "in_port")
	formatVLAN(w, "", fl.VLANs[0].TCI, mk.VLANs[0].TCI)
	// The inner tag follows only an outer one that is present.
	if fl.VLANs[0].TCI&flow.VLANCFI != 0 && mk.VLANs[0].TCI != 0 {
		formatVLAN(w, "1", fl.VLANs[1].TCI, mk.VLANs[1].TCI)
	}
	w.field(mf.IDEthSrc, "dl_src")
	w.field(mf.IDEthDst, "dl_dst")
	if !skipType && mk.EthType != 0 {
		w.item("dl_type=0x" + hex4(fl.EthType))
	}
	switch dl {
	case flow.EthTypeIPv6:
		w.field(mf.IDIPv6Src, "ipv6_src")
		w.field(mf.IDIPv6Dst, "ipv6_dst")
		w.field(mf.IDIPv6Label, "ipv6_label")
	case flow.EthTypeARP, flow.EthTypeRARP:
		w.field(mf.IDARPSPA, "arp_spa")
		w.field(mf.IDARPTPA, "arp_tpa")
	default:
		w.field(mf.IDIPv4Src, "nw_src")
		w.field(mf.IDIPv4Dst, "nw_dst")
	}
	if !skipProto && mk.NwProto != 0 {
		if dl == flow.EthTypeARP || dl == flow.EthTypeRARP {
			w.field(mf.IDARPOp, "arp_op")
		} else {
			w.field(mf.IDIPProto, "nw_proto")
		}
	}
	if dl == flow.EthTypeARP || dl == flow.EthTypeRARP {
		w.field(mf.IDARPSHA, "arp_sha")
		w.field(mf.IDARPTHA, "arp_tha")
	}
	w.field(mf.IDIPDSCP, "nw_tos")
	w.field(mf.IDIPECN, "nw_ecn")
	w.field(mf.IDIPTTL, "nw_ttl")
	w.field(mf.IDMPLSLabel, "mpls_label")
	w.field(mf.IDMPLSTC, "mpls_tc")
	w.field(mf.IDMPLSTTL, "mpls_ttl")
	w.field(mf.IDMPLSBOS, "mpls_bos")
	w.field(mf.IDIPFrag, "nw_frag")
	switch {
	case dl == flow.EthTypeIPv4 && fl.NwProto == flow.IPProtoICMP:
		w.field(mf.IDICMPv4Type, "icmp_type")
		w.field(mf.IDICMPv4Code, "icmp_code")
	case dl == flow.EthTypeIPv6 && fl.NwProto == flow.IPProtoICMPv6:
		w.field(mf.IDICMPv6Type, "icmp_type")
		w.field(mf.IDICMPv6Code, "icmp_code")
		w.field(mf.IDNDTarget, "nd_target")
		w.field(mf.IDNDSLL, "nd_sll")
		w.field(mf.IDNDTLL, "nd_tll")
		w.field(mf.IDNDReserved, "nd_reserved")
		w.field(mf.IDNDOptionsType, "nd_options_type")
	default:
		w.field(mf.IDTCPSrc, "tp_src")
		w.field(mf.IDTCPDst, "tp_dst")
	}
	w.field(mf.IDTCPFlags, "tcp_flags")
	if dl == nshEthType {
		for _, id := range []mf.ID{mf.IDNshFlags, mf.IDNshTTL, mf.IDNshMdtype, mf.IDNshNp, mf.IDNshSPI, mf.IDNshSI} {
			w.field(id, mf.ByID(id).Name)
		}
		// The context headers exist (and are shown) in MD type 1 only.
		if mk.NshMdtype != 0 && fl.NshMdtype == 1 {
			for i := range mf.ID(4) {
				w.field(mf.IDNshC1+i, mf.ByID(mf.IDNshC1+i).Name)
			}
		}
	}
	s := w.sb.String()
	return strings.TrimSuffix(s, ",")
}

func protoShorthand(dl uint16, proto uint8) bool {
	for _, sh := range shorthands {
		if sh.ethType == dl && sh.proto == int(proto) {
			return true
		}
	}
	return false
}

func hex4(v uint16) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", 4-len(s)) + s
}

// formatVLAN prints the 802.1Q TCI match of one tag as ovs-ofctl does
// (suffix "" for the outer tag, "1" for the inner): dl_vlan / dl_vlan_pcp
// when the match is "a VLAN header with this VID and/or PCP", vlan_tci
// otherwise.
func formatVLAN(w *matchWriter, suffix string, tci, mask uint16) {
	if mask == 0 {
		return
	}
	const vidMask, pcpMask, cfi = 0x0fff, 0xe000, flow.VLANCFI
	vid, pcp := mask&vidMask, mask&pcpMask
	if mask&cfi != 0 && tci&cfi != 0 && (vid == 0 || vid == vidMask) && (pcp == 0 || pcp == pcpMask) && (vid != 0 || pcp != 0) {
		if vid != 0 {
			w.item("dl_vlan" + suffix + "=" + strconv.Itoa(int(tci&vidMask)))
		}
		if pcp != 0 {
			w.item("dl_vlan_pcp" + suffix + "=" + strconv.Itoa(int(tci>>13)))
		}
		return
	}
	if mask == 0xffff {
		w.item("vlan_tci" + suffix + "=0x" + hex4(tci))
		return
	}
	w.item("vlan_tci" + suffix + "=0x" + hex4(tci) + "/0x" + hex4(mask))
}

// nshEthType is the Ethertype of the Network Service Header.
const nshEthType = 0x894f

// formatTunnelOptions prints the ERSPAN and GTP-U tunnel options as
// ovs-ofctl does: values only (masks are not shown), the ERSPAN index for
// version 1 and direction and hardware id for version 2 only.
func formatTunnelOptions(w *matchWriter, fl, mk *mf.Flow) {
	hex := func(v uint64) string {
		if v == 0 {
			return "0"
		}
		return "0x" + strconv.FormatUint(v, 16)
	}
	if mk.TunErspanVer != 0 {
		w.item("tun_erspan_ver=" + strconv.Itoa(int(fl.TunErspanVer)))
	}
	if mk.TunErspanIdx != 0 && fl.TunErspanVer == 1 {
		w.item("tun_erspan_idx=" + hex(uint64(fl.TunErspanIdx)))
	}
	if mk.TunErspanDir != 0 && fl.TunErspanVer == 2 {
		w.item("tun_erspan_dir=" + strconv.Itoa(int(fl.TunErspanDir)))
	}
	if mk.TunErspanHwid != 0 && fl.TunErspanVer == 2 {
		w.item("tun_erspan_hwid=" + hex(uint64(fl.TunErspanHwid)))
	}
	if mk.TunGtpuFlags != 0 {
		w.item("gtpu_flags=" + hex(uint64(fl.TunGtpuFlags)))
	}
	if mk.TunGtpuMsgtype != 0 {
		w.item("gtpu_msgtype=" + strconv.Itoa(int(fl.TunGtpuMsgtype)))
	}
}

// formatPacketType prints "(ns,type)": the type in hexadecimal in the
// Ethertype namespace (1), in decimal otherwise.
func formatPacketType(pt uint32) string {
	if pt>>16 == 1 {
		return fmt.Sprintf("packet_type=(1,%#x)", pt&0xffff)
	}
	return fmt.Sprintf("packet_type=(%d,%d)", pt>>16, pt&0xffff)
}
