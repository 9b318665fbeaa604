package xlate

import (
	"net/netip"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mcsnoop"
)

// allHosts6 is ff02::1, which RFC 4541 2.1.2 floods like 224.0.0.0/24.
var allHosts6 = netip.AddrFrom16([16]byte{0xff, 0x02, 15: 1})

// McastSnooping is a bridge's multicast snooping as translation uses it
// (Bridge.mcast_snooping_enable): NORMAL sends IGMP and MLD through the
// slow path to learn from them, and multicast data only to the ports
// that joined its group, the routers and the flood ports.
type McastSnooping struct {
	Table *mcsnoop.Table
	// Now is the switch's clock in milliseconds (time/warp moves it).
	Now func() int64
}

// SetMcastSnooping turns multicast snooping on (m not nil) or off.
func (x *Xlator) SetMcastSnooping(m *McastSnooping) { x.mcast.Store(m) }

// McastSnooping returns the bridge's multicast snooping, nil when off.
func (x *Xlator) McastSnooping() *McastSnooping { return x.mcast.Load() }

// McastPortID is the name a port has in the snooping database: its bond's
// (Port row) name, or its own.
func McastPortID(p *Port) mcsnoop.PortID {
	if p.Bundle != nil {
		return p.Bundle.Name
	}
	return p.Name
}

// mcastOutputs decides where NORMAL sends a packet under multicast
// snooping, as Open vSwitch's xlate_normal: snooped reports its ports
// only for a multicast destination (not broadcast) over IPv4 or IPv6. It
// returns snooped false when snooping does not apply (the packet goes
// the usual way); otherwise only is the set of ports the packet may
// leave by, nil to flood. IGMP and MLD update the database when the
// translation has side effects, and make the megaflow a slow-path one.
func (c *ctx) mcastOutputs(in *Port, vlan uint16) (only map[mcsnoop.PortID]bool, snooped bool) {
	ms := c.x.mcast.Load()
	k, w := &c.flow.Key, &c.wc.Key
	if ms == nil {
		return nil, false
	}
	w.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if k.EthDst[0]&1 == 0 || k.EthDst == [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff} ||
		(k.EthType != flow.EthTypeIPv4 && k.EthType != flow.EthTypeIPv6) {
		return nil, false
	}
	t, inID := ms.Table, McastPortID(in)
	w.NwProto = 0xff
	switch {
	case k.EthType == flow.EthTypeIPv4 && k.NwProto == flow.IPProtoIGMP:
		w.TpSrc = 0xffff
		c.out.SlowReason |= odp.SlowAction
		typ := uint8(k.TpSrc)
		if (mcsnoop.IsIGMPMembership(typ) || mcsnoop.IsIGMPQuery(typ)) && c.in.SideEffects && c.in.Packet != nil {
			c.mcastLearn(ms, in, inID, vlan, true)
		}
		if !mcsnoop.IsIGMPMembership(typ) {
			c.tr.notef("multicast traffic, flooding")
			return nil, true
		}
		return c.mcastReportPorts(t, vlan, inID), true
	case k.EthType == flow.EthTypeIPv6 && k.NwProto == flow.IPProtoICMPv6 && mcsnoop.IsMLD(uint8(k.TpSrc)):
		w.TpSrc = 0xffff
		c.out.SlowReason |= odp.SlowAction
		if c.in.SideEffects && c.in.Packet != nil {
			c.mcastLearn(ms, in, inID, vlan, false)
		}
		if !mcsnoop.IsMLDReport(uint8(k.TpSrc)) {
			c.tr.notef("MLD query, flooding")
			return nil, true
		}
		return c.mcastReportPorts(t, vlan, inID), true
	}
	var grp netip.Addr
	if k.EthType == flow.EthTypeIPv4 {
		w.NwDst = ^uint32(0)
		if k.NwDst>>8 == 0xe00000 { // 224.0.0.0/24
			c.tr.notef("RFC4541: section 2.1.2, item 2, flooding")
			return nil, true
		}
		grp = netip.AddrFrom4([4]byte{byte(k.NwDst >> 24), byte(k.NwDst >> 16), byte(k.NwDst >> 8), byte(k.NwDst)})
	} else {
		w.IPv6Dst = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		grp = netip.AddrFrom16(k.IPv6Dst)
		if grp == allHosts6 {
			c.tr.notef("RFC4541: section 2.1.2, item 2, flooding")
			return nil, true
		}
	}
	only = map[mcsnoop.PortID]bool{}
	if members, ok := t.Lookup(grp, vlan); ok {
		for _, p := range members {
			c.mcastAdd(only, p, inID, "forwarding to mcast group port")
		}
		for _, p := range t.FloodPorts() {
			c.mcastAdd(only, p, inID, "forwarding to mcast flood port")
		}
		for _, p := range t.Mrouters(vlan) {
			c.mcastAdd(only, p, inID, "forwarding to mcast router port")
		}
		return only, true
	}
	if t.FloodUnregistered() {
		c.tr.notef("unregistered multicast, flooding")
		return nil, true
	}
	for _, p := range t.Mrouters(vlan) {
		c.mcastAdd(only, p, inID, "forwarding to mcast router port")
	}
	for _, p := range t.FloodPorts() {
		c.mcastAdd(only, p, inID, "forwarding to mcast flood port")
	}
	return only, true
}

