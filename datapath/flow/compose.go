package flow

import (
	"encoding/binary"
	"fmt"

	"github.com/gvs-project/gvs/datapath/packet"
)

// Composition builds the packet that Open vSwitch's flow_compose (lib/flow.c)
// builds for a flow, byte for byte, because Open vSwitch's tests inject
// almost every packet with `netdev-dummy/receive PORT FLOW` and gvs must see
// the same frames. The rules below were checked against Open vSwitch 3.1
// (testdata/compose/gen.sh records its frames in golden.txt):
//
//   - Ethernet: destination, source, then the tags of the present VLANs
//     (TCI with VLANCFI), outer first, each written with its TPID and the
//     CFI/DEI bit clear, then EthType.
//   - An EthType below 0x0600 (EthTypeNone, or 0 when ParseMatch saw no
//     eth_type) is an 802.3 frame of just the Ethernet header whose length
//     field is 14; VLAN tags are not written.
//   - MPLS: the label stack entry MPLSLSE after the Ethertype. Without the
//     bottom-of-stack bit Open vSwitch fills its three-entry stack, so two
//     zero entries follow. Nothing is written after the stack.
//   - ARP/RARP: Ethernet/IPv4, opcode NwProto; the addresses only for
//     opcodes 1 and 2, zero otherwise.
//   - IPv4: a 20-byte header with identification 0 and no DF; FragAny sets
//     MF and FragAny|FragLater also sets fragment offset 100 (800 bytes).
//     Total length and header checksum cover what follows.
//   - IPv6: a 40-byte header, next header NwProto; no extension headers,
//     so a fragment is composed as an unfragmented packet (NwFrag is
//     lost). Payload length covers what follows.
//   - L4 is written unless the packet is a later fragment (FragAny and
//     FragLater). TCP: 20 bytes, sequence, acknowledgment, window and
//     urgent pointer zero, data offset 5, flags TCPFlags. UDP: 8 bytes,
//     length over the payload. SCTP: 12 bytes, verification tag and
//     checksum zero (Open vSwitch does not compute the CRC32c). ICMP and
//     IGMP: 8 bytes with type TpSrc, code TpDst (and the IGMP group).
//     ICMPv6: 8 bytes; a Neighbor Solicitation/Advertisement carries
//     NDReserved in its reserved word, then NDTarget, then a source
//     link-layer address option if ArpSha is non-zero and a target one if
//     ArpTha is non-zero (in that order, whatever NDOptType says).
//   - The L7 payload follows TCP without SYN, FIN or RST, UDP, and ICMP or
//     ICMPv6 echo request/reply (code 0); other packets carry none.
//   - Checksums: TCP, UDP and ICMPv6 over the pseudo-header of the IP
//     version in use (a UDP checksum of 0 is left 0); ICMP and IGMP over
//     their message only. The protocol number alone picks the checksum, so
//     ICMPv6 inside IPv4 still gets one.

// Padding to a length (ComposeLen, netdev-dummy/receive's --len) composes
// without payload and appends zeros; then, as Open vSwitch's packet_expand:
// an 802.3 length field becomes the frame length; IPv4 total length, header
// checksum and IPv6 payload length count the zeros; a UDP length becomes
// its segment length plus the number of zeros again (Open vSwitch counts
// them twice); and L4 checksums cover the zeros. Other frames just end in
// zeros.

// MinComposeLen is the smallest length ComposeLen accepts: Ethernet's
// minimum frame without FCS, as netdev-dummy/receive --len requires.
const MinComposeLen = 60

// DefaultPayloadLen is the length of the L7 payload that netdev-dummy/receive
// asks flow_compose for when no --len is given.
const DefaultPayloadLen = 64

// Field values of composed headers that the key does not carry.
const (
	ipv4VerIHL       = 0x45   // version 4, 5 words
	ipv4MF           = 0x2000 // more fragments
	ipv4LaterFragOff = 100    // fragment offset of a later fragment, in 8-byte units
	ipv6Version      = 6 << 28
	ipv6LabelMask    = 0x000fffff
	tcpDataOff5      = 5 << 12 // data offset of a header without options
	tcpFlagsMask     = 0x0fff
	tcpFIN           = 0x001
	tcpSYN           = 0x002
	tcpRST           = 0x004
	mplsBOS          = 0x100
	mplsFillLSEs     = 2 // zero entries after a first entry without bottom of stack
	arpHrdEthernet   = 1
	arpOpRequest     = 1
	arpOpReply       = 2
)

