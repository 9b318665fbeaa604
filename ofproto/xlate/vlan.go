package xlate

import (
	"slices"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// VLANMode is a port's vlan_mode (Port table): how NORMAL maps the
// frames it receives to VLANs and which VLANs, tagged or not, it sends.
type VLANMode uint8

// The zero mode follows the Port row with vlan_mode unset: access when
// a tag is set, else trunk. dot1q-tunnel is not supported.
const (
	VLANModeDefault VLANMode = iota
	// VLANAccess: the port carries only its Tag's VLAN (0 without a
	// tag), untagged; received frames must be untagged or
	// priority-tagged (VID 0).
	VLANAccess
	// VLANTrunk: the port carries the VLANs in Trunks (all when empty),
	// tagged except VLAN 0.
	VLANTrunk
	// VLANNativeTagged: a trunk whose untagged and priority-tagged
	// frames belong to the native VLAN (Tag); it sends every VLAN,
	// the native one included, tagged.
	VLANNativeTagged
	// VLANNativeUntagged: as VLANNativeTagged, but the native VLAN is
	// sent untagged.
	VLANNativeUntagged
)

var vlanModeNames = map[string]VLANMode{
	"":                VLANModeDefault,
	"access":          VLANAccess,
	"trunk":           VLANTrunk,
	"native-tagged":   VLANNativeTagged,
	"native-untagged": VLANNativeUntagged,
}

// ParseVLANMode maps a Port row's vlan_mode to a VLANMode; it reports
// false for values it does not support (dot1q-tunnel, unknown).
func ParseVLANMode(s string) (VLANMode, bool) {
	m, ok := vlanModeNames[s]
	return m, ok
}

// vlanMode is the port's effective mode.
func (p *Port) vlanMode() VLANMode {
	if p.VLANMode != VLANModeDefault {
		return p.VLANMode
	}
	if p.Tag >= 0 {
		return VLANAccess
	}
	return VLANTrunk
}

// nativeVLAN is the access or native VLAN: Tag, or 0 when none is set
// (as Open vSwitch's bundle configuration).
func (p *Port) nativeVLAN() uint16 {
	if p.Tag >= 0 && p.Tag <= 0xfff {
		return uint16(p.Tag)
	}
	return 0
}

// listed reports whether the configured trunk list holds vid (an empty
// list means every VLAN).
func (p *Port) listed(vid uint16) bool {
	if len(p.Trunks) == 0 {
		return true
	}
	for _, t := range p.Trunks {
		if t == vid {
			return true
		}
	}
	return false
}

// trunksVLAN reports whether a non-access port carries vid. A native
// port with a non-zero native VLAN always carries it and never carries
// VLAN 0 (whose frames are the native VLAN's).
func (p *Port) trunksVLAN(vid uint16) bool {
	switch p.vlanMode() {
	case VLANAccess:
		return false
	case VLANNativeTagged, VLANNativeUntagged:
		if n := p.nativeVLAN(); n != 0 {
			switch vid {
			case n:
				return true
			case 0:
				return false
			}
		}
	}
	return p.listed(vid)
}

// inputVLAN returns the VLAN of a frame received on p whose outer
// 802.1Q TCI is tci (flow.VLANCFI set when tagged), or false when p
// must drop it.
func inputVLAN(p *Port, tci uint16) (uint16, bool) {
	vid := uint16(0)
	if tci&flow.VLANCFI != 0 {
		vid = tci & 0xfff
	}
	switch p.vlanMode() {
	case VLANAccess:
		return p.nativeVLAN(), vid == 0
	case VLANNativeTagged, VLANNativeUntagged:
		if vid == 0 {
			return p.nativeVLAN(), true
		}
	}
	return vid, p.trunksVLAN(vid)
}

// includesVLAN reports whether p is a member of vlan. Only the outer
// tag counts, as in Open vSwitch with its default other_config:vlan-limit
// of 1: an inner tag is payload, so an access port gets a double-tagged
// frame of its VLAN with the outer tag removed.
func includesVLAN(p *Port, vlan uint16) bool {
	if p.vlanMode() == VLANAccess {
		return vlan == p.nativeVLAN()
	}
	return p.trunksVLAN(vlan)
}

// outputTCI returns the 802.1Q TCI, without flow.VLANCFI, that a frame
// of vlan with priority bits pcp (the PCP field in place) leaves p with;
// 0 means untagged. Priority tags are Open vSwitch's default
// (other_config:priority-tags=never): a tag whose VID and PCP would both
// be zero is left off, so VLAN 0 goes out untagged unless the frame came
// with a non-zero priority.
func outputTCI(p *Port, vlan, pcp uint16) uint16 {
	switch p.vlanMode() {
	case VLANAccess:
		return 0
	case VLANNativeUntagged:
		if vlan == p.nativeVLAN() {
			return 0
		}
	}
	return vlan&0xfff | pcp&0xe000
}

// normal translates NORMAL: per MAC address while the bridge's MAC table
// is small (normal.go), else into the datapath's learn-and-forward action.
// Patch and tunnel ports have no datapath port of their own: each takes
// a number in the bridge's MAC table (VirtualFDBPort) and a recirculation
// id whose pass continues in the peer bridge at the peer port (patch) or
// outputs to the tunnel (route, neighbour, header), so MACs behind them
// are learned and forwarded to like any other, and a packet that came
// through one is learned on it (learn_port).
//
// Every tagged output of one packet carries the same tag (the VLAN and
// the received priority), so the datapath action needs only to know
// whether the packet reaches it tagged and which ports want the tag. A
// priority-tagged packet that joins a non-zero access or native VLAN
// has its tag rewritten to that VLAN first.
func (c *ctx) normal() {
	t, reg := c.perMACTable()
	if t != nil {
		// Open vSwitch's xlate_normal starts with these: every megaflow
		// of NORMAL, drops included, matches both addresses and the
		// VLAN ID.
		all := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		c.wc.Key.EthSrc, c.wc.Key.EthDst = all, all
		c.wc.VLANs[0].TCI |= 0x0fff | flow.VLANCFI
	} else {
		// The action's tagged outputs carry the received priority.
		c.wc.VLANs[0].TCI |= 0xffff
	}
	in := c.snap.Ports[uint16(c.flow.InPort)]
	if in == nil {
		c.tr.skipf("no input bundle, dropping")
		return
	}
	if c.mir.isOutput(in) {
		if c.in.Packet != nil {
			c.tr.errorf("dropping packet received on port %s, which is reserved exclusively for mirroring", in.Name)
		}
		c.tr.skipf("input port is mirror output port, dropping")
		return
	}
	outer := c.flow.VLANs[0]
	tagged := outer.TCI&flow.VLANCFI != 0
	if !tagged && (c.flow.EthType == flow.EthTypeVLAN || c.flow.EthType == flow.EthTypeQinQ) {
		if c.in.Packet != nil {
			c.tr.errorf("dropping packet with partial VLAN tag received on port %s", in.Name)
		}
		c.tr.skipf("partial VLAN tag, dropping")
		return
	}
	vlan, ok := inputVLAN(in, outer.TCI)
	if !ok {
		vid := uint16(0)
		if tagged {
			vid = outer.TCI & 0xfff
		}
		if in.vlanMode() == VLANAccess {
			c.tr.errorf("dropping VLAN %d tagged packet received on port %s configured as VLAN %d access port", vid, in.Name, in.nativeVLAN())
		} else {
			c.tr.errorf("dropping VLAN %d packet received on port %s not configured for trunking VLAN %d", vid, in.Name, vid)
		}
		c.tr.skipf("disallowed VLAN VID for this input port, dropping")
		return
	}
	var pcp uint16
	if tagged {
		pcp = outer.TCI & 0xe000
	}
	p := odp.MACLearnParams{Table: c.snap.FDBTable, VLAN: vlan, InTagged: tagged}
	if in.ODP == NoODP || in.Tunnel != nil {
		p.LearnPort = VirtualFDBPort(in.OFPort)
	}
	if in.Bundle != nil && in.Bundle.Bond != nil && !c.bondInput(in, &p) {
		return
	}
	// Multicast snooping may restrict the ports (only, by McastPortID);
	// the input stays listed so that the action knows it.
	only, _ := c.mcastOutputs(in, vlan)
	if t != nil {
		c.normalPerMAC(t, reg, in, &p, vlan, pcp, only)
		return
	}
	inID := McastPortID(in)
	var bundles []*Bundle // those already in p.Ports
	for _, q := range c.snap.Sorted {
		if !c.normalMayReach(in, inID, q, vlan, only) {
			continue
		}
		switch {
		case q.PeerBridge != "":
			if q == in || c.x.Recirc == nil || c.x.Recirc.bridge(q.PeerBridge) == nil {
				continue
			}
			fz := Frozen{Bridge: q.PeerBridge, InPort: uint32(q.PeerPort), FromBridge: c.snap.Bridge, FromPort: q.OFPort}
			p.Ports = append(p.Ports, odp.MACLearnPort{Port: VirtualFDBPort(q.OFPort),
				Tagged: outputTCI(q, vlan, pcp) != 0, Recirc: c.x.Recirc.ID(fz)})
		case q.Bundle != nil && q.Bundle.Bond != nil:
			if slices.Contains(bundles, q.Bundle) {
				continue
			}
			bundles = append(bundles, q.Bundle)
			out, ok := c.bondOutput(q.Bundle, vlan)
			if !ok {
				if q.Bundle != in.Bundle {
					continue
				}
				// The input's own bond never gets the packet back, but
				// must be listed so that a destination behind it is a
				// hairpin, not a flood.
				out = q.ODP
			}
			p.Ports = append(p.Ports, odp.MACLearnPort{Port: q.Bundle.FDB, Out: out, Tagged: outputTCI(q, vlan, pcp) != 0})
		case q.Tunnel != nil:
			// Tunnels of one type share a datapath vport, and their
			// output needs translation (route, neighbour, header): a
			// tunnel port has an FDB number like a patch port, and its
			// copy recirculates to a pass that outputs to it.
			if q == in || c.x.Recirc == nil {
				continue
			}
			id, err := c.tunnelFloodID(q)
			if err != nil {
				c.fail(err)
				return
			}
			p.Ports = append(p.Ports, odp.MACLearnPort{Port: VirtualFDBPort(q.OFPort),
				Tagged: outputTCI(q, vlan, pcp) != 0, Recirc: id})
		case q.ODP != NoODP:
			// A tunnel packet for the address of a port it would reach
			// is decapsulated instead (terminate_native_tunnel).
			if q != in && c.tnl.terminate(q) {
				return
			}
			p.Ports = append(p.Ports, odp.MACLearnPort{Port: q.ODP, Tagged: outputTCI(q, vlan, pcp) != 0})
		}
	}
	if tagged && outer.TCI&0xfff != vlan {
		// A priority tag on an access or native port: tagged outputs
		// carry the port's VLAN with the received priority.
		c.flow.VLANs[0].TCI = vlan | pcp | flow.VLANCFI
	}
	c.commit()
	a, err := odp.MACLearn(p)
	if err != nil {
		c.flow.VLANs[0] = outer
		c.fail(err)
		return
	}
	c.emit(a)
	c.flow.VLANs[0] = outer
	c.smp.flood(false)
}

// tunnelFloodID is the recirculation id of NORMAL's copy for tunnel port
// q: a pass in this bridge, from this input, that outputs to q. Only
// the tunnel metadata is frozen with it (options:key=flow and
// remote_ip=flow read it); registers do not reach the output.
func (c *ctx) tunnelFloodID(q *Port) (uint32, error) {
	rest, err := encodeRest([]ofp.Action{{Type: ofp.ActOutput, Raw: ofp.RawActOFPAT10_OUTPUT, Port: uint32(q.OFPort)}})
	if err != nil {
		return 0, err
	}
	fz := Frozen{Bridge: c.snap.Bridge, InPort: c.flow.InPort, TunID: c.flow.Key.TunID,
		TunSrc: c.flow.Key.TunSrc, TunDst: c.flow.Key.TunDst, Rest: string(rest)}
	return c.x.Recirc.ID(fz), nil
}

// VirtualFDBPort is the number a port without a datapath port of its own
// (OpenFlow port ofport: a patch or tunnel port) has in its bridge's
// MAC table, outside the range of datapath port numbers.
func VirtualFDBPort(ofport uint16) uint32 { return virtualFDBBase | uint32(ofport) }

// VirtualFDBOFPort returns the OpenFlow port of a VirtualFDBPort number.
func VirtualFDBOFPort(fdbPort uint32) (uint16, bool) {
	return uint16(fdbPort), fdbPort&^0xffff == virtualFDBBase
}

const virtualFDBBase = 0xfffe0000
