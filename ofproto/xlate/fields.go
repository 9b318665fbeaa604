package xlate

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// fieldBytes returns f's value in fl (network order, f.Bytes long);
// tun_metadata is read through the bridge's TLV layout.
func (s *Snapshot) fieldBytes(f *mf.Field, fl *mf.Flow) []byte {
	b := make([]byte, f.Bytes)
	if _, ok := f.TunIndex(); ok {
		f.GetTun(fl, s.tunMap(), b)
		return b
	}
	f.Get(fl, b)
	return b
}

// setBytes stores a whole field value into fl.
func (s *Snapshot) setBytes(f *mf.Field, fl *mf.Flow, v []byte) {
	if _, ok := f.TunIndex(); ok {
		_ = f.SetTun(fl, s.tunMap(), v)
		return
	}
	v = clampValid(f, v)
	if f.Set(fl, v) != nil {
		// Stored narrower than its wire width (arp_op lives in the 8-bit
		// nw_proto): keep the low bytes, as Open vSwitch's assignment
		// does, so that a full mask un-wildcards the stored bits.
		w := append([]byte(nil), v...)
		for i := 0; i < len(w)-1; i++ {
			w[i] = 0
			if f.Set(fl, w) == nil {
				break
			}
		}
	}
}

// orField ORs mask into f's bits of wc (un-wildcards them).
func (s *Snapshot) orField(f *mf.Field, wc *mf.Flow, mask []byte) {
	cur := s.fieldBytes(f, wc)
	for i := range cur {
		cur[i] |= mask[i]
	}
	s.setBytes(f, wc, cur)
}

// clampValid drops bits f cannot hold, so Set never refuses a mask.
func clampValid(f *mf.Field, v []byte) []byte {
	if f.ValueValid(v) {
		return v
	}
	bits := f.Bits
	for i := range v {
		bitPos := (len(v) - 1 - i) * 8 // weight of the byte's lowest bit
		switch {
		case bitPos >= bits:
			v[i] = 0
		case bitPos+8 > bits:
			v[i] &= byte(1<<(bits-bitPos) - 1)
		}
	}
	return v
}

// setMasked writes value under mask into f's bits of fl.
func (s *Snapshot) setMasked(f *mf.Field, fl *mf.Flow, value, mask []byte) {
	cur := s.fieldBytes(f, fl)
	for i := range cur {
		m := byte(0xff)
		if mask != nil {
			m = mask[i]
		}
		cur[i] = cur[i]&^m | value[i]&m
	}
	s.setBytes(f, fl, cur)
}

func allOnes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0xff
	}
	return b
}

// prereqsOK evaluates f's prerequisites on the flow, un-wildcarding the
// bits it examines (mf_are_prereqs_ok with a mask).
func (c *ctx) prereqsOK(f *mf.Field) bool {
	e := f.Prereq.Expr()
	fl, wc := &c.flow, &c.wc
	if e.Ethernet && fl.PacketType != 0 {
		return false
	}
	if e.VLAN {
		wc.VLANs[0].TCI |= flow.VLANCFI
		if fl.VLANs[0].TCI&flow.VLANCFI == 0 {
			return false
		}
	}
	if len(e.EthTypes) > 0 {
		wc.EthType = 0xffff
		ok := false
		for _, t := range e.EthTypes {
			ok = ok || fl.DLType() == t
		}
		if !ok {
			return false
		}
	}
	if e.NwProto >= 0 {
		wc.NwProto = 0xff
		if fl.NwProto != uint8(e.NwProto) {
			return false
		}
	}
	if e.NotLater {
		wc.NwFrag |= flow.FragLater
		if fl.NwFrag&flow.FragLater != 0 {
			return false
		}
	}
	if e.TpDst >= 0 {
		wc.TpDst = 0xffff
		if fl.TpDst != uint16(e.TpDst) {
			return false
		}
	}
	if len(e.TpSrc) > 0 {
		wc.TpSrc = 0xffff
		ok := false
		for _, t := range e.TpSrc {
			ok = ok || fl.TpSrc == t
		}
		if !ok {
			return false
		}
	}
	return true
}