// Header sizes and offsets used only by composition.
const (
	udpHeaderLen  = 8
	sctpHeaderLen = 12
	icmpHeaderLen = 8
	igmpHeaderLen = 8
	ndOptLLALen   = 8
	ipv4CsumOff   = 10
	tcpCsumOff    = 16
	udpLenOff     = 4
	udpCsumOff    = 6
	icmpCsumOff   = 2
)

// l4Wire describes how each IP protocol is composed: the fixed header length
// (0: nothing is written), where its checksum goes and whether the checksum
// covers the IP pseudo-header.
type l4Wire struct {
	hdrLen  uint8
	csumOff uint8
	csum    uint8 // csumNone, csumPseudo or csumPlain
}

const (
	csumNone = iota
	csumPseudo
	csumPlain
)

var l4Wires = [256]l4Wire{
	IPProtoTCP:    {tcpMinHeaderLen, tcpCsumOff, csumPseudo},
	IPProtoUDP:    {udpHeaderLen, udpCsumOff, csumPseudo},
	IPProtoSCTP:   {sctpHeaderLen, 0, csumNone},
	IPProtoICMP:   {icmpHeaderLen, icmpCsumOff, csumPlain},
	IPProtoIGMP:   {igmpHeaderLen, icmpCsumOff, csumPlain},
	IPProtoICMPv6: {icmpv6HeaderLen, icmpCsumOff, csumPseudo},
}

// echoTypes are the ICMP and ICMPv6 types that carry the L7 payload (with
// code 0): echo reply and request.
var (
	icmpEchoTypes   = [256]bool{0: true, 8: true}
	icmpv6EchoTypes = [256]bool{128: true, 129: true}
)

// AppendDefaultPayload appends n bytes 0x00, 0x01, ... (wrapping at 0xff),
// the payload flow_compose invents when it is given a length but no data.
func AppendDefaultPayload(dst []byte, n int) []byte {
	for i := 0; i < n; i++ {
		dst = append(dst, byte(i))
	}
	return dst
}

// ComposeString parses the datapath flow s (the syntax of ParseMatch) and
// composes its key with the default 64-byte payload, as
// `ovs-appctl netdev-dummy/receive PORT s` does. Masks are ignored: the key
// bits are used as written.
func ComposeString(s string) ([]byte, error) {
	m, err := ParseMatch(s)
	if err != nil {
		return nil, fmt.Errorf("compose %q: %w", s, err)
	}
	var l7 [DefaultPayloadLen]byte
	return Compose(nil, &m.Key, AppendDefaultPayload(l7[:0], DefaultPayloadLen)), nil
}

// Compose appends to dst the Ethernet frame that Open vSwitch's flow_compose
// builds for k with L7 payload l7 (see the rules above) and returns the
// extended slice. Metadata, tunnel and conntrack fields are not part of the
// frame. It allocates only if dst lacks capacity; a payload that makes an IP
// packet longer than 65535 bytes wraps its length fields, as in Open vSwitch.
func Compose(dst []byte, k *Key, l7 []byte) []byte {
	dst = append(dst, k.EthDst[:]...)
	dst = append(dst, k.EthSrc[:]...)
	if k.EthType < EthTypeMin {
		// 802.3: Open vSwitch writes the frame's length so far and stops.
		return binary.BigEndian.AppendUint16(dst, ethHeaderLen)
	}
	for _, v := range k.VLANs {
		if v.TCI&VLANCFI != 0 {
			dst = binary.BigEndian.AppendUint16(dst, v.TPID)
			dst = binary.BigEndian.AppendUint16(dst, v.TCI&^VLANCFI)
		}
	}
	dst = binary.BigEndian.AppendUint16(dst, k.EthType)
	switch k.EthType {
	case EthTypeIPv4:
		return composeIPv4(dst, k, l7)
	case EthTypeIPv6:
		return composeIPv6(dst, k, l7)
	case EthTypeARP, EthTypeRARP:
		return composeARP(dst, k)
	case EthTypeMPLS, EthTypeMPLSMcst:
		dst = binary.BigEndian.AppendUint32(dst, k.MPLSLSE)
		if k.MPLSLSE&mplsBOS == 0 {
			dst = append(dst, make([]byte, mplsFillLSEs*mplsLSELen)...)
		}
	}
	return dst
}

