package xlate

import (
	"encoding/binary"
	"net/netip"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/tnl"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// Native tunnelling, as Open vSwitch's userspace datapath does it: output
// to a tunnel port becomes tnl_push with a header built from the route
// and neighbour of the remote endpoint, followed by the translation of the
// outer packet through the bridge that owns the route's device; a tunnel
// packet output to a port that holds the local endpoint's address becomes
// tnl_pop, and the datapath brings the inner packet back in on the
// tunnel vport, where TunnelReceive picks the OpenFlow tunnel port.

// TunnelConfig is a tunnel port's configuration (Interface options).
type TunnelConfig struct {
	// Type is "geneve", "vxlan", "gre" or "ip6gre".
	Type string
	// DstPort is the UDP destination port (6081, 4789 by default; 0 for
	// GRE).
	DstPort uint16
	// RemoteIP is options:remote_ip; RemoteFlow when it is "flow".
	RemoteIP   netip.Addr
	RemoteFlow bool
	// LocalIP is options:local_ip (invalid: any); LocalFlow for "flow".
	LocalIP   netip.Addr
	LocalFlow bool
	// InKey/OutKey are options:in_key/out_key (key sets both); the
	// *Flow variants mean "flow", OutKeyPresent that a key is sent.
	InKey, OutKey          uint64
	InKeyFlow, OutKeyFlow  bool
	OutKeyPresent          bool
	TTL, Tos               uint8
	TTLInherit, TosInherit bool
	DontFragment, Csum     bool
	// Seq is options:seq (GRE): send sequence numbers.
	Seq bool
	// EgressPktMark is options:egress_pkt_mark, if set.
	EgressPktMark    uint32
	SetEgressPktMark bool
	// ERSPAN is the erspan_* options of an erspan or ip6erspan port.
	ERSPAN ERSPANConfig
	// GBP is options:exts=gbp (VXLAN Group Based Policy).
	GBP bool
	// L3 is packet_type=legacy_l3: the tunnel carries bare L3 packets
	// (the default of L3-only types such as gtpu and lisp).
	L3 bool
}

// ERSPANConfig is an ERSPAN port's erspan_ver, erspan_idx (version 1),
// erspan_dir and erspan_hwid (version 2); the *Flow fields mean "flow".
type ERSPANConfig struct {
	Ver, Dir, HwID                      uint8
	Idx                                 uint32
	VerFlow, IdxFlow, DirFlow, HwIDFlow bool
}

// isGRE reports whether t is a GRE tunnel (gre or ip6gre).
func (t *TunnelConfig) isGRE() bool { return t.Type == "gre" || t.Type == "ip6gre" }

// native reports whether the datapath pushes and pops t's headers.
func (t *TunnelConfig) native() bool { tt, _ := tnl.TypeByName(t.Type); return tt.Native && !t.L3 }

// TunnelEnv is what native tunnelling needs from outside the bridges:
// the routing table, the neighbour cache and device addresses.
type TunnelEnv interface {
	// Route finds the device (a bridge's port name), gateway (invalid if
	// none) and source address for dst.
	Route(dst netip.Addr, mark uint32) (dev string, gw, src netip.Addr, ok bool)
	// Neighbor looks ip up in bridge's neighbour cache.
	Neighbor(bridge string, ip netip.Addr) ([6]byte, bool)
	// NeighborMiss records a lookup miss; true means a request should be
	// sent now (not one already outstanding).
	NeighborMiss(bridge string, ip netip.Addr) bool
	// Learn records ip at mac in bridge's neighbour cache.
	Learn(bridge string, ip netip.Addr, mac [6]byte)
	// Addrs returns a device's addresses.
	Addrs(dev string) []netip.Prefix
	// Request returns an ARP request (IPv4) or neighbour solicitation.
	Request(src [6]byte, srcIP, dstIP netip.Addr) []byte
}

// SetTunnelEnv gives the datapath's bridges their tunnelling environment.
func (t *RecircTable) SetTunnelEnv(env TunnelEnv) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.env = env
}

func (t *RecircTable) tunnelEnv() TunnelEnv {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.env
}