// setField implements set_field (and load, which becomes a masked
// set_field): the field must have its prerequisites, and the bits written
// are un-wildcarded.
func (c *ctx) setField(f *mf.Field, value, mask []byte) {
	if f == nil {
		return
	}
	if _, ok := f.TunIndex(); ok && len(value) < f.Bytes {
		// tun_metadata values come as wide as they were written.
		value = rightAlign(value, f.Bytes)
		if mask != nil {
			mask = rightAlign(mask, f.Bytes)
		}
	}
	if len(value) != f.Bytes {
		return
	}
	if !c.prereqsOK(f) {
		c.tr.notef("skipping set_field %s: prerequisites not met", f.Name)
		return
	}
	m := mask
	if m == nil {
		m = allOnes(f.Bytes)
	}
	if isIPHeader(f) {
		c.wc.NwProto = 0xff // as Open vSwitch does for IP header writes
	}
	c.snap.orField(f, &c.wc, m)
	c.snap.setMasked(f, &c.flow, value, m)
}

// changed is a masked set's mask for one field: the consulted bits m if
// the field changed, none otherwise (Open vSwitch's keycmp_mask).
func changed[T comparable](now, base, m T) T {
	if now == base {
		var zero T
		return zero
	}
	return m
}

// isIPHeader reports whether f is an IPv4/IPv6 header field.
func isIPHeader(f *mf.Field) bool {
	switch f.Prereq {
	case mf.PrereqIPv4, mf.PrereqIPv6, mf.PrereqIPAny:
		return true
	}
	return false
}

// subfieldMask returns the mask of bits [ofs, ofs+n) of an nbytes-wide
// field, network order.
func subfieldMask(nbytes, ofs, n int) []byte {
	m := make([]byte, nbytes)
	for i := ofs; i < ofs+n && i < 8*nbytes; i++ {
		m[nbytes-1-i/8] |= 1 << (i % 8)
	}
	return m
}

// getBits reads n bits at ofs of b (network order) into a value right
// aligned in a byte slice of the same width.
func copyBits(dst []byte, dofs int, src []byte, sofs, n int) {
	for i := 0; i < n; i++ {
		sb := sofs + i
		db := dofs + i
		if sb/8 >= len(src) || db/8 >= len(dst) {
			return
		}
		bit := src[len(src)-1-sb/8] >> (sb % 8) & 1
		di := len(dst) - 1 - db/8
		dst[di] = dst[di]&^(1<<(db%8)) | bit<<(db%8)
	}
}

func load(c *ctx, a *ofp.Action) {
	f := a.Dst.Field
	if f == nil {
		return
	}
	v := make([]byte, f.Bytes)
	copyBits(v, a.Dst.Ofs, a.Value, 0, a.Dst.NBits)
	c.setField(f, v, subfieldMask(f.Bytes, a.Dst.Ofs, a.Dst.NBits))
}

func move(c *ctx, a *ofp.Action) {
	sf, df := a.Src.Field, a.Dst.Field
	if sf == nil || df == nil {
		return
	}
	if !c.prereqsOK(sf) || !c.prereqsOK(df) {
		c.tr.notef("skipping move: prerequisites not met")
		return
	}
	c.snap.orField(sf, &c.wc, subfieldMask(sf.Bytes, a.Src.Ofs, a.Src.NBits))
	src := c.snap.fieldBytes(sf, &c.flow)
	v := make([]byte, df.Bytes)
	copyBits(v, a.Dst.Ofs, src, a.Src.Ofs, a.Src.NBits)
	m := subfieldMask(df.Bytes, a.Dst.Ofs, a.Dst.NBits)
	c.snap.orField(df, &c.wc, m)
	c.snap.setMasked(df, &c.flow, v, m)
	c.reportSubfield(&a.Dst)
}

// commit emits datapath actions that make the packet look like the
// pipeline's flow, in commit_odp_actions' order: Ethernet addresses, the
// pops that end an MPLS stack (so that L3 writes reach the L3 header),
// L3 and L4 headers, other MPLS changes, VLAN tags, then priority and
// mark. Masked sets carry the bits consulted.
func (c *ctx) commit() {
	f, b, w := &c.flow.Key, &c.base, &c.wc.Key
	if f.EthSrc != b.EthSrc || f.EthDst != b.EthDst {
		c.emit(odp.SetEth(f.EthSrc, changed(f.EthSrc, b.EthSrc, w.EthSrc), f.EthDst, changed(f.EthDst, b.EthDst, w.EthDst)))
		b.EthSrc, b.EthDst = f.EthSrc, f.EthDst
	}
	mplsDone := odp.IsMPLS(b.EthType) && !odp.IsMPLS(f.EthType)
	if mplsDone {
		c.mpls.commit()
	}
	// The pipeline's flow has an L3 header only with a non-zero
	// nw_proto (none after push_mpls); the header written is the one
	// the packet has.
	if f.NwProto != 0 {
		c.commitL3()
		c.commitL4()
	}
	if !mplsDone {
		c.mpls.commit()
	}
	c.commitVLAN()
	if f.SkbPriority != b.SkbPriority {
		c.emit(odp.SetSkbPriority(f.SkbPriority, w.SkbPriority))
		b.SkbPriority = f.SkbPriority
	}
	if f.PktMark != b.PktMark {
		c.emit(odp.SetSkbMark(f.PktMark, w.PktMark))
		b.PktMark = f.PktMark
	}
}