// mcastReportPorts are where a membership report goes: the routers of
// its VLAN and the flood-reports ports (RFC 4541 2.1.1: not to hosts).
func (c *ctx) mcastReportPorts(t *mcsnoop.Table, vlan uint16, inID mcsnoop.PortID) map[mcsnoop.PortID]bool {
	only := map[mcsnoop.PortID]bool{}
	for _, p := range t.Mrouters(vlan) {
		c.mcastAdd(only, p, inID, "forwarding to mcast router port")
	}
	for _, p := range t.ReportPorts() {
		c.mcastAdd(only, p, inID, "forwarding report to mcast flagged port")
	}
	return only
}

func (c *ctx) mcastAdd(only map[mcsnoop.PortID]bool, p, in mcsnoop.PortID, why string) {
	if p == in {
		c.tr.notef("mcast port is input port, dropping")
		return
	}
	c.tr.notef("%s", why)
	only[p] = true
}

// mcastLearn feeds the IGMP or MLD message of the packet being
// translated to the database. Flood ports are not learned from; a
// message with a bad checksum is ignored.
func (c *ctx) mcastLearn(ms *McastSnooping, in *Port, inID mcsnoop.PortID, vlan uint16, igmp bool) {
	for _, p := range ms.Table.FloodPorts() {
		if p == inID {
			return
		}
	}
	k := &c.flow.Key
	msg := mcastMessage(c.in.Packet.L3Data(), igmp)
	var m mcsnoop.Message
	var err error
	if igmp {
		src := netip.AddrFrom4([4]byte{byte(k.NwSrc >> 24), byte(k.NwSrc >> 16), byte(k.NwSrc >> 8), byte(k.NwSrc)})
		m, err = mcsnoop.DecodeIGMP(src, msg)
	} else {
		m, err = mcsnoop.DecodeMLD(netip.AddrFrom16(k.IPv6Src), netip.AddrFrom16(k.IPv6Dst), msg)
	}
	if err != nil {
		proto := "IGMP"
		if !igmp {
			proto = "MLD"
		}
		c.tr.notef("multicast snooping received bad %s checksum on port %s in VLAN %d", proto, in.Name, vlan)
		return
	}
	if n := ms.Table.Apply(m, vlan, inID, ms.Now()); n > 0 {
		c.tr.notef("multicast snooping processed %d addresses on port %s in VLAN %d", n, in.Name, vlan)
	}
}

// mcastMessage returns the IGMP or MLD message of an IPv4 or IPv6
// packet whose network header starts l3: the payload up to the IP
// length, after IPv4 options or IPv6 extension headers.
func mcastMessage(l3 []byte, igmp bool) []byte {
	if igmp {
		if len(l3) < 20 {
			return nil
		}
		hl, total := int(l3[0]&0xf)*4, int(l3[2])<<8|int(l3[3])
		if hl < 20 || total < hl || total > len(l3) {
			return nil
		}
		return l3[hl:total]
	}
	if len(l3) < 40 {
		return nil
	}
	end := 40 + (int(l3[4])<<8 | int(l3[5]))
	if end > len(l3) {
		return nil
	}
	next, off := l3[6], 40
	// Hop-by-hop, routing and destination options carry MLD's router
	// alert; anything else ends the walk.
	for next == 0 || next == 43 || next == 60 {
		if off+2 > end {
			return nil
		}
		next, off = l3[off], off+(int(l3[off+1])+1)*8
	}
	if next != flow.IPProtoICMPv6 || off > end {
		return nil
	}
	return l3[off:end]
}
