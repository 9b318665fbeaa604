package xlate

import (
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/cfm"
	"github.com/gvs-project/gvs/ofproto/lacp"
)

// processSpecial recognises a packet the switch itself handles on port p
// (Open vSwitch's process_special): a CCM for the port's CFM
// maintenance point, a LACPDU on a member of a LACP bond, a BFD control
// packet for the port's session. Such a packet does not enter the OpenFlow pipeline; the
// translation records the session (Out.BFD, processed by the switch with
// the packet) and makes the megaflow a slow-path one, so that every
// control packet reaches the switch. The flow bits the check read are
// un-wildcarded whatever the answer, as bfd_should_process_flow does.
func (c *ctx) processSpecial(p *Port) bool {
	if p != nil && p.CFM != nil {
		k := &c.flow.Key
		f := cfm.Flow{DlDst: k.EthDst, DlType: k.EthType, TunID: k.TunID}
		var wc cfm.Wildcards
		ok := p.CFM.ShouldProcess(&f, &wc)
		if wc.DlDst {
			c.wc.Key.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		}
		if wc.TunID {
			c.wc.Key.TunID = ^uint64(0)
		}
		if ok {
			c.out.CFM = append(c.out.CFM, p.CFM)
			c.out.SlowReason |= odp.SlowCFM
			return true
		}
	}
	if p != nil && p.Bundle != nil && p.Bundle.LACP != nil {
		// A member of a LACP bond: Slow Protocols frames are LACP's
		// (Open vSwitch's lacp_process_packet on ETH_TYPE_LACP).
		if c.flow.Key.EthType == lacp.EtherType {
			c.out.LACP = append(c.out.LACP, p)
			c.out.SlowReason |= odp.SlowLACP
			return true
		}
	}
	if p != nil && c.stpSpecial(p) { // stp.go
		return true
	}
	if p == nil || p.BFD == nil {
		return false
	}
	k := &c.flow.Key
	f := bfd.Flow{DlDst: k.EthDst, DlType: k.EthType, NwProto: k.NwProto, NwFragLater: k.NwFrag&flow.FragLater != 0,
		NwDst: k.NwDst, TpDst: k.TpDst, TunID: k.TunID}
	var wc bfd.Wildcards
	ok := p.BFD.ShouldProcess(&f, &wc)
	w := &c.wc.Key
	if wc.DlDst {
		w.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	if wc.NwProto {
		w.NwProto = 0xff
	}
	if wc.NwDst {
		w.NwDst = ^uint32(0)
	}
	if wc.TunID {
		w.TunID = ^uint64(0)
	}
	w.TpDst |= wc.TpDst
	if !ok {
		return false
	}
	c.out.BFD = append(c.out.BFD, p.BFD)
	c.out.SlowReason |= odp.SlowBFD
	return true
}

// slowPath replaces the datapath actions of a translation that the
// switch must see every packet of by Open vSwitch's slow-path userspace
// action (compose_slow_path): userspace(pid=0,slow_path(REASON)). A
// trace keeps the translated actions and says why (as ofproto/trace).
func (c *ctx) slowPath() {
	if c.out.SlowReason == 0 || c.err != nil || c.in.Trace != nil || c.in.OFActions != nil {
		// A packet-out runs its translated actions once, whatever
		// the reason (Open vSwitch executes a packet-out's actions).
		return
	}
	ck := odp.Cookie{Type: odp.CookieSlowPath, InPort: 0xffff, SlowPathReason: c.out.SlowReason}
	c.out.SlowActions = c.out.Actions
	c.out.Actions = odp.Actions{odp.Userspace(0, odp.UserspaceParams{Userdata: ck.Marshal()})}
}

// IsSlowPathCookie reports whether userspace userdata is a slow-path
// cookie (the switch then translates the packet again and handles it).
func IsSlowPathCookie(b []byte) bool {
	ck, ok := odp.ParseCookie(b)
	return ok && ck.Type == odp.CookieSlowPath
}