// commitL3 writes the changed IPv4, IPv6 or ARP fields.
func (c *ctx) commitL3() {
	f, b, w := &c.flow.Key, &c.base, &c.wc.Key
	switch b.EthType {
	case flow.EthTypeIPv4:
		if f.NwSrc != b.NwSrc || f.NwDst != b.NwDst || f.NwTos != b.NwTos || f.NwTTL != b.NwTTL {
			c.emit(odp.SetIPv4(f.NwSrc, changed(f.NwSrc, b.NwSrc, w.NwSrc), f.NwDst, changed(f.NwDst, b.NwDst, w.NwDst),
				f.NwTos, changed(f.NwTos, b.NwTos, w.NwTos), f.NwTTL, changed(f.NwTTL, b.NwTTL, w.NwTTL)))
			b.NwSrc, b.NwDst, b.NwTos, b.NwTTL = f.NwSrc, f.NwDst, f.NwTos, f.NwTTL
		}
	case flow.EthTypeIPv6:
		if f.IPv6Src != b.IPv6Src || f.IPv6Dst != b.IPv6Dst || f.IPv6Label != b.IPv6Label || f.NwTos != b.NwTos || f.NwTTL != b.NwTTL {
			var v, m [odp.ImageSize]byte
			binary.BigEndian.PutUint32(v[0:], 6<<28|uint32(f.NwTos)<<20|f.IPv6Label&0xfffff)
			binary.BigEndian.PutUint32(m[0:], uint32(changed(f.NwTos, b.NwTos, w.NwTos))<<20|changed(f.IPv6Label, b.IPv6Label, w.IPv6Label)&0xfffff)
			copy(v[8:24], f.IPv6Src[:])
			ms := changed(f.IPv6Src, b.IPv6Src, w.IPv6Src)
			copy(m[8:24], ms[:])
			copy(v[24:40], f.IPv6Dst[:])
			md := changed(f.IPv6Dst, b.IPv6Dst, w.IPv6Dst)
			copy(m[24:40], md[:])
			v[7], m[7] = f.NwTTL, changed(f.NwTTL, b.NwTTL, w.NwTTL)
			c.emit(odp.NewSet(odp.FieldIPv6, &v, &m))
			b.IPv6Src, b.IPv6Dst, b.IPv6Label, b.NwTos, b.NwTTL = f.IPv6Src, f.IPv6Dst, f.IPv6Label, f.NwTos, f.NwTTL
		}
		if b.NwProto == flow.IPProtoICMPv6 {
			c.commitND()
		}
	case flow.EthTypeARP, flow.EthTypeRARP:
		if f.NwSrc != b.NwSrc || f.NwDst != b.NwDst || f.NwProto != b.NwProto || f.ArpSha != b.ArpSha || f.ArpTha != b.ArpTha {
			var v, m [odp.ImageSize]byte
			// The ARP opcode lives in the 8-bit nw_proto; a full mask
			// there is a full mask of the 16-bit opcode (as Open vSwitch).
			// Only the fields that changed are in the set's mask
			// (keycmp_mask), so each output's set names what it changes.
			binary.BigEndian.PutUint16(v[6:], arpOp(f.NwProto))
			binary.BigEndian.PutUint16(m[6:], arpOp(changed(f.NwProto, b.NwProto, w.NwProto)))
			sha, tha := changed(f.ArpSha, b.ArpSha, w.ArpSha), changed(f.ArpTha, b.ArpTha, w.ArpTha)
			copy(v[8:14], f.ArpSha[:])
			copy(m[8:14], sha[:])
			binary.BigEndian.PutUint32(v[14:], f.NwSrc)
			binary.BigEndian.PutUint32(m[14:], changed(f.NwSrc, b.NwSrc, w.NwSrc))
			copy(v[18:24], f.ArpTha[:])
			copy(m[18:24], tha[:])
			binary.BigEndian.PutUint32(v[24:], f.NwDst)
			binary.BigEndian.PutUint32(m[24:], changed(f.NwDst, b.NwDst, w.NwDst))
			c.emit(odp.NewSet(odp.FieldARP, &v, &m))
			b.NwSrc, b.NwDst, b.NwProto, b.ArpSha, b.ArpTha = f.NwSrc, f.NwDst, f.NwProto, f.ArpSha, f.ArpTha
			// As Open vSwitch's commit_set_arp_action: the kernel
			// datapath has no set(arp), so such a flow is slow-pathed.
			c.out.SlowReason |= odp.SlowAction
		}
	}
}

