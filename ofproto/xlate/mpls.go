package xlate

import (
	"errors"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// MPLS in translation, as ofproto-dpif-xlate and lib/flow.c do it.
//
// The pipeline's label stack holds up to maxMPLS entries: the outermost
// is the flow key's MPLSLSE (the only one the datapath key carries and a
// megaflow can match), the ones below it live in mplsXlate.deep (and, for
// the packet as the datapath actions leave it, mplsXlate.baseDeep). Pushes and
// pops change the stack and the Ethertype only; commit turns the
// difference between the pipeline's stack and the packet's into
// pop_mpls, set(mpls) and push_mpls actions (commit_mpls_action).
//
// A pop that leaves a non-MPLS packet sets mplsXlate.was: the pipeline
// cannot see the L3 header the pop exposed, so before any action that would
// look at it (a table lookup, an L3 write, ...) translation recirculates
// and the rest of the action list runs on the re-extracted packet
// (recirc_for_mpls).

// ErrTooManyMPLS ends a translation that would push a fourth label stack
// entry or pop one under three without bottom of stack.
var ErrTooManyMPLS = errors.New("xlate: more MPLS label stack entries than the 3 supported")

// maxMPLS is Open vSwitch's FLOW_MAX_MPLS_LABELS.
const maxMPLS = 3

type lseStack [maxMPLS]uint32

func stackOf(top uint32, deep *[maxMPLS - 1]uint32) lseStack {
	return lseStack{top, deep[0], deep[1]}
}

func (s *lseStack) store(top *uint32, deep *[maxMPLS - 1]uint32) {
	*top, deep[0], deep[1] = s[0], s[1], s[2]
}

// count returns the number of entries of a stack (flow_count_mpls_labels):
// up to the first with bottom of stack, else the non-zero ones.
func (s *lseStack) count(ethType uint16) int {
	if !odp.IsMPLS(ethType) {
		return 0
	}
	n := 0
	for i, l := range s {
		if l&odp.MPLSBOSMask != 0 {
			return i + 1
		}
		if l != 0 {
			n++
		}
	}
	return n
}

// mplsXlate is a translation's MPLS handling: the label stack entries
// below the outermost, of the pipeline's flow and of the packet as the
// datapath actions leave it, and whether a pop exposed an L3 header the
// pipeline has not seen. c is the translation it belongs to.
type mplsXlate struct {
	c *ctx
	// deep and baseDeep are the label stack entries below the
	// outermost of the pipeline's flow and of ctx.base.
	deep, baseDeep [maxMPLS - 1]uint32
	// was says a pop_mpls left a non-MPLS packet whose L3 header the
	// pipeline has not seen: actions that need it recirculate first.
	was bool
}

// flowCount counts the pipeline's entries, un-wildcarding the bottom
// of stack bit it looks at.
func (mp *mplsXlate) flowCount() (lseStack, int) {
	c := mp.c
	s := stackOf(c.flow.MPLSLSE, &mp.deep)
	if odp.IsMPLS(c.flow.EthType) {
		c.wc.MPLSLSE |= odp.MPLSBOSMask
	}
	return s, s.count(c.flow.EthType)
}

// push is push_mpls:ethType (compose_mpls_push_action). The first
// entry gets label 0 (2 for IPv6), the IP TTL (64 without one) and the
// low bits of the DSCP as TC; later ones copy the entry above without
// bottom of stack. After the first push the L3 and L4 fields are gone.
func (mp *mplsXlate) push(ethType uint16) {
	c := mp.c
	s, n := mp.flowCount()
	if n == 0 {
		c.commit()
	} else if n >= maxMPLS {
		c.fail(ErrTooManyMPLS)
		return
	}
	k := &c.flow.Key
	if n > 0 {
		c.wc.MPLSLSE = ^uint32(0)
		for i := n; i >= 1; i-- {
			s[i] = s[i-1]
		}
		s[0] = s[1] &^ odp.MPLSBOSMask
	} else {
		label, tc, ttl := uint32(0), uint8(0), uint8(64)
		if k.EthType == flow.EthTypeIPv6 {
			label = 2
		}
		if isIP(k) {
			tc = (k.NwTos & 0xfc) >> 2
			c.wc.NwTos |= 0xfc
			c.wc.NwTTL = 0xff
			if k.NwTTL != 0 {
				ttl = k.NwTTL
			}
		}
		s[0] = odp.MPLSLSE(label, tc, ttl, true)
		clearL3L4(k)
		k.DPHash = 0
	}
	s.store(&k.MPLSLSE, &mp.deep)
	k.EthType = ethType
}

// clearL3L4 zeroes the L3 and L4 segments of a key: after push_mpls they
// are payload the pipeline cannot see.
func clearL3L4(k *flow.Key) {
	k.NwSrc, k.NwDst = 0, 0
	k.IPv6Src, k.IPv6Dst, k.IPv6Label = [16]byte{}, [16]byte{}, 0
	k.NwProto, k.NwTos, k.NwTTL, k.NwFrag = 0, 0, 0, 0
	k.ArpSha, k.ArpTha, k.NDTarget = [6]byte{}, [6]byte{}, [16]byte{}
	k.TpSrc, k.TpDst, k.TCPFlags = 0, 0, 0
	k.NDOptType, k.NDReserved, k.IGMPGroup = 0, 0, 0
}

// pop is pop_mpls:ethType (compose_mpls_pop_action).
func (mp *mplsXlate) pop(ethType uint16) {
	c := mp.c
	s, n := mp.flowCount()
	k := &c.flow.Key
	if popStack(&s, n, ethType, &k.EthType) {
		s.store(&k.MPLSLSE, &mp.deep)
		if !odp.IsMPLS(ethType) {
			mp.was = true
		}
	} else if n >= maxMPLS {
		c.fail(ErrTooManyMPLS)
	}
}

// popStack removes the outermost of a stack's n entries and sets the
// Ethertype (flow_pop_mpls); it fails on an empty stack and on a full one
// whose last entry is not the bottom (what is below it is unknown).
func popStack(s *lseStack, n int, ethType uint16, et *uint16) bool {
	if n == 0 || n == maxMPLS && s[n-1]&odp.MPLSBOSMask == 0 {
		return false
	}
	for i := 1; i < n; i++ {
		s[i-1] = s[i]
	}
	s[n-1] = 0
	*et = ethType
	return true
}

// setBits writes bits of the outermost entry of an MPLS packet
// (set_mpls_label, set_mpls_tc, set_mpls_ttl).
func (mp *mplsXlate) setBits(v, mask uint32) {
	c := mp.c
	if !odp.IsMPLS(c.flow.EthType) {
		return
	}
	c.wc.MPLSLSE |= mask
	c.flow.MPLSLSE = c.flow.MPLSLSE&^mask | v&mask
}

// decTTL is dec_mpls_ttl. It reports true when the rest of the action
// list must not run: the TTL was 1 or 0 (the packet goes to the
// controller with reason invalid_ttl, as Open vSwitch, to controller id
// 0 only) or the packet is not MPLS.
func (mp *mplsXlate) decTTL() bool {
	c := mp.c
	k := &c.flow.Key
	if odp.IsMPLS(k.EthType) {
		ttl := k.MPLSLSE & odp.MPLSTTLMask
		c.wc.MPLSLSE |= odp.MPLSTTLMask
		if ttl > 1 {
			k.MPLSLSE = k.MPLSLSE&^odp.MPLSTTLMask | (ttl - 1)
			return false
		}
		c.controller(ReasonInvalidTTL, 0xffff, 0, nil)
	}
	c.tr.skipf("MPLS decrement TTL exception")
	return true
}

// commit makes the packet's label stack the pipeline's
// (commit_mpls_action): pop what differs, rewrite the outermost common
// entry with a whole set(mpls), push what is missing.
func (mp *mplsXlate) commit() {
	c := mp.c
	f, b := &c.flow.Key, &c.base
	fs, bs := stackOf(f.MPLSLSE, &mp.deep), stackOf(b.MPLSLSE, &mp.baseDeep)
	baseN, flowN := bs.count(b.EthType), fs.count(f.EthType)
	common := 0
	for i := 0; i < min(baseN, flowN); i++ {
		if fs[flowN-1-i] != bs[baseN-1-i] {
			break
		}
		common++
	}
	for baseN > common {
		if baseN-1 == common && flowN > common {
			lse := fs[flowN-baseN]
			c.emit(odp.SetMPLS(lse, ^uint32(0)))
			bs[0] = lse
			common++
			continue
		}
		// Popping all but the last entry of a packet that ends up
		// non-MPLS still names an MPLS Ethertype.
		et := f.EthType
		if !odp.IsMPLS(f.EthType) && baseN > 1 {
			et = flow.EthTypeMPLS
		}
		c.emit(odp.PopMPLS(et))
		popStack(&bs, baseN, f.EthType, &b.EthType)
		baseN--
	}
	for baseN < flowN {
		lse := fs[flowN-baseN-1]
		c.emit(odp.PushMPLS(lse, f.EthType))
		// The packet's L3 fields stay: a patch port or a group bucket
		// may restore the pipeline's flow to them.
		for i := min(baseN, maxMPLS-1); i >= 1; i-- {
			bs[i] = bs[i-1]
		}
		bs[0] = lse
		b.EthType = f.EthType
		baseN++
	}
	bs.store(&b.MPLSLSE, &mp.baseDeep)
}

// needsMPLSRecirc reports whether a must see the L3 header a pop_mpls
// exposed, so that translation recirculates before it (recirc_for_mpls):
// everything but outputs, groups and writes below L3 (the kind's needsL3).
func needsMPLSRecirc(a *ofp.Action) bool {
	if f := propsOf(a.Type).needsL3; f != nil {
		return f(a)
	}
	return true
}

// recirc commits the packet and recirculates; the action list's
// remaining actions, from index i on, run in the next pass.
func (mp *mplsXlate) recirc(i int) {
	c := mp.c
	c.commit()
	fz, ok := c.freezeFrom(i)
	if !ok {
		return
	}
	c.emit(odp.Recirc(c.x.Recirc.ID(fz)))
	c.exit = true
}

// recircLookup recirculates in place of a table lookup that is not
// an action of the current list (a patch port's peer bridge, a
// packet-out's output to TABLE): the next pass resumes with a lookup in
// the current table, as Open vSwitch's frozen state without actions.
func (mp *mplsXlate) recircLookup() {
	c := mp.c
	c.commit()
	fz := freeze(c.snap.Bridge, c.table, &c.flow)
	fz.Conntracked = c.conntracked
	var err error
	if fz.ActionSet, err = c.aset.encode(); err != nil {
		c.fail(err)
		return
	}
	c.aset.acts, c.aset.hasGroup = nil, false
	c.emit(odp.Recirc(c.x.Recirc.ID(fz)))
	c.exit = true
}
