package flow

import "github.com/gvs-project/gvs/datapath/packet"

// U128 is a 128-bit value (ct_label, xxreg) with Hi holding the most
// significant 64 bits.
type U128 struct {
	Hi, Lo uint64
}

// VLAN is one 802.1Q/802.1ad header as extracted: TPID and TCI. A TCI
// with VLANCFI set means the tag is present (Open vSwitch's convention for
// vlan_tci in flows, with the CFI/DEI bit repurposed as "present").
type VLAN struct {
	TPID uint16
	TCI  uint16
}

// VLANCFI marks a present VLAN tag in VLAN.TCI.
const VLANCFI = 0x1000

// Key is the datapath flow key. Its field order is its wire to the
// classifier: do not reorder fields without updating the segment
// constants (a test checks them).
type Key struct {
	// --- metadata segment ---
	RecircID    uint32
	DPHash      uint32
	InPort      uint32
	PktMark     uint32
	SkbPriority uint32
	CtMark      uint32
	CtZone      uint16
	CtState     uint8
	CtNwProto   uint8
	CtNwSrc     uint32
	CtNwDst     uint32
	CtTpSrc     uint16
	CtTpDst     uint16
	CtLabel     [16]byte
	CtIPv6Src   [16]byte
	CtIPv6Dst   [16]byte

	// --- tunnel segment ---
	TunID          uint64
	TunSrc         uint32
	TunDst         uint32
	TunIPv6Src     [16]byte
	TunIPv6Dst     [16]byte
	TunFlags       uint16
	TunTos         uint8
	TunTTL         uint8
	TunTpSrc       uint16
	TunTpDst       uint16
	TunGbpID       uint16
	TunGbpFlags    uint8
	_              [5]byte
	TunMetaPresent uint64
	TunMeta        [packet.TunMetaBytes]byte

	// --- L2 segment ---
	EthDst     [6]byte
	EthType    uint16 // innermost Ethertype; 0x05ff for 802.3 without SNAP
	EthSrc     [6]byte
	_          [2]byte
	VLANs      [2]VLAN // outer first; TCI without VLANCFI means absent
	MPLSLSE    uint32  // first MPLS label stack entry (label, tc, bos, ttl)
	PacketType uint32  // (namespace << 16) | type; 0 for Ethernet

	// --- L3 segment ---
	NwSrc     uint32 // IPv4 source, or ARP SPA
	NwDst     uint32 // IPv4 destination, or ARP TPA
	IPv6Src   [16]byte
	IPv6Dst   [16]byte
	IPv6Label uint32
	NwProto   uint8 // IP protocol, or the low 8 bits of the ARP opcode
	NwTos     uint8 // DSCP and ECN, as the IPv4 TOS / IPv6 traffic class byte
	NwTTL     uint8
	NwFrag    uint8   // FragAny | FragLater
	ArpSha    [6]byte // ARP SHA, or ND source link-layer address
	_         [2]byte
	ArpTha    [6]byte // ARP THA, or ND target link-layer address
	_         [2]byte
	NDTarget  [16]byte // IPv6 ND target

	// --- L4 segment ---
	TpSrc      uint16 // TCP/UDP/SCTP source port, or ICMP type
	TpDst      uint16 // TCP/UDP/SCTP destination port, or ICMP code
	TCPFlags   uint16 // low 12 bits of the TCP flags
	NDOptType  uint8  // ND options type (nd_ext)
	_          uint8
	NDReserved uint32 // the ND reserved word (R/S/O flags and reserved bits), as nd_reserved (nd_ext)
	IGMPGroup  uint32 // IGMP group address
}

// Fragment bits of Key.NwFrag, as Open vSwitch's FLOW_NW_FRAG_*.
const (
	FragAny   = 1 << 0 // the packet is a fragment
	FragLater = 1 << 1 // the packet is a non-first fragment
	FragMask  = FragAny | FragLater
)

// Connection tracking state bits of Key.CtState, as Open vSwitch's CS_*.
const (
	CsNew         = 1 << 0
	CsEstablished = 1 << 1
	CsRelated     = 1 << 2
	CsReplyDir    = 1 << 3
	CsInvalid     = 1 << 4
	CsTracked     = 1 << 5
	CsSrcNAT      = 1 << 6
	CsDstNAT      = 1 << 7
)

// Ethertypes gvs extracts.
const (
	EthTypeIPv4     = 0x0800
	EthTypeARP      = 0x0806
	EthTypeRARP     = 0x8035
	EthTypeVLAN     = 0x8100
	EthTypeQinQ     = 0x88a8
	EthTypeIPv6     = 0x86dd
	EthTypeMPLS     = 0x8847
	EthTypeMPLSMcst = 0x8848
	// EthTypeNone is Open vSwitch's FLOW_DL_TYPE_NONE: an 802.3 frame
	// without a SNAP header.
	EthTypeNone = 0x05ff
	// EthTypeMin is the smallest value that is an Ethertype rather than
	// an 802.3 length.
	EthTypeMin = 0x0600
)

// IP protocol numbers gvs extracts.
const (
	IPProtoICMP   = 1
	IPProtoIGMP   = 2
	IPProtoTCP    = 6
	IPProtoUDP    = 17
	IPProtoICMPv6 = 58
	IPProtoSCTP   = 132
)

// Mask has the same layout as Key: a set bit means the key bit matters.
type Mask Key

// Match is a key with a mask; Key bits outside Mask are zero.
type Match struct {
	Key  Key
	Mask Mask
}