// Bridge returns a registered translator by bridge name, or nil.
func (t *RecircTable) Bridge(name string) *Xlator { return t.bridge(name) }

// Inject is a packet translation wants sent through a bridge as if it
// came in on InPort (a tunnel's ARP or ND request from the bridge's
// local port), as Open vSwitch's compose_table_xlate.
type Inject struct {
	Bridge string
	InPort uint16
	Data   []byte
}

// TunnelReceive returns the tunnel port of s that receives a packet with
// datapath key k (in_port a tunnel vport), trying exact matches first as
// Open vSwitch's tnl_find: configured key before key=flow, configured
// remote before remote=flow, configured local address before any before
// local=flow.
func (s *Snapshot) TunnelReceive(k *flow.Key) *Port {
	if len(s.Tunnels) == 0 {
		return nil
	}
	src, dst := tunSrc(k), tunDst(k)
	for keyFlow := 0; keyFlow < 2; keyFlow++ {
		for remFlow := 0; remFlow < 2; remFlow++ {
			for local := 0; local < 3; local++ {
				for _, p := range s.Tunnels {
					t := p.Tunnel
					if p.ODP != k.InPort || t.InKeyFlow != (keyFlow == 1) || t.RemoteFlow != (remFlow == 1) {
						continue
					}
					if !t.InKeyFlow && t.InKey != k.TunID {
						continue
					}
					if !t.RemoteFlow && t.RemoteIP != src {
						continue
					}
					switch local {
					case 0:
						if t.LocalFlow || !t.LocalIP.IsValid() || t.LocalIP != dst {
							continue
						}
					case 1:
						if t.LocalFlow || t.LocalIP.IsValid() {
							continue
						}
					case 2:
						if !t.LocalFlow {
							continue
						}
					}
					return p
				}
			}
		}
	}
	return nil
}

func tunSrc(k *flow.Key) netip.Addr {
	if k.TunSrc != 0 {
		return v4(k.TunSrc)
	}
	return netip.AddrFrom16(k.TunIPv6Src).Unmap()
}

func tunDst(k *flow.Key) netip.Addr {
	if k.TunDst != 0 {
		return v4(k.TunDst)
	}
	return netip.AddrFrom16(k.TunIPv6Dst).Unmap()
}

func v4(a uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], a)
	return netip.AddrFrom4(b)
}

