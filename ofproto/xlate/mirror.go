package xlate

import (
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/gvs-project/gvs/datapath/flow"
)

// Port mirroring (the OVSDB Mirror table), as Open vSwitch's
// ofproto-dpif-mirror and its translation do it: a packet received on a
// mirror's source port, or output to one of its destination ports, is
// also sent to the mirror's output port, or flooded, tagged, to its output
// VLAN. Each mirror (and every mirror with the same destination) gets a
// packet at most once per translation; a mirror's output port receives
// nothing else (packets it receives are dropped, NORMAL skips it).

// MaxMirrors is the number of mirrors a bridge can have (Open vSwitch's
// MAX_MIRRORS: mirror sets are 32-bit masks).
const MaxMirrors = 32

// Mirror is one mirror as translation uses it. Ports are named by their
// translation name (Port.Name); names the bridge does not have are
// ignored, as Open vSwitch ignores nonexistent selected ports.
type Mirror struct {
	// ID identifies the mirror across reconfigurations (the Mirror
	// row's UUID): a mirror keeps its slot, which orders its outputs.
	ID   string
	Name string
	// SelectAll selects every port, as source and as destination.
	SelectAll bool
	// SrcPorts select packets received on them, DstPorts packets output
	// to them.
	SrcPorts, DstPorts []string
	// VLANs, when not empty, restrict the mirror to packets in these
	// VLANs (as NORMAL sees the VLAN on the selecting port).
	VLANs []uint16
	// OutPort names the output port; when empty the mirror floods to
	// OutVLAN instead.
	OutPort string
	OutVLAN uint16
	// Snaplen, if not 0 or 65535, truncates mirrored copies to that
	// many bytes (a datapath trunc before each mirror output).
	Snaplen uint16
}

// mirrorSet is a bridge's mirrors by slot (the slot is the mirror's bit
// in a mirror mask and orders its outputs) and the plan compiled from
// them for the current port snapshot.
type mirrorSet struct {
	slots [MaxMirrors]*Mirror
	stats [MaxMirrors]*mirrorStats
	plan  atomic.Pointer[mirrorPlan]
}

// mirrorStats are a mirror's tx_packets and tx_bytes; they stay with the
// mirror while it keeps its slot.
type mirrorStats struct{ packets, bytes atomic.Uint64 }

// MirrorUse says which mirrors (a mask of slots) of bridge X a
// translation sent the packet to.
type MirrorUse struct {
	X    *Xlator
	Mask uint32
}

// CreditMirrors counts packets and bytes sent to each mirror in mask
// (MirrorUse.Mask).
func (x *Xlator) CreditMirrors(mask uint32, packets, bytes uint64) {
	set := x.mirrors.Load()
	if set == nil {
		return
	}
	for ; mask != 0; mask &= mask - 1 {
		if st := set.stats[bits.TrailingZeros32(mask)]; st != nil {
			st.packets.Add(packets)
			st.bytes.Add(bytes)
		}
	}
}

// MirrorStats returns the packets and bytes sent to the mirror with id;
// false when no such mirror is installed.
func (x *Xlator) MirrorStats(id string) (packets, bytes uint64, ok bool) {
	set := x.mirrors.Load()
	if set == nil {
		return 0, 0, false
	}
	for i, m := range set.slots {
		if m != nil && m.ID == id {
			return set.stats[i].packets.Load(), set.stats[i].bytes.Load(), true
		}
	}
	return 0, 0, false
}

// mirrorPlan is a mirrorSet resolved against one Snapshot.
type mirrorPlan struct {
	snap          *Snapshot
	src, dst, out map[uint16]uint32 // mirror masks by OpenFlow port
	m             [MaxMirrors]planMirror
}

type planMirror struct {
	vlans   *[4096 / 64]uint64 // nil: every VLAN
	out     *Port              // nil: flood to outVLAN
	outVLAN uint16
	snaplen uint16
	dup     uint32 // mirrors with the same destination, this one included
}