// ComposeLen appends to dst the frame Compose builds for k without payload,
// padded with zeros to size bytes the way netdev-dummy/receive --len does
// (see above). It fails if size is below MinComposeLen or the unpadded frame
// is longer than size; dst is then returned unchanged.
func ComposeLen(dst []byte, k *Key, size int) ([]byte, error) {
	if size < MinComposeLen {
		return dst, fmt.Errorf("compose: length %d below the minimum %d", size, MinComposeLen)
	}
	start := len(dst)
	out := Compose(dst, k, nil)
	n := len(out) - start
	if n > size {
		return out[:start], fmt.Errorf("compose: the frame has %d bytes, more than the length %d", n, size)
	}
	if n == size {
		return out, nil
	}
	extra := size - n
	out = append(out, make([]byte, extra)...)
	frame := out[start:]
	if k.EthType < EthTypeMin {
		binary.BigEndian.PutUint16(frame[ethTypeOff:], uint16(size))
		return out, nil
	}
	if k.EthType != EthTypeIPv4 && k.EthType != EthTypeIPv6 {
		return out, nil
	}
	// The IP header follows the Ethernet header and the present tags.
	ip := ethHeaderLen
	for _, v := range k.VLANs {
		if v.TCI&VLANCFI != 0 {
			ip += vlanTagLen
		}
	}
	var l4 []byte
	var pseudo uint32
	if k.EthType == EthTypeIPv4 {
		h := frame[ip:]
		l4 = h[ipv4MinHeaderLen:]
		binary.BigEndian.PutUint16(h[ipv4TotLenOff:], uint16(len(h)))
		binary.BigEndian.PutUint16(h[ipv4CsumOff:], 0)
		binary.BigEndian.PutUint16(h[ipv4CsumOff:], packet.Checksum(h[:ipv4MinHeaderLen]))
		pseudo = packet.PseudoHeaderIPv4(k.NwSrc, k.NwDst, k.NwProto, len(l4))
	} else {
		h := frame[ip:]
		l4 = h[ipv6HeaderLen:]
		binary.BigEndian.PutUint16(h[ipv6PayloadLenOff:], uint16(len(l4)))
		pseudo = packet.PseudoHeaderIPv6(k.IPv6Src[:], k.IPv6Dst[:], k.NwProto, len(l4))
	}
	if !laterFragment(k) && k.NwProto == IPProtoUDP {
		binary.BigEndian.PutUint16(l4[udpLenOff:], uint16(len(l4)+extra))
	}
	if w := l4Wires[k.NwProto]; w.csum != csumNone && !laterFragment(k) {
		binary.BigEndian.PutUint16(l4[w.csumOff:], 0)
	}
	l4Checksum(l4, k, pseudo)
	return out, nil
}

// appendZeros appends n zero bytes and returns the extended slice and the
// offset of the first of them.
func appendZeros(dst []byte, n int) ([]byte, int) {
	off := len(dst)
	return append(dst, make([]byte, n)...), off
}

func composeARP(dst []byte, k *Key) []byte {
	dst, off := appendZeros(dst, arpEthIPv4Len)
	a := dst[off:]
	binary.BigEndian.PutUint16(a[arpHrdOff:], arpHrdEthernet)
	binary.BigEndian.PutUint16(a[arpProOff:], EthTypeIPv4)
	a[arpHlnOff], a[arpPlnOff] = 6, 4
	binary.BigEndian.PutUint16(a[arpOpOff:], uint16(k.NwProto))
	if k.NwProto == arpOpRequest || k.NwProto == arpOpReply {
		copy(a[arpShaOff:], k.ArpSha[:])
		binary.BigEndian.PutUint32(a[arpSpaOff:], k.NwSrc)
		copy(a[arpThaOff:], k.ArpTha[:])
		binary.BigEndian.PutUint32(a[arpTpaOff:], k.NwDst)
	}
	return dst
}

func composeIPv4(dst []byte, k *Key, l7 []byte) []byte {
	dst, ip := appendZeros(dst, ipv4MinHeaderLen)
	h := dst[ip:]
	h[ipv4VerIHLOff] = ipv4VerIHL
	h[ipv4TOSOff] = k.NwTos
	h[ipv4TTLOff] = k.NwTTL
	h[ipv4ProtoOff] = k.NwProto
	binary.BigEndian.PutUint32(h[ipv4SrcOff:], k.NwSrc)
	binary.BigEndian.PutUint32(h[ipv4DstOff:], k.NwDst)
	if k.NwFrag&FragAny != 0 {
		fo := uint16(ipv4MF)
		if k.NwFrag&FragLater != 0 {
			fo |= ipv4LaterFragOff
		}
		binary.BigEndian.PutUint16(h[ipv4FragOff:], fo)
	}

	l4 := len(dst)
	dst = composeL4(dst, k, l7)
	h = dst[ip:]
	binary.BigEndian.PutUint16(h[ipv4TotLenOff:], uint16(len(h)))
	binary.BigEndian.PutUint16(h[ipv4CsumOff:], packet.Checksum(h[:ipv4MinHeaderLen]))
	l4Checksum(dst[l4:], k, packet.PseudoHeaderIPv4(k.NwSrc, k.NwDst, k.NwProto, len(dst)-l4))
	return dst
}

