package xlate

import (
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/internal/ovshash"
	"github.com/gvs-project/gvs/ofproto/bond"
	"github.com/gvs-project/gvs/ofproto/lacp"
)

// Bundle is a bonded port (a Port row with several interfaces, or with
// LACP): NORMAL treats its members as one port of the MAC table, admits
// what the bond admits on each member and sends through the member the
// bond chooses for the packet (Open vSwitch's xbundle with a bond).
type Bundle struct {
	Name string
	// FDB is the bond's number in the bridge's MAC table (BondFDBPort):
	// sources seen on any member are learned on it.
	FDB  uint32
	Bond *bond.Bond
	// LACP is the bond's LACP, nil without: a member's Slow Protocols
	// frames go to it, not to the pipeline (special.go).
	LACP *lacp.LACP
}

// BondFDBPort is the number bond n of a bridge has in the bridge's MAC
// table, outside the range of datapath port numbers and of
// VirtualFDBPort's.
func BondFDBPort(n uint16) uint32 { return bondFDBBase | uint32(n) }

const bondFDBBase = 0xfffd0000

// BondUse is a balanced bond a translation sends through and the bucket
// hash of its packets: the upcall layer credits the megaflow's bytes to
// that bucket (Bond.Account).
type BondUse struct {
	Bond *bond.Bond
	Hash uint32
}

// bondInput applies the bond's admissibility to a packet received on
// member in (bond_check_admissibility) and learns it on the bond: false
// drops the packet. The verdict reads the destination's multicast bit.
func (c *ctx) bondInput(in *Port, p *odp.MACLearnParams) bool {
	bd := in.Bundle
	c.wc.Key.EthDst[0] |= 0x01
	switch bd.Bond.Admit(in.Name, c.flow.Key.EthDst) {
	case bond.Drop:
		c.tr.notef("bonding refused admissibility, dropping")
		return false
	case bond.DropIfMoved:
		p.DropIfMoved = true
	}
	p.LearnPort = bd.FDB
	return true
}

// bondOutput picks the member a packet to bundle bd leaves by
// (bond_choose_output_member): balance-slb hashes the source MAC and the
// VLAN, balance-tcp the L3/L4 5-tuple, active-backup takes the active
// member; the fields hashed are un-wildcarded. ok is false when no member
// can send.
func (c *ctx) bondOutput(bd *Bundle, vlan uint16) (odpPort uint32, ok bool) {
	var h uint32
	k, w := &c.flow.Key, &c.wc.Key
	switch bd.Bond.Mode() {
	case bond.BalanceSLB:
		w.EthSrc = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		h = bond.HashMAC(k.EthSrc, vlan, bd.Bond.Basis())
	case bond.BalanceTCP:
		w.NwSrc, w.NwDst, w.NwProto = ^uint32(0), ^uint32(0), 0xff
		w.IPv6Src = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		w.IPv6Dst = w.IPv6Src
		w.TpSrc, w.TpDst = 0xffff, 0xffff
		h = bd.Bond.Basis()
		h = ovshash.Add(h, k.NwSrc)
		h = ovshash.Add(h, k.NwDst)
		h = ovshash.Add(h, ovshash.Bytes(k.IPv6Src[:], 0)^ovshash.Bytes(k.IPv6Dst[:], 0))
		h = ovshash.Add(h, uint32(k.NwProto)<<16|uint32(k.EthType))
		h = ovshash.Finish(ovshash.Add(h, uint32(k.TpSrc)<<16|uint32(k.TpDst)), 20)
	}
	_, ofport, ok := bd.Bond.Output(h)
	if !ok {
		return 0, false
	}
	if bd.Bond.Mode() != bond.ActiveBackup {
		// What the megaflow sends counts towards the bucket's load
		// (bond_account), from which the bond rebalances.
		c.out.Bonds = append(c.out.Bonds, BondUse{Bond: bd.Bond, Hash: h})
	}
	m := c.snap.Ports[ofport]
	if m == nil || m.ODP == NoODP {
		return 0, false
	}
	return m.ODP, true
}