// SetMirrors installs the bridge's mirrors. A mirror already installed
// (same ID) keeps its slot; new ones take the lowest free slots in list
// order, as Open vSwitch numbers them. It reports whether anything
// changed (megaflows then need revalidation) and the names of the
// mirrors left out because all MaxMirrors slots are taken.
func (x *Xlator) SetMirrors(ms []Mirror) (changed bool, dropped []string) {
	var next mirrorSet
	cur := x.mirrors.Load()
	placed := make([]bool, len(ms))
	if cur != nil {
		for i := range ms {
			for s, m := range cur.slots {
				if m != nil && m.ID == ms[i].ID && next.slots[s] == nil {
					c := ms[i]
					next.slots[s], next.stats[s], placed[i] = &c, cur.stats[s], true
					break
				}
			}
		}
	}
	n := 0
	for i := range ms {
		if placed[i] {
			n++
			continue
		}
		s := slices.Index(next.slots[:], nil)
		if s < 0 {
			dropped = append(dropped, ms[i].Name)
			continue
		}
		c := ms[i]
		next.slots[s], next.stats[s] = &c, new(mirrorStats)
		n++
	}
	switch {
	case cur == nil && n == 0:
		return false, dropped
	case cur != nil && mirrorSlotsEqual(&cur.slots, &next.slots):
		return false, dropped
	case n == 0:
		x.mirrors.Store(nil)
	default:
		x.mirrors.Store(&next)
	}
	return true, dropped
}

// Mirrors returns the installed mirrors by slot (nil for free slots).
func (x *Xlator) Mirrors() [MaxMirrors]*Mirror {
	if cur := x.mirrors.Load(); cur != nil {
		return cur.slots
	}
	return [MaxMirrors]*Mirror{}
}

func mirrorSlotsEqual(a, b *[MaxMirrors]*Mirror) bool {
	for i := range a {
		switch {
		case a[i] == nil && b[i] == nil:
		case a[i] == nil || b[i] == nil:
			return false
		case a[i].ID != b[i].ID || a[i].Name != b[i].Name || a[i].SelectAll != b[i].SelectAll || a[i].OutPort != b[i].OutPort ||
			a[i].OutVLAN != b[i].OutVLAN || a[i].Snaplen != b[i].Snaplen || !slices.Equal(a[i].SrcPorts, b[i].SrcPorts) ||
			!slices.Equal(a[i].DstPorts, b[i].DstPorts) || !slices.Equal(a[i].VLANs, b[i].VLANs):
			return false
		}
	}
	return true
}

// mirrorPlan returns the bridge's mirrors resolved against snap, or nil
// when the bridge has none. The plan is rebuilt after a change of
// mirrors or ports (by the first translation that needs it).
func (x *Xlator) mirrorPlan(snap *Snapshot) *mirrorPlan {
	set := x.mirrors.Load()
	if set == nil {
		return nil
	}
	if p := set.plan.Load(); p != nil && p.snap == snap {
		return p
	}
	p := buildMirrorPlan(set, snap)
	set.plan.Store(p)
	return p
}

func buildMirrorPlan(set *mirrorSet, snap *Snapshot) *mirrorPlan {
	p := &mirrorPlan{snap: snap, src: map[uint16]uint32{}, dst: map[uint16]uint32{}, out: map[uint16]uint32{}}
	byName := make(map[string]*Port, len(snap.Sorted))
	for _, q := range snap.Sorted {
		byName[q.Name] = q
	}
	valid := uint32(0)
	for i, m := range set.slots {
		if m == nil {
			continue
		}
		bit := uint32(1) << i
		pm := &p.m[i]
		if m.OutPort != "" {
			// A mirror whose output port is not on the bridge is
			// destroyed (mirror_set's EINVAL).
			if pm.out = byName[m.OutPort]; pm.out == nil {
				continue
			}
			p.out[pm.out.OFPort] |= bit
		} else {
			pm.outVLAN = m.OutVLAN
		}
		valid |= bit
		pm.snaplen = m.Snaplen
		if len(m.VLANs) > 0 {
			pm.vlans = new([4096 / 64]uint64)
			for _, v := range m.VLANs {
				if v < 4096 {
					pm.vlans[v/64] |= 1 << (v % 64)
				}
			}
		}
		if m.SelectAll {
			for _, q := range snap.Sorted {
				p.src[q.OFPort] |= bit
				p.dst[q.OFPort] |= bit
			}
			continue
		}
		for _, n := range m.SrcPorts {
			if q := byName[n]; q != nil {
				p.src[q.OFPort] |= bit
			}
		}
		for _, n := range m.DstPorts {
			if q := byName[n]; q != nil {
				p.dst[q.OFPort] |= bit
			}
		}
	}
	// Mirrors with the same destination are one (mirror_update_dups).
	for i := range p.m {
		if valid&(1<<i) == 0 {
			continue
		}
		for j := range p.m {
			if valid&(1<<j) != 0 && p.m[i].out == p.m[j].out && (p.m[i].out != nil || p.m[i].outVLAN == p.m[j].outVLAN) {
				p.m[i].dup |= 1 << j
			}
		}
	}
	for no, mask := range p.src {
		p.src[no] = mask & valid
	}
	for no, mask := range p.dst {
		p.dst[no] = mask & valid
	}
	return p
}