func composeIPv6(dst []byte, k *Key, l7 []byte) []byte {
	dst, ip := appendZeros(dst, ipv6HeaderLen)
	h := dst[ip:]
	binary.BigEndian.PutUint32(h[ipv6VerTCFLOff:], ipv6Version|uint32(k.NwTos)<<20|k.IPv6Label&ipv6LabelMask)
	h[ipv6NextOff] = k.NwProto
	h[ipv6HopLimitOff] = k.NwTTL
	copy(h[ipv6SrcOff:], k.IPv6Src[:])
	copy(h[ipv6DstOff:], k.IPv6Dst[:])

	l4 := len(dst)
	dst = composeL4(dst, k, l7)
	n := len(dst) - l4
	binary.BigEndian.PutUint16(dst[ip+ipv6PayloadLenOff:], uint16(n))
	l4Checksum(dst[l4:], k, packet.PseudoHeaderIPv6(k.IPv6Src[:], k.IPv6Dst[:], k.NwProto, n))
	return dst
}

// laterFragment reports whether k is a non-first fragment, which has no L4
// header.
func laterFragment(k *Key) bool { return k.NwFrag&FragMask == FragMask }

// composeL4 appends the L4 header of k and, where the protocol carries one,
// the payload l7. Checksums are left zero.
func composeL4(dst []byte, k *Key, l7 []byte) []byte {
	w := l4Wires[k.NwProto]
	if laterFragment(k) || w.hdrLen == 0 {
		return dst
	}
	dst, off := appendZeros(dst, int(w.hdrLen))
	h := dst[off:]
	switch k.NwProto {
	case IPProtoTCP, IPProtoUDP, IPProtoSCTP:
		binary.BigEndian.PutUint16(h[l4SrcPortOff:], k.TpSrc)
		binary.BigEndian.PutUint16(h[l4DstPortOff:], k.TpDst)
	default: // ICMP, IGMP, ICMPv6: the key keeps type and code in the ports.
		h[icmpTypeOff] = uint8(k.TpSrc)
		h[icmpCodeOff] = uint8(k.TpDst)
	}

	withL7 := false
	switch k.NwProto {
	case IPProtoTCP:
		flags := k.TCPFlags & tcpFlagsMask
		binary.BigEndian.PutUint16(h[tcpOffFlagsOff:], tcpDataOff5|flags)
		withL7 = flags&(tcpSYN|tcpFIN|tcpRST) == 0
	case IPProtoUDP:
		binary.BigEndian.PutUint16(h[udpLenOff:], uint16(udpHeaderLen+len(l7)))
		withL7 = true
	case IPProtoICMP:
		withL7 = h[icmpCodeOff] == 0 && icmpEchoTypes[h[icmpTypeOff]]
	case IPProtoIGMP:
		binary.BigEndian.PutUint32(h[igmpGroupOff:], k.IGMPGroup)
	case IPProtoICMPv6:
		if isND(h) {
			return composeND(dst, h, k)
		}
		withL7 = h[icmpCodeOff] == 0 && icmpv6EchoTypes[h[icmpTypeOff]]
	}
	if withL7 {
		dst = append(dst, l7...)
	}
	return dst
}

// composeND completes the Neighbor Solicitation/Advertisement whose ICMPv6
// header h was just appended to dst.
func composeND(dst, h []byte, k *Key) []byte {
	binary.BigEndian.PutUint32(h[ndReservedOff:], k.NDReserved)
	dst = append(dst, k.NDTarget[:]...)
	for _, o := range [...]struct {
		typ uint8
		lla *[6]byte
	}{{ndOptSourceLLA, &k.ArpSha}, {ndOptTargetLLA, &k.ArpTha}} {
		if *o.lla != ([6]byte{}) {
			dst = append(dst, o.typ, ndOptLLALen/8)
			dst = append(dst, o.lla[:]...)
		}
	}
	return dst
}

// l4Checksum fills the checksum of the L4 message b (header and payload)
// composed for k, given the partial sum of the IP pseudo-header.
func l4Checksum(b []byte, k *Key, pseudo uint32) {
	w := l4Wires[k.NwProto]
	if laterFragment(k) || len(b) < int(w.hdrLen) {
		return
	}
	var sum uint16
	switch w.csum {
	case csumPseudo:
		sum = packet.Fold(packet.ChecksumPartial(b, pseudo))
	case csumPlain:
		sum = packet.Checksum(b)
	default:
		return
	}
	binary.BigEndian.PutUint16(b[w.csumOff:], sum)
}
