package classifier

import (
	"math/rand/v2"
	"slices"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// ref is the naive model: a list of rules scanned linearly, with Open
// vSwitch's conjunctive-match semantics written out directly. It returns
// every rule the classifier may validly return (ties make several valid).
type ref struct {
	rules []*Rule[int]
}

func matchesFlow(r *Rule[int], fl *mf.Flow) bool { return r.matchesWords(fw(fl)) }

func (rf *ref) candidates(v Version, fl *mf.Flow, allowConj bool) []*Rule[int] {
	var vis []*Rule[int]
	for _, r := range rf.rules {
		if r.VisibleIn(v) && matchesFlow(r, fl) {
			vis = append(vis, r)
		}
	}
	pris := map[int]bool{}
	for _, r := range vis {
		pris[int(r.priority)] = true
	}
	order := make([]int, 0, len(pris))
	for p := range pris {
		order = append(order, p)
	}
	slices.Sort(order)
	slices.Reverse(order)
	for _, p := range order {
		var hards, softs []*Rule[int]
		for _, r := range vis {
			if int(r.priority) != p {
				continue
			}
			if r.conj == nil {
				hards = append(hards, r)
			} else {
				softs = append(softs, r)
			}
		}
		if len(hards) > 0 {
			return hards
		}
		if !allowConj {
			continue
		}
		// A conjunction completes when each of its clauses is carried by
		// some soft match at this priority (and there are enough soft
		// matches to carry them, as Open vSwitch counts).
		have := map[uint32]uint64{}
		need := map[uint32]uint8{}
		for _, r := range softs {
			for _, c := range r.Conjunctions() {
				if int(c.NClauses) > len(softs) {
					continue
				}
				have[c.ID] |= 1 << c.Clause
				need[c.ID] = c.NClauses
			}
		}
		var out []*Rule[int]
		for id, got := range have {
			n := need[id]
			full := ^uint64(0) >> (64 - uint(n))
			if got&full != full {
				continue
			}
			f2 := *fl
			f2.ConjID = id
			out = append(out, rf.candidates(v, &f2, false)...)
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// gen draws rules and flows from small value domains so that rules overlap
// and flows hit them often.
type gen struct {
	rng *rand.Rand
	// ovnCtMasks limits ct_state masks to a few used by OVN instead of
	// random ones (which make a subtable each).
	ovnCtMasks bool
}

var (
	genMACs  = [][6]byte{{0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 2}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {2, 0, 0, 0, 0, 9}}
	genIPs   = []uint32{0x0a000001, 0x0a000002, 0x0a000103, 0x0a010001, 0x0a010203, 0xc0a80001, 0x0a0000ff}
	genPorts = []uint16{22, 80, 443, 1024, 8080, 0x1f90}
	genIPv6  = [][16]byte{
		{0x20, 0x01, 0x0d, 0xb8, 15: 1},
		{0x20, 0x01, 0x0d, 0xb8, 15: 2},
		{0x20, 0x01, 0x0d, 0xb8, 0, 1, 15: 1},
		{0xfe, 0x80, 15: 1},
	}
)

func (g *gen) pick(n int) int { return g.rng.IntN(n) }

func (g *gen) ip() uint32 {
	switch g.pick(8) {
	case 0:
		return g.rng.Uint32()
	case 1: // inside 10/8, off the common paths of the tries
		return 0x0a000000 | g.rng.Uint32()>>8
	}
	return genIPs[g.pick(len(genIPs))]
}

func (g *gen) port() uint16 {
	if g.pick(6) == 0 {
		return uint16(g.rng.Uint32())
	}
	return genPorts[g.pick(len(genPorts))]
}

func (g *gen) ipv6() [16]byte {
	a := genIPv6[g.pick(len(genIPv6))]
	if g.pick(4) == 0 {
		a[15] = byte(g.rng.Uint32())
	}
	if g.pick(8) == 0 {
		a[7] ^= byte(g.rng.Uint32())
	}
	return a
}

func prefix32(n int) uint32 {
	if n == 0 {
		return 0
	}
	return ^uint32(0) << (32 - n)
}

func prefix128(n int) (m [16]byte) {
	orBytes(&m, n)
	return m
}

// flow draws a random flow.
func (g *gen) flow() mf.Flow {
	var f mf.Flow
	f.InPort = uint32(1 + g.pick(4))
	f.EthDst = genMACs[g.pick(len(genMACs))]
	f.EthSrc = genMACs[g.pick(len(genMACs))]
	f.Metadata = uint64(g.pick(4))
	f.Regs[0] = uint32(g.pick(4))
	f.TunID = []uint64{0, 5, g.rng.Uint64()}[g.pick(3)]
	switch g.pick(6) {
	case 0, 1, 2:
		f.EthType = flow.EthTypeIPv4
		f.NwSrc, f.NwDst = g.ip(), g.ip()
		f.NwProto = []uint8{6, 17, 1}[g.pick(3)]
		f.TpSrc, f.TpDst = g.port(), g.port()
		f.CtState = uint8(g.rng.Uint32())
	case 3:
		f.EthType = flow.EthTypeIPv6
		f.IPv6Src, f.IPv6Dst = g.ipv6(), g.ipv6()
		f.NwProto = []uint8{6, 17}[g.pick(2)]
		f.TpSrc, f.TpDst = g.port(), g.port()
	case 4:
		f.EthType = flow.EthTypeARP
		f.NwSrc, f.NwDst = g.ip(), g.ip()
		f.NwProto = 1
	default:
		f.EthType = 0x88cc
	}
	return f
}

// match draws a random match from a few realistic mask shapes.
func (g *gen) match() mf.Match {
	var m mf.Match
	f, k := &m.Flow, &m.Mask
	ip4 := func() { f.EthType, k.EthType = flow.EthTypeIPv4, 0xffff }
	switch g.pick(12) {
	case 0: // L2 switching
		f.InPort, k.InPort = uint32(1+g.pick(4)), ^uint32(0)
		f.EthDst, k.EthDst = genMACs[g.pick(len(genMACs))], [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	case 1: // routing on ip_dst
		ip4()
		n := []int{8, 16, 24, 32}[g.pick(4)]
		f.NwDst, k.NwDst = g.ip()&prefix32(n), prefix32(n)
	case 2: // ACL: ip_src prefix, proto, tp_dst
		ip4()
		n := []int{16, 24, 32}[g.pick(3)]
		f.NwSrc, k.NwSrc = g.ip()&prefix32(n), prefix32(n)
		f.NwProto, k.NwProto = 6, 0xff
		f.TpDst, k.TpDst = g.port(), 0xffff
	case 3: // masked ports
		ip4()
		f.NwProto, k.NwProto = []uint8{6, 17}[g.pick(2)], 0xff
		pm := []uint16{0xffff, 0xff00, 0xfc00}[g.pick(3)]
		f.TpSrc, k.TpSrc = g.port()&pm, pm
		if g.pick(2) == 0 {
			f.TpDst, k.TpDst = g.port(), 0xffff
		}
	case 4: // OVN-style pipeline metadata
		f.Metadata, k.Metadata = uint64(g.pick(4)), ^uint64(0)
		f.Regs[0], k.Regs[0] = uint32(g.pick(4)), ^uint32(0)
		if g.pick(2) == 0 {
			f.InPort, k.InPort = uint32(1+g.pick(4)), ^uint32(0)
		}
	case 5: // catch-all
	case 6: // IPv6 routing
		f.EthType, k.EthType = flow.EthTypeIPv6, 0xffff
		n := []int{16, 64, 128}[g.pick(3)]
		a, pm := g.ipv6(), prefix128(n)
		for i := range a {
			a[i] &= pm[i]
		}
		f.IPv6Dst, k.IPv6Dst = a, pm
	case 7: // conntrack state bits
		ip4()
		bitsM := uint8(g.rng.Uint32()) | 0x20
		if g.ovnCtMasks {
			bitsM = []uint8{0x20, 0x21, 0x22, 0x31, 0x3f}[g.pick(5)]
		}
		f.CtState, k.CtState = uint8(g.rng.Uint32())&bitsM, bitsM
		f.NwProto, k.NwProto = 6, 0xff
	case 8: // ARP target
		f.EthType, k.EthType = flow.EthTypeARP, 0xffff
		f.NwDst, k.NwDst = g.ip(), ^uint32(0)
	case 9: // non-CIDR address mask (not trie-tracked)
		ip4()
		f.NwSrc, k.NwSrc = g.ip()&0xff00ff00, 0xff00ff00
	case 10: // tunnel
		f.TunID, k.TunID = []uint64{0, 5}[g.pick(2)], ^uint64(0)
		f.InPort, k.InPort = uint32(1+g.pick(4)), ^uint32(0)
	case 11: // both addresses with prefixes, plus metadata
		ip4()
		a, b := []int{8, 24, 32}[g.pick(3)], []int{16, 32}[g.pick(2)]
		f.NwSrc, k.NwSrc = g.ip()&prefix32(a), prefix32(a)
		f.NwDst, k.NwDst = g.ip()&prefix32(b), prefix32(b)
		f.Metadata, k.Metadata = uint64(g.pick(4)), ^uint64(0)
	}
	return m
}

// around returns a random flow equal to fl in the bits of wc: either fl
// with a few bits that some rule matches on flipped outside wc (the
// neighbours most likely to expose a too narrow mask), or a random flow
// forced to fl's values in wc.
func (g *gen) around(fl, wc *mf.Flow, ruleBits [][2]int) mf.Flow {
	if len(ruleBits) > 0 && g.pick(2) == 0 {
		o := *fl
		ow, ww := fw(&o), fw(wc)
		for range 1 + g.pick(3) {
			p := ruleBits[g.pick(len(ruleBits))]
			if ww[p[0]]&(1<<p[1]) == 0 {
				ow[p[0]] ^= 1 << p[1]
			}
		}
		return o
	}
	o := g.flow()
	ow, fwd, ww := fw(&o), fw(fl), fw(wc)
	if g.pick(3) == 0 { // also flip random bits anywhere
		for range 1 + g.pick(4) {
			ow[g.pick(flowWords)] ^= 1 << g.pick(64)
		}
	}
	for i := range ow {
		ow[i] = fwd[i]&ww[i] | ow[i]&^ww[i]
	}
	o.ConjID = fl.ConjID
	return o
}

// ruleBits lists the (word, bit) positions some rule matches on.
func (rf *ref) ruleBits() [][2]int {
	var u words
	for _, r := range rf.rules {
		for k, i := range r.shape.idx {
			u[i] |= r.shape.mask[k]
		}
	}
	var out [][2]int
	for w, x := range u {
		for b := range 64 {
			if x&(1<<b) != 0 {
				out = append(out, [2]int{w, b})
			}
		}
	}
	return out
}