// mirrorXlate is a translation's port mirroring (mirror_packet and
// friends): the mirrors the packet went to so far in the current bridge
// and the snaplen of the mirror being output to. c is the translation
// it belongs to.
type mirrorXlate struct {
	c *ctx
	// used are the mirrors that got the packet.
	used uint32
	// snaplen is the snaplen of the mirror being output to.
	snaplen uint16
}

// isOutput reports whether p is some mirror's output port.
func (m *mirrorXlate) isOutput(p *Port) bool {
	c := m.c
	plan := c.x.mirrorPlan(c.snap)
	return plan != nil && p != nil && plan.out[p.OFPort] != 0
}

// start runs before the pipeline: it mirrors a packet received on
// a source port and reports whether the packet came in on a mirror's
// output port and must be dropped. A recirculated pass emits nothing: its
// first pass mirrored the packet on reception, so those mirrors are only
// marked used (Open vSwitch keeps the used mirrors in the frozen state; a
// destination mirror used before the recirculation is not remembered).
func (m *mirrorXlate) start() (drop bool) {
	c := m.c
	plan := c.x.mirrorPlan(c.snap)
	if plan == nil || c.in.Resume != nil {
		return false
	}
	in := c.snap.Ports[uint16(c.flow.InPort)]
	if in == nil {
		return false
	}
	if c.in.Key.RecircID != 0 {
		if fz, ok := c.x.Recirc.Get(c.in.Key.RecircID); ok && fz.FromBridge == "" {
			m.packet(plan, in, plan.src[in.OFPort], false)
		}
		return false
	}
	if plan.out[in.OFPort] != 0 {
		c.tr.notef("dropping packet received on port %s, which is reserved exclusively for mirroring", in.Name)
		return true
	}
	if c.in.OFActions == nil && c.noRecv() {
		return false
	}
	m.packet(plan, in, plan.src[in.OFPort], true)
	return false
}

// egress mirrors a packet just output to p (its destination
// mirrors).
func (m *mirrorXlate) egress(p *Port) {
	c := m.c
	if plan := c.x.mirrorPlan(c.snap); plan != nil {
		m.packet(plan, p, plan.dst[p.OFPort], true)
	}
}

// tunnelOutput is an output to a tunnel port followed by its
// destination mirrors.
func (m *mirrorXlate) tunnelOutput(p *Port) {
	c := m.c
	c.tnl.output(p)
	m.egress(p)
}

