package xlate

import (
	"encoding/binary"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/internal/ovshash"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The bundle and multipath actions (Open vSwitch's lib/bundle.c and
// lib/multipath.c): both hash the flow's fields (flow.FieldsHash) and
// make the hashed bits part of the megaflow, so that every packet of a
// megaflow takes the member or link its first packet took.

// Bundle algorithms (NX_BD_ALG_*) and multipath algorithms (NX_MP_ALG_*).
const (
	bundleActiveBackup = 0
	bundleHRW          = 1

	mpModuloN      = 0
	mpHashThresh   = 1
	mpHRW          = 2
	mpIterHash     = 3
	mpHRWMaxLinks  = 64
	mpMaxLinkCount = 65536
)

// bundle runs bundle() (output to the chosen member) or bundle_load()
// (the member's number loaded into Dst). No live member chooses
// OFPP_NONE: bundle drops, bundle_load loads 0xffff.
func bundle(c *ctx, a *ofp.Action) {
	b := a.Bundle()
	if b == nil {
		return
	}
	port := uint16(PortNone)
	switch b.Algorithm {
	case bundleActiveBackup:
		for _, m := range b.Members {
			if c.memberEnabled(m) {
				port = m
				break
			}
		}
	case bundleHRW:
		k := &c.flow.Key
		if len(b.Members) > 1 {
			flow.MaskHashFields(k, &c.wc.Key, flow.HashFields(b.Fields))
		}
		h := flow.FieldsHash(k, flow.HashFields(b.Fields), b.Basis)
		best, bestHash := -1, uint32(0)
		for i, m := range b.Members {
			if !c.memberEnabled(m) {
				continue
			}
			if mh := ovshash.TwoWords(uint32(i), h); best < 0 || mh > bestHash {
				best, bestHash = i, mh
			}
		}
		if best >= 0 {
			port = b.Members[best]
		}
	}
	if b.Dst.Field != nil {
		c.loadSubfield(&b.Dst, uint64(port))
		c.reportSubfield(&b.Dst)
		return
	}
	c.output(port, 0)
}

// memberEnabled is Open vSwitch's member_enabled_cb: the reserved ports
// bundle may name are always enabled (CONTROLLER never), a real port
// while it may forward (Port.Down).
func (c *ctx) memberEnabled(no uint16) bool {
	switch no {
	case PortInPort, PortTable, PortNormal, PortFlood, PortAll, PortNone:
		return true
	case PortController:
		return false
	}
	p := c.snap.Ports[no]
	return p != nil && !p.Down
}

// multipath runs multipath(): the link chosen for the flow's hash is
// loaded into Dst.
func multipath(c *ctx, a *ofp.Action) {
	m := a.Multipath()
	if m == nil {
		return
	}
	k := &c.flow.Key
	h := flow.FieldsHash(k, flow.HashFields(m.Fields), m.Basis)
	link := multipathLink(h, m.Algorithm, uint32(m.MaxLink)+1, m.Arg)
	flow.MaskHashFields(k, &c.wc.Key, flow.HashFields(m.Fields))
	c.loadSubfield(&m.Dst, uint64(link))
	c.reportSubfield(&m.Dst)
}

// reportSubfield traces the value an action loaded into sf.
func (c *ctx) reportSubfield(sf *ofp.Subfield) {
	if c.in.Trace != nil {
		c.in.Trace(&TraceEvent{Kind: TraceSubfield, Indent: c.tr.ind + 1, Sub: sf, Value: c.snap.fieldBytes(sf.Field, &c.flow)})
	}
}

// multipathLink is multipath_algorithm: the link, in [0, n), for hash h.
func multipathLink(h uint32, alg uint16, n, arg uint32) uint16 {
	switch alg {
	case mpModuloN:
		return uint16(h % n)
	case mpHashThresh:
		if n == 1 {
			return 0
		}
		return uint16(uint64(h) / (uint64(^uint32(0))/uint64(n) + 1))
	case mpHRW:
		if n <= mpHRWMaxLinks {
			best, bestW := uint32(0), ovshash.TwoWords(h, 0)
			for l := uint32(1); l < n; l++ {
				if w := ovshash.TwoWords(h, l); w > bestW {
					best, bestW = l, w
				}
			}
			return uint16(best)
		}
		return iterHash(h, n, 0)
	case mpIterHash:
		return iterHash(h, n, arg)
	}
	return 0
}

// iterHash is algorithm_iter_hash: rehash until the value modulo a
// power of two (or arg, when it is between n and 2n) falls below n.
func iterHash(h, n, modulo uint32) uint16 {
	if modulo < n || modulo/2 > n {
		modulo = roundUpPow2(n)
	}
	for i := uint32(0); ; i++ {
		if l := ovshash.TwoWords(h, i) % modulo; l < n {
			return uint16(l)
		}
	}
}

func roundUpPow2(x uint32) uint32 {
	x--
	x |= x >> 1
	x |= x >> 2
	x |= x >> 4
	x |= x >> 8
	return x + 1
}

// loadSubfield is nxm_reg_load: v's low bits into sf, whose bits become
// part of the megaflow.
func (c *ctx) loadSubfield(sf *ofp.Subfield, v uint64) {
	f := sf.Field
	var src [8]byte
	binary.BigEndian.PutUint64(src[:], v)
	val := make([]byte, f.Bytes)
	n := sf.NBits
	if n > 64 {
		n = 64
	}
	copyBits(val, sf.Ofs, src[:], 0, n)
	m := subfieldMask(f.Bytes, sf.Ofs, sf.NBits)
	c.snap.orField(f, &c.wc, m)
	c.snap.setMasked(f, &c.flow, val, m)
}
