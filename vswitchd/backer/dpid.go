package backer

import (
	"fmt"
	"slices"

	"github.com/gvs-project/gvs/ovsdb/bridge"
	"github.com/gvs-project/gvs/ovsdb/model"
)

// A bridge's Ethernet address and datapath ID, chosen as Open vSwitch
// chooses them (bridge.c, bridge_configure_datapath_id), so that both
// stay the same across restarts and a controller sees the same switch:
//
//   - the address is other_config:hwaddr when that is a unicast, non-zero
//     MAC; else the lowest MAC among the bridge's other ports that is
//     universally administered (a physical NIC's: not multicast, not
//     locally administered, not zero); else one made from the Bridge row's
//     UUID (defaultEA), which the database keeps from one run to the next;
//   - the local port takes that address;
//   - the datapath ID is other_config:datapath-id when valid, else the
//     address as a number.
//
// Open vSwitch also lets Port.mac name a port's address and leaves mirror
// output ports out of the choice; gvs does neither.

// defaultEA makes a bridge's fallback address from its row's UUID as
// Open vSwitch does: the first six bytes of the UUID as it holds it in
// memory (four 32-bit words, little-endian on the machines gvs runs on),
// so "1e1e064a-268d-44fe-..." gives 4a:06:1e:1e:fe:44, with the multicast
// bit cleared and the locally administered bit set. A UUID that does not
// parse (a bridge configured without a database row) gives a random one.
func defaultEA(uuid string) [6]byte {
	var ea [6]byte
	u, err := model.ParseUUID(uuid)
	if err != nil {
		randomMAC(&ea)
		return ea
	}
	// The first two words, in the order the string writes them.
	ea = [6]byte{u[3], u[2], u[1], u[0], u[7], u[6]}
	ea[0] = ea[0]&^1 | 2
	return ea
}

// universalMAC reports whether a port's MAC may represent the bridge:
// unicast, universally administered and non-zero.
func universalMAC(m [6]byte) bool {
	return m[0]&1 == 0 && m[0]&2 == 0 && m != [6]byte{}
}

// pickEA returns the bridge's Ethernet address (see above). Called with
// the switch's mu held.
func (b *dpBridge) pickEA() [6]byte {
	if b.hasHW {
		return b.hwaddr
	}
	var best [6]byte
	found := false
	for _, p := range b.ports {
		if p.dev == nil || p.ofport == bridge.OFPPLocal {
			continue
		}
		m := p.dev.MAC()
		if universalMAC(m) && (!found || slices.Compare(m[:], best[:]) < 0) {
			best, found = m, true
		}
	}
	if !found {
		return b.defaultEA
	}
	return best
}

// applyHWAddr gives the bridge's local port the bridge's address and
// reports whether it changed. Called with the switch's mu held.
func (b *dpBridge) applyHWAddr() bool {
	local := b.ports[b.name]
	if local == nil || local.dev == nil || local.ofport != bridge.OFPPLocal {
		return false
	}
	want := b.pickEA()
	if local.dev.MAC() == want {
		return false
	}
	local.dev.SetMAC(want) // best effort: a refused MAC leaves the old one
	return local.dev.MAC() == want
}

// datapathIDLocked is the bridge's datapath ID: other_config:datapath-id,
// else its Ethernet address. Called with the switch's mu held.
func (b *dpBridge) datapathIDLocked() uint64 {
	if b.cfgDPID != 0 {
		return b.cfgDPID
	}
	var dpid uint64
	for _, x := range b.pickEA() {
		dpid = dpid<<8 | uint64(x)
	}
	return dpid
}

// portsConfigured runs at the end of each reconfiguration of a bridge's
// ports, as Open vSwitch's bridge_reconfigure ends with the datapath ID.
// Called with the switch's mu held.
func (s *Backer) portsConfigured(b *dpBridge, ports []bridge.PortConfig) {
	configured := map[string]bool{}
	for _, pc := range ports {
		for _, ic := range pc.Interfaces {
			configured[ic.Name] = true
		}
	}
	s.portErrs.forget(b.name, configured)
	s.configureDatapathID(b)
}

// configureDatapathID runs once a bridge's ports are configured: the
// local port takes the bridge's address, and a new datapath ID is logged
// as Open vSwitch logs it. Called with the switch's mu held.
func (s *Backer) configureDatapathID(b *dpBridge) {
	if b.applyHWAddr() {
		s.syncPorts(b) // the local port's address is in its OpenFlow port
	}
	if dpid := b.datapathIDLocked(); dpid != b.loggedDPID {
		b.loggedDPID = dpid
		s.cfg.Logger("bridge").Info(fmt.Sprintf("bridge %s: using datapath ID %016x", b.name, dpid))
	}
}