// packet sends the packet, seen on port p, to the mirrors in
// mirrors not used yet (mirror_packet). The VLAN is the packet's as
// NORMAL would see it on p; a packet p would not accept is not mirrored.
// Without send the mirrors are only marked used.
func (mx *mirrorXlate) packet(plan *mirrorPlan, p *Port, mirrors uint32, send bool) {
	c := mx.c
	mirrors &^= mx.used
	if mirrors == 0 {
		return
	}
	tci := c.flow.VLANs[0].TCI
	vlan, ok := inputVLAN(p, tci)
	if !ok {
		return
	}
	var pcp uint16
	if tci&flow.VLANCFI != 0 {
		pcp = tci & 0xe000
	}
	for mirrors != 0 {
		i := bits.TrailingZeros32(mirrors)
		m := &plan.m[i]
		if m.vlans != nil {
			if send {
				c.wc.VLANs[0].TCI |= flow.VLANCFI | 0xfff
			}
			if m.vlans[vlan/64]&(1<<(vlan%64)) == 0 {
				mirrors &^= 1 << i
				continue
			}
		}
		// Marked before sending, so that the outputs below do not
		// mirror to the same destination again.
		mx.used |= m.dup
		if send {
			mx.use(i)
			mx.snaplen = m.snaplen
			switch {
			case m.out != nil:
				mx.output(m.out, vlan, pcp)
			case vlan != m.outVLAN && !reservedMAC(c.flow.EthDst):
				for _, q := range c.snap.Sorted {
					if includesVLAN(q, m.outVLAN) && plan.out[q.OFPort] == 0 {
						mx.output(q, m.outVLAN, pcp)
					}
				}
			}
			mx.snaplen = 0
		}
		mirrors &^= mx.used
	}
}

// use records that the packet went to mirror slot i of the
// current bridge, for its statistics.
func (m *mirrorXlate) use(i int) {
	c := m.c
	for j := range c.out.Mirrors {
		if u := &c.out.Mirrors[j]; u.X == c.x {
			u.Mask |= 1 << i
			return
		}
	}
	c.out.Mirrors = append(c.out.Mirrors, MirrorUse{X: c.x, Mask: 1 << i})
}

// output sends the packet to q as NORMAL would send a packet of
// vlan (output_normal): tagged or not as q carries it, then q's own
// destination mirrors.
func (m *mirrorXlate) output(q *Port, vlan, pcp uint16) {
	c := m.c
	saved := c.flow.VLANs[0]
	if t := outputTCI(q, vlan, pcp); t != 0 {
		tpid := saved.TPID
		if saved.TCI&flow.VLANCFI == 0 {
			tpid = flow.EthTypeVLAN
		}
		c.flow.VLANs[0] = flow.VLAN{TPID: tpid, TCI: t | flow.VLANCFI}
	} else {
		c.flow.VLANs[0] = flow.VLAN{}
	}
	switch {
	case q.NoFwd:
		c.tr.notef("OFPPC_NO_FWD set, skipping output")
	case m.snaplen != 0 && q.ODP == NoODP:
		c.tr.skipf("Mirror truncate to ODPP_NONE, skipping output")
	case q.PeerBridge != "":
		c.patch(q)
	case q.Tunnel != nil:
		m.tunnelOutput(q)
	case q.ODP != NoODP:
		c.outputPort(q)
	}
	c.flow.VLANs[0] = saved
}

// enterPeer starts translation in another bridge (a patch port): its
// mirrors are its own, so none is used yet there. The returned mask is
// for leavePeer.
func (m *mirrorXlate) enterPeer(peer *Xlator) (saved uint32, independent bool) {
	c := m.c
	if peer == c.x {
		return 0, false
	}
	saved, m.used = m.used, 0
	return saved, true
}

// leavePeer restores this bridge's used mirrors after a patch
// port's peer pipeline.
func (m *mirrorXlate) leavePeer(saved uint32, independent bool) {
	if independent {
		m.used = saved
	}
}

// reservedMAC reports whether a destination MAC is one Open vSwitch
// never floods a mirror to (eth_addr_is_reserved: IEEE 802.1D/802.1Q
// link-local group addresses and a few vendor protocol addresses).
func reservedMAC(m [6]byte) bool {
	v := uint64(m[0])<<40 | uint64(m[1])<<32 | uint64(m[2])<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
	if v&^0xf == 0x0180c2000000 || v&^0x7 == 0x01000cccccc0 {
		return true
	}
	switch v {
	case 0x00e02b000000, 0x00e02b000004, 0x00e02b000006, 0x01000c000000,
		0x01000ccccccc, 0x01000ccccccd, 0x01000ccdcdcd:
		return true
	}
	return false
}