// commitND writes the changed neighbour discovery fields of an ICMPv6
// packet (nd_target, nd_sll, nd_tll: set(nd(...)), as Open vSwitch's
// commit_set_nd_action), which makes the megaflow a slow-path one as
// there (SLOW_ACTION).
func (c *ctx) commitND() {
	f, b, w := &c.flow.Key, &c.base, &c.wc.Key
	if f.NDTarget == b.NDTarget && f.ArpSha == b.ArpSha && f.ArpTha == b.ArpTha {
		return
	}
	var v, m [odp.ImageSize]byte
	copy(v[0:16], f.NDTarget[:])
	t := changed(f.NDTarget, b.NDTarget, w.NDTarget)
	copy(m[0:16], t[:])
	copy(v[16:22], f.ArpSha[:])
	sll := changed(f.ArpSha, b.ArpSha, w.ArpSha)
	copy(m[16:22], sll[:])
	copy(v[22:28], f.ArpTha[:])
	tll := changed(f.ArpTha, b.ArpTha, w.ArpTha)
	copy(m[22:28], tll[:])
	c.emit(odp.NewSet(odp.FieldND, &v, &m))
	b.NDTarget, b.ArpSha, b.ArpTha = f.NDTarget, f.ArpSha, f.ArpTha
	c.out.SlowReason |= odp.SlowAction
}

// commitL4 writes the changed ports, or ICMP type and code.
func (c *ctx) commitL4() {
	f, b, w := &c.flow.Key, &c.base, &c.wc.Key
	if isIP(b) && f.NwFrag&flow.FragLater == 0 && (f.TpSrc != b.TpSrc || f.TpDst != b.TpDst) {
		var fld odp.Field
		switch f.NwProto {
		case flow.IPProtoTCP:
			fld = odp.FieldTCP
		case flow.IPProtoUDP:
			fld = odp.FieldUDP
		case flow.IPProtoSCTP:
			fld = odp.FieldSCTP
		case flow.IPProtoICMP, flow.IPProtoICMPv6:
			fld = odp.FieldICMP
			if f.NwProto == flow.IPProtoICMPv6 {
				fld = odp.FieldICMPv6
			}
			var v, m [odp.ImageSize]byte
			v[0], v[1], m[0], m[1] = byte(f.TpSrc), byte(f.TpDst), byte(w.TpSrc), byte(w.TpDst)
			c.emit(odp.NewSet(fld, &v, &m))
			b.TpSrc, b.TpDst = f.TpSrc, f.TpDst
			return
		}
		if fld != 0 {
			c.emit(odp.SetPorts(fld, f.TpSrc, changed(f.TpSrc, b.TpSrc, w.TpSrc), f.TpDst, changed(f.TpDst, b.TpDst, w.TpDst)))
			b.TpSrc, b.TpDst = f.TpSrc, f.TpDst
		}
	}
}

// arpOp widens nw_proto to the ARP key's opcode: 0xff stands for 0xffff.
func arpOp(p uint8) uint16 {
	if p == 0xff {
		return 0xffff
	}
	return uint16(p)
}

// commitVLAN makes the outer VLAN tag match the flow's: pop the packet's
// tag if it differs or is gone, push the flow's if present.
func (c *ctx) commitVLAN() {
	f, b := &c.flow.Key, &c.base
	if f.VLANs[0] == b.VLANs[0] {
		return
	}
	if b.VLANs[0].TCI&flow.VLANCFI != 0 {
		// Popping depends on the whole tag (commit_vlan_action).
		c.wc.VLANs[0] = flow.VLAN{TPID: 0xffff, TCI: 0xffff}
		c.emit(odp.PopVLAN())
	}
	if f.VLANs[0].TCI&flow.VLANCFI != 0 {
		tpid := f.VLANs[0].TPID
		if tpid == 0 {
			tpid = flow.EthTypeVLAN
		}
		c.emit(odp.PushVLAN(tpid, f.VLANs[0].TCI))
	}
	b.VLANs[0] = f.VLANs[0]
}

// rightAlign returns b right-aligned in n bytes.
func rightAlign(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out[n-len(b):], b)
	return out
}