func fromV4(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

// tunnelXlate is a translation's native tunnelling: reception on a
// tunnel vport, output to a tunnel port (tnl_push through the underlay
// bridge's route, ARP/ND) and termination of tunnel packets addressed to
// the bridge. It owns the packet's raw Geneve options; c is the
// translation it belongs to.
type tunnelXlate struct {
	c *ctx
	// udpif holds the packet's raw Geneve options (udpifLen bytes) when
	// they were converted to tun_metadata, for the megaflow mask.
	udpif    [len(flow.Key{}.TunMeta)]byte
	udpifLen int
	// meta and metaPresent are the options converted to tun_metadata.
	meta        [len(flow.Key{}.TunMeta)]byte
	metaPresent uint64
}

// TunMetaMatch is tunnel metadata as tun_metadata fields: the values
// and present bits of the packet, the consulted bits, and the layout.
type TunMetaMatch struct {
	Meta, MetaMask       [len(flow.Key{}.TunMeta)]byte
	Present, PresentMask uint64
	Map                  mf.TunMap
}

// receive starts a translation of a packet that came in on a
// tunnel vport: in_port becomes the tunnel's OpenFlow port, the tunnel
// fields it was chosen by are un-wildcarded (tnl_wc_init) and raw Geneve
// options become tun_metadata through the TLV table. It reports false
// when no tunnel port takes the packet.
func (tx *tunnelXlate) receive() bool {
	c := tx.c
	k := &c.in.Key
	if k.TunDst == 0 && k.TunIPv6Dst == [16]byte{} {
		return false
	}
	p := c.snap.TunnelReceive(k)
	if p == nil {
		return false
	}
	c.flow.InPort = uint32(p.OFPort)
	return true
}

// wcInit un-wildcards the tunnel fields a packet with a tunnel
// destination is received by, and its ECN bits when the tunnel is
// marked CE (tnl_wc_init).
func (tx *tunnelXlate) wcInit() {
	c := tx.c
	k := &c.in.Key
	if k.TunDst == 0 && k.TunIPv6Dst == [16]byte{} {
		return
	}
	w := &c.wc.Key
	w.TunID = ^uint64(0)
	if k.TunDst != 0 {
		w.TunSrc, w.TunDst = ^uint32(0), ^uint32(0)
	} else {
		w.TunIPv6Src, w.TunIPv6Dst = allOnes16, allOnes16
	}
	w.TunFlags |= packet.TunFlagDontFragment | packet.TunFlagCsum | packet.TunFlagKey
	w.TunTos = 0xff
	if isIP(k) && k.TunTos&ecnMask == ecnCE {
		w.NwTos |= ecnMask
	}
}

// ECN codepoints of the IP ToS byte.
const (
	ecnMask   = 0x03
	ecnNotECT = 0x00
	ecnCE     = 0x03
)

// processECN carries a tunnel's Congestion Experienced mark into the
// inner IP packet, and reports false when the packet must be dropped
// because the inner packet is not ECN-capable (tnl_process_ecn).
func (tx *tunnelXlate) processECN() bool {
	c := tx.c
	k := &c.flow.Key
	if k.TunDst == 0 && k.TunIPv6Dst == [16]byte{} {
		return true
	}
	if isIP(k) && k.TunTos&ecnMask == ecnCE {
		if k.NwTos&ecnMask == ecnNotECT {
			return false
		}
		k.NwTos |= ecnCE
	}
	return true
}

var allOnes16 = [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// fromUDPIF converts the raw Geneve options of the flow into the
// bridge's tun_metadata layout; options without a mapping are left out
// (as Open vSwitch, which matches them only through their raw form).
func (tx *tunnelXlate) fromUDPIF() {
	c := tx.c
	k := &c.flow.Key
	if k.TunFlags&flow.TunFlagUDPIF == 0 {
		return
	}
	n := int(min(k.TunMetaPresent, uint64(len(k.TunMeta))))
	raw := k.TunMeta
	tx.udpif, tx.udpifLen = raw, n
	k.TunMeta, k.TunMetaPresent = [len(k.TunMeta)]byte{}, 0
	k.TunFlags &^= flow.TunFlagUDPIF
	tm := c.snap.tunMap()
	for off := 0; off+4 <= n; {
		l := int(raw[off+3]&0x1f) * 4
		if off+4+l > n {
			break
		}
		class, typ := binary.BigEndian.Uint16(raw[off:]), raw[off+2]
		for _, t := range c.snap.TLVs {
			if t.Class == class && t.Type == typ && int(t.Len) == l {
				loc := tm.Opts[t.Index]
				copy(k.TunMeta[loc.Off:loc.Off+loc.Len], raw[off+4:off+4+l])
				k.TunMetaPresent |= 1 << t.Index
			}
		}
		off += 4 + l
	}
	tx.meta, tx.metaPresent = k.TunMeta, k.TunMetaPresent
}

// maskUDPIF turns the tun_metadata bits consulted into the raw-option
// mask of the megaflow: an option whose field was consulted is matched
// on its class, type, length and the consulted data bits.
func (tx *tunnelXlate) maskUDPIF(m *flow.Mask) {
	c := tx.c
	if tx.udpifLen == 0 && c.in.Key.TunFlags&flow.TunFlagUDPIF == 0 {
		return
	}
	var raw [len(m.TunMeta)]byte
	tm := c.snap.tunMap()
	for off := 0; off+4 <= tx.udpifLen; {
		l := int(tx.udpif[off+3]&0x1f) * 4
		if off+4+l > tx.udpifLen {
			break
		}
		class, typ := binary.BigEndian.Uint16(tx.udpif[off:]), tx.udpif[off+2]
		for _, t := range c.snap.TLVs {
			if t.Class != class || t.Type != typ || int(t.Len) != l || c.wc.TunMetaPresent&(1<<t.Index) == 0 {
				continue
			}
			loc := tm.Opts[t.Index]
			raw[off], raw[off+1], raw[off+2], raw[off+3] = 0xff, 0xff, 0xff, 0x1f
			copy(raw[off+4:off+4+l], c.wc.TunMeta[loc.Off:loc.Off+loc.Len])
		}
		off += 4 + l
	}
	m.TunMeta = raw
	m.TunMetaPresent = 0xff
	m.TunFlags |= flow.TunFlagUDPIF
	if c.in.Trace != nil {
		t := &TunMetaMatch{Meta: tx.meta, Present: tx.metaPresent, Map: *tm}
		t.PresentMask = c.wc.TunMetaPresent
		for i := 0; i < 64; i++ {
			if t.PresentMask&(1<<i) == 0 {
				continue
			}
			loc := tm.Opts[i]
			copy(t.MetaMask[loc.Off:loc.Off+loc.Len], c.wc.TunMeta[loc.Off:loc.Off+loc.Len])
		}
		c.out.TunMeta = t
	}
}

// tunMap returns the bridge's tun_metadata layout (an empty one if none).
func (s *Snapshot) tunMap() *mf.TunMap {
	if s.TunMap == nil {
		return &mf.TunMap{}
	}
	return s.TunMap
}

// geneveOptions encodes the present tun_metadata fields as Geneve options
// in field order (tun_metadata_to_geneve_header).
func (s *Snapshot) geneveOptions(k *flow.Key) []byte {
	var out []byte
	tm := s.tunMap()
	for i := 0; i < 64; i++ {
		if k.TunMetaPresent&(1<<i) == 0 {
			continue
		}
		for _, t := range s.TLVs {
			if int(t.Index) != i {
				continue
			}
			loc := tm.Opts[i]
			out = append(out, byte(t.Class>>8), byte(t.Class), t.Type, t.Len/4)
			out = append(out, k.TunMeta[loc.Off:loc.Off+loc.Len]...)
		}
	}
	return out
}

// output is output to a native tunnel port.
func (tx *tunnelXlate) output(p *Port) {
	c := tx.c
	if p.Tunnel.L3 {
		// Open vSwitch pops the Ethernet header (pop_eth) for an L3
		// tunnel; gvs's datapath has only Ethernet packets.
		c.tr.notef("gvs: output to an L3 tunnel (packet_type=legacy_l3) is not supported")
		return
	}
	if !c.x.Recirc.TnlPushPop() {
		tx.kernelOutput(p)
		return
	}
	env := c.x.Recirc.tunnelEnv()
	if env == nil {
		c.tr.notef("native tunnelling is not configured")
		return
	}
	c.commit()
	saveFlow := c.flow
	defer func() {
		// The tunnel port's settings are not visible to later actions.
		c.flow = saveFlow
	}()
	tx.portSend(p)
	t := p.Tunnel
	k := &c.flow.Key
	c.tr.notef("output to native tunnel")
	dst := tunDst(k)
	if !dst.IsValid() || dst.IsUnspecified() {
		c.tr.notef("native tunnel routing failed")
		return
	}
	if orig := tunDst(&c.in.Key); orig.IsValid() && !orig.IsUnspecified() && orig == dst {
		c.tr.notef("Not tunneling to our own address")
		return
	}
	dev, gw, src, ok := env.Route(dst, k.PktMark)
	if !ok {
		c.tr.notef("native tunnel routing failed")
		return
	}
	nh := dst
	if gw.IsValid() && !gw.IsUnspecified() {
		nh = gw
	}
	if s := tunSrc(k); s.IsValid() && !s.IsUnspecified() {
		src = s
	}
	ox, op := c.x.Recirc.devicePort(dev)
	if op == nil {
		c.tr.notef("native tunnel routing failed")
		return
	}
	c.tr.notef("tunneling to %s via %s", dst, dev)
	obridge := ox.snap.Load().Bridge
	dmac, ok := env.Neighbor(obridge, nh)
	if !ok {
		kind := "ARP"
		if !nh.Is4() {
			kind = "ND"
		}
		c.tr.notef("neighbor cache miss for %s on bridge %s, sending %s request", nh, obridge, kind)
		c.out.Transient = true
		if env.NeighborMiss(obridge, nh) {
			c.out.Injects = append(c.out.Injects, Inject{Bridge: obridge, InPort: op.OFPort, Data: env.Request(op.MAC, src, nh)})
		}
		return
	}
	c.tr.notef("tunneling from %s %s to %s %s", macString(op.MAC), src, macString(dmac), nh)
	hp := tnl.Params{EthDst: dmac, EthSrc: op.MAC, Src: src, Dst: dst, Tos: k.TunTos, TTL: k.TunTTL,
		DontFragment: k.TunFlags&packet.TunFlagDontFragment != 0, UDPDst: t.DstPort, Csum: k.TunFlags&packet.TunFlagCsum != 0,
		VNI: uint32(k.TunID), OAM: k.TunFlags&packet.TunFlagOAM != 0}
	switch t.Type {
	case "geneve":
		hp.Type = tnl.TypeGeneve
		hp.GeneveOpts = c.snap.geneveOptions(k)
	case "vxlan":
		hp.Type = tnl.TypeVXLAN
	case "gre", "ip6gre":
		// netdev_gre_build_header: the low 32 bits of tun_id when the
		// port sends a key, sequence numbers when options:seq.
		hp.Type = tnl.TypeGRE
		hp.GREKey, hp.GREKeyPresent, hp.GRESeq = uint32(k.TunID), t.OutKeyPresent, t.Seq
	}
	h, err := tnl.Build(&hp)
	if err != nil {
		c.tr.notef("native tunnel header build failed")
		return
	}
	last := c.last
	saveOut := c.out.Actions
	c.out.Actions = nil
	c.emit(odp.TunnelPush(p.ODP, op.ODP, h))
	proto := uint8(flow.IPProtoUDP)
	if t.isGRE() {
		proto = ipProtoGRE
	}
	tx.underlay(ox, op, src, dst, dmac, proto, last)
	sub := c.out.Actions
	c.out.Actions = saveOut
	if len(sub) <= 1 {
		return
	}
	if last {
		c.out.Actions = append(c.out.Actions, sub...)
	} else {
		c.emit(odp.Clone(sub))
	}
}

// portSend applies tunnel port p's settings to the flow's tunnel fields
// (Open vSwitch's tnl_port_send): addresses, UDP port, key, TTL and ToS
// (inherited or fixed, with the inner packet's ECN bits) and flags.
func (tx *tunnelXlate) portSend(p *Port) {
	c := tx.c
	t := p.Tunnel
	k := &c.flow.Key
	w := &c.wc.Key
	if !t.LocalFlow {
		setTunAddr(k, t.LocalIP, true)
	}
	if !t.RemoteFlow {
		setTunAddr(k, t.RemoteIP, false)
	}
	k.TunTpDst = t.DstPort
	if !t.OutKeyFlow {
		k.TunID = t.OutKey
	}
	ip := isIP(k)
	if t.TTLInherit && ip {
		w.NwTTL = 0xff
		k.TunTTL = k.NwTTL
	} else {
		k.TunTTL = t.TTL
	}
	if t.TosInherit && ip {
		w.NwTos |= 0xfc
		k.TunTos = k.NwTos & 0xfc
	} else {
		k.TunTos = t.Tos
	}
	if ip {
		w.NwTos |= 0x03
		if k.NwTos&3 == 3 {
			k.TunTos |= 1
		} else {
			k.TunTos |= k.NwTos & 3
		}
	}
	k.TunFlags &= packet.TunFlagOAM
	if t.DontFragment {
		k.TunFlags |= packet.TunFlagDontFragment
	}
	if t.Csum {
		k.TunFlags |= packet.TunFlagCsum
	}
	if t.OutKeyPresent {
		k.TunFlags |= packet.TunFlagKey
	}
}

// underlay translates the encapsulated packet through the bridge that
// owns the route's device, as if it came in on that device, with its own
// wildcards (the outer headers follow from the tunnel configuration, not
// from the inner packet) and without side effects.
func (tx *tunnelXlate) underlay(ox *Xlator, op *Port, src, dst netip.Addr, dmac [6]byte, proto uint8, last bool) {
	c := tx.c
	saveX, saveSnap, saveV := c.x, c.snap, c.v
	saveFlow, saveBase, saveWC := c.flow, c.base, c.wc
	saveTable, saveRule, saveStack, saveIn, saveInd := c.table, c.rule, c.stack, c.in, c.tr.ind
	saveCT := c.conntracked
	defer func() {
		c.x, c.snap, c.v = saveX, saveSnap, saveV
		c.flow, c.base, c.wc = saveFlow, saveBase, saveWC
		c.table, c.rule, c.stack, c.in, c.tr.ind = saveTable, saveRule, saveStack, saveIn, saveInd
		c.conntracked = saveCT
		if c.err == nil {
			c.exit = false
		}
	}()
	in := *c.in
	in.SideEffects, in.Packet = false, nil
	c.in = &in
	outer := func(k *flow.Key) {
		tun := *k
		*k = flow.Key{}
		k.RecircID, k.DPHash, k.PktMark, k.SkbPriority = tun.RecircID, tun.DPHash, tun.PktMark, tun.SkbPriority
		k.EthDst, k.EthSrc = dmac, op.MAC
		if dst.Is4() {
			k.EthType = flow.EthTypeIPv4
			k.NwSrc, k.NwDst = fromV4(src), fromV4(dst)
		} else {
			k.EthType = flow.EthTypeIPv6
			k.IPv6Src, k.IPv6Dst = src.As16(), dst.As16()
		}
		k.NwTos, k.NwTTL = tun.TunTos, tun.TunTTL
		k.NwProto = proto
		k.TpSrc, k.TpDst = tun.TunTpSrc, tun.TunTpDst
	}
	outer(&c.flow.Key)
	c.flow.Regs, c.flow.Metadata, c.flow.ActsetOutput = [mf.NumRegs]uint32{}, 0, PortUnset
	c.base = c.flow.Key
	c.wc = mf.Flow{}
	c.conntracked = false
	c.switchBridge(ox)
	// The outer packet's pipeline nests in the trace unless the tunnel
	// output was the last action.
	hdr := 0
	c.tr.ind = 4
	if !last {
		hdr, c.tr.ind = saveInd, saveInd+8
	}
	if saveIn.Trace != nil {
		saveIn.Trace(&TraceEvent{Kind: TraceBridge, Indent: hdr, Text: c.snap.Bridge})
	}
	c.flow.InPort = uint32(op.OFPort)
	c.stack = nil
	c.lookupTable(0, true)
}

func setTunAddr(k *flow.Key, a netip.Addr, src bool) {
	var v4a uint32
	var v6a [16]byte
	if a.IsValid() {
		if a.Is4() {
			v4a = fromV4(a)
		} else {
			v6a = a.As16()
		}
	}
	if src {
		k.TunSrc, k.TunIPv6Src = v4a, v6a
	} else {
		k.TunDst, k.TunIPv6Dst = v4a, v6a
	}
}

func macString(m [6]byte) string {
	const hexd = "0123456789abcdef"
	b := make([]byte, 0, 17)
	for i, x := range m {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, hexd[x>>4], hexd[x&15])
	}
	return string(b)
}

// devicePort finds the bridge port named dev among the datapath's
// bridges, preferring the bridge of that name (tnl_route_lookup_flow).
func (t *RecircTable) devicePort(dev string) (*Xlator, *Port) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if x := t.bridges[dev]; x != nil {
		for _, p := range x.snap.Load().Sorted {
			if p.Name == dev && p.ODP != NoODP {
				return x, p
			}
		}
	}
	for _, x := range t.bridges {
		for _, p := range x.snap.Load().Sorted {
			if p.Name == dev && p.ODP != NoODP && p.Tunnel == nil {
				return x, p
			}
		}
	}
	return nil, nil
}

