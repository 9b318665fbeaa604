package mf

import "github.com/gvs-project/gvs/datapath/flow"

// NumRegs is the number of 32-bit registers (reg0..reg15). xreg N is the
// pair (reg 2N, reg 2N+1) and xxreg N the quad (reg 4N..4N+3), the first
// register holding the most significant bits, as in Open vSwitch.
const NumRegs = 16

// Flow is what OpenFlow translation sees of a packet: the datapath key plus
// pipeline-only state. In a Flow the Key's InPort is an OpenFlow port number
// (ofp_port_t, 16-bit range), not a datapath port.
type Flow struct {
	flow.Key
	Regs         [NumRegs]uint32
	Metadata     uint64
	ConjID       uint32
	ActsetOutput uint32 // OpenFlow port, 16-bit range
	// ERSPAN and GTP-U tunnel options and the NSH header: flows can
	// match and set them (Open vSwitch lists them in its table features)
	// but the datapath key carries none of them, so packets see zeros.
	TunErspanIdx   uint32 // low 20 bits
	NshSPI         uint32 // low 24 bits
	NshC           [4]uint32
	TunErspanVer   uint8 // low 4 bits
	TunErspanDir   uint8 // low bit
	TunErspanHwid  uint8 // low 6 bits
	TunGtpuFlags   uint8
	TunGtpuMsgtype uint8
	NshFlags       uint8
	NshTTL         uint8 // low 6 bits
	NshMdtype      uint8
	NshNp          uint8
	NshSI          uint8
	_              [6]byte
}

// TunMap says where each tun_metadataN field lives in Key.TunMeta: Len 0
// means unmapped. A Match carries its own (like Open vSwitch's match-local
// tun_metadata allocation) until a switch-wide TLV table maps it.
type TunMap struct {
	Opts [64]TunLoc
	Used uint8 // bytes of Key.TunMeta allocated so far
}

// TunLoc is the location of one tun_metadata field in Key.TunMeta.
type TunLoc struct {
	Off, Len uint8
	Masked   bool // matched with an explicit mask (re-encoded masked)
}

// Match is a flow with a wildcard mask: a 1-bit in Mask means the
// corresponding bit of Flow is matched. Flow bits outside Mask are zero.
type Match struct {
	Flow Flow
	Mask Flow
	Tun  TunMap
}

// IsCatchAll reports whether the match matches every packet.
func (m *Match) IsCatchAll() bool { return m.Mask == Flow{} }