// ipProtoGRE is the IP protocol of GRE tunnels.
const ipProtoGRE = 47

// tunnelVports are the datapath's tunnel vports: the UDP tunnels' by UDP
// port, and the GRE vports (gre_sys, ip6gre_sys) by tunnel type.
type tunnelVports struct {
	udp map[uint16]uint32
	gre map[string]uint32
}

// tunnelVports lists the datapath's tunnel vports.
func (t *RecircTable) tunnelVports() tunnelVports {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := tunnelVports{udp: map[uint16]uint32{}, gre: map[string]uint32{}}
	for _, x := range t.bridges {
		for _, p := range x.snap.Load().Tunnels {
			if !p.Tunnel.native() {
				continue
			}
			if p.Tunnel.isGRE() {
				out.gre[p.Tunnel.Type] = p.ODP
			} else {
				out.udp[p.Tunnel.DstPort] = p.ODP
			}
		}
	}
	return out
}

// greVport picks the vport that pops a GRE packet of either family:
// gre_sys if there is one, else ip6gre_sys. Open vSwitch keeps one
// tunnel-port entry per local address and IP protocol, taken by the GRE
// vport added first (gre_sys in the usual configurations), and the
// receive side then looks for a tunnel port on that vport only.
func (v tunnelVports) greVport() (uint32, bool) {
	if no, ok := v.gre["gre"]; ok {
		return no, true
	}
	no, ok := v.gre["ip6gre"]
	return no, ok
}

// terminate checks whether output to port p (a port with IP addresses)
// is really the arrival of a tunnel packet for one of p's addresses; if
// so it emits tnl_pop and reports true. Otherwise an ARP reply or
// neighbour advertisement for p's addresses is snooped into the
// neighbour cache (terminate_native_tunnel).
func (tx *tunnelXlate) terminate(p *Port) bool {
	c := tx.c
	if p.Tunnel != nil || p.ODP == NoODP || !c.x.Recirc.TnlPushPop() {
		return false
	}
	env := c.x.Recirc.tunnelEnv()
	if env == nil {
		return false
	}
	addrs := env.Addrs(p.Name)
	if len(addrs) == 0 {
		return false
	}
	vports := c.x.Recirc.tunnelVports()
	k, w := &c.flow.Key, &c.wc.Key
	if no, ok := tx.portLookup(p, addrs, vports); ok {
		if c.in.SideEffects && isIP(k) {
			var s netip.Addr
			if k.EthType == flow.EthTypeIPv4 {
				s = v4(k.NwSrc)
			} else {
				s = netip.AddrFrom16(k.IPv6Src)
			}
			env.Learn(c.snap.Bridge, s, k.EthSrc)
		}
		c.commit()
		c.emit(odp.Action{Kind: odp.KindTunnelPop, Arg: no})
		return true
	}
	if k.EthType == flow.EthTypeARP {
		// An ARP reply (or gratuitous ARP) for one of our addresses.
		w.NwDst = ^uint32(0)
		w.NwProto = 0xff
		tpa := v4(k.NwDst)
		if !hasAddr(addrs, tpa) && !(k.NwSrc == k.NwDst) {
			return false
		}
		if k.NwProto != 2 && k.NwSrc != k.NwDst {
			return false
		}
		w.NwSrc = ^uint32(0)
		w.ArpSha = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		if c.in.SideEffects {
			env.Learn(c.snap.Bridge, v4(k.NwSrc), k.ArpSha)
		}
	}
	if k.EthType == flow.EthTypeIPv6 && k.NwProto == ipProtoICMPv6 {
		// A neighbour advertisement for one of our addresses (or its
		// solicited-node group) with a target link-layer address
		// (tnl_nd_snoop: Linux leaves it out of the advertisements it
		// sends unsolicited).
		w.IPv6Dst = allOnes16
		if !ndDstMatches(addrs, netip.AddrFrom16(k.IPv6Dst)) {
			return false
		}
		w.TpSrc, w.TpDst = 0xffff, 0xffff
		if k.TpSrc != ndNeighborAdvert || k.TpDst != 0 {
			return false
		}
		w.ArpTha = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
		if k.ArpTha == [6]byte{} {
			return false
		}
		w.IPv6Src, w.NDTarget = allOnes16, allOnes16
		if c.in.SideEffects {
			env.Learn(c.snap.Bridge, netip.AddrFrom16(k.NDTarget), k.ArpTha)
		}
	}
	return false
}

const (
	ipProtoICMPv6    = 58
	ndNeighborAdvert = 136
)

// ndDstMatches reports whether an advertisement sent to dst is for one of
// addrs: dst is the address or its solicited-node multicast group
// (ff02::1:ffXX:XXXX, the address's low 24 bits).
func ndDstMatches(addrs []netip.Prefix, dst netip.Addr) bool {
	d := dst.As16()
	solicited := d[0] == 0xff && d[1]&0x0f == 0x02 && d[11] == 0x01 && d[12] == 0xff
	for _, p := range addrs {
		a := p.Addr()
		if !a.Is6() || a.Is4In6() {
			continue
		}
		if a == dst {
			return true
		}
		if b := a.As16(); solicited && b[13] == d[13] && b[14] == d[14] && b[15] == d[15] {
			return true
		}
	}
	return false
}

func hasAddr(addrs []netip.Prefix, a netip.Addr) bool {
	for _, p := range addrs {
		if p.Addr() == a {
			return true
		}
	}
	return false
}

// portLookup is the tunnel port map lookup: Ethernet destination p's
// address, no VLAN, IP destination one of p's addresses, UDP to a tunnel
// vport's port or GRE (any port: Open vSwitch's entry for GRE does not
// match tp_dst). Like a staged classifier lookup, it un-wildcards the
// fields of each stage it reaches.
func (tx *tunnelXlate) portLookup(p *Port, addrs []netip.Prefix, all tunnelVports) (uint32, bool) {
	c := tx.c
	k, w := &c.flow.Key, &c.wc.Key
	if len(all.udp) == 0 && len(all.gre) == 0 {
		return 0, false
	}
	w.EthDst = [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	w.VLANs[0].TCI = 0xffff
	if k.EthDst != p.MAC || k.VLANs[0].TCI != 0 || !isIP(k) {
		return 0, false
	}
	w.NwProto = 0xff
	w.NwFrag = flow.FragMask
	var dst netip.Addr
	if k.EthType == flow.EthTypeIPv4 {
		w.NwDst = ^uint32(0)
		dst = v4(k.NwDst)
	} else {
		w.IPv6Dst = allOnes16
		dst = netip.AddrFrom16(k.IPv6Dst)
	}
	if k.NwFrag != 0 || !hasAddr(addrs, dst) {
		return 0, false
	}
	if k.NwProto == ipProtoGRE {
		return all.greVport()
	}
	vports := all.udp
	if k.NwProto != flow.IPProtoUDP || len(vports) == 0 {
		return 0, false
	}
	no, ok := vports[k.TpDst]
	if ok {
		w.TpDst = 0xffff
		return no, true
	}
	// A miss needs only the leading bits that tell tp_dst from every
	// tunnel port (the classifier's port prefix trie).
	bits := 0
	for port := range vports {
		bits = max(bits, min(16, lzc16(k.TpDst^port)+1))
	}
	w.TpDst |= uint16(0xffff << (16 - bits))
	return 0, false
}

// lzc16 counts the leading zero bits of a 16-bit value.
func lzc16(x uint16) int {
	n := 0
	for b := uint16(0x8000); b != 0 && x&b == 0; b >>= 1 {
		n++
	}
	return n
}

// clearTunnel zeroes the tunnel segment of k.
func clearTunnel(k *flow.Key) {
	k.TunID, k.TunSrc, k.TunDst = 0, 0, 0
	k.TunIPv6Src, k.TunIPv6Dst = [16]byte{}, [16]byte{}
	k.TunFlags, k.TunTos, k.TunTTL, k.TunTpSrc, k.TunTpDst = 0, 0, 0, 0, 0
	k.TunGbpID, k.TunGbpFlags = 0, 0
	k.TunMetaPresent, k.TunMeta = 0, [len(k.TunMeta)]byte{}
}
