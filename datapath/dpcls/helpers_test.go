package dpcls

import (
	"math/rand/v2"

	"github.com/gvs-project/gvs/datapath/flow"
)

// shape is a realistic megaflow mask.
type shape struct {
	name string
	mask flow.Mask
}

func ones32() uint32 { return ^uint32(0) }

// shapes returns the mask shapes the tests draw from: the ones Open
// vSwitch's NORMAL and OVN pipelines typically produce, plus a catch-all
// and a full mask (which exceeds the inline entry words).
func shapes() []shape {
	var s []shape
	add := func(name string, f func(m *flow.Mask)) {
		var m flow.Mask
		f(&m)
		s = append(s, shape{name, m})
	}
	add("exact-5-tuple", func(m *flow.Mask) {
		m.InPort, m.EthType = ones32(), 0xffff
		m.NwSrc, m.NwDst, m.NwProto = ones32(), ones32(), 0xff
		m.TpSrc, m.TpDst = 0xffff, 0xffff
	})
	add("in_port+eth_type", func(m *flow.Mask) { m.InPort, m.EthType = ones32(), 0xffff })
	add("dst/24", func(m *flow.Mask) { m.InPort, m.EthType, m.NwDst = ones32(), 0xffff, 0xffffff00 })
	add("src/16+proto", func(m *flow.Mask) {
		m.RecircID, m.InPort, m.EthType, m.NwSrc, m.NwProto = ones32(), ones32(), 0xffff, 0xffff0000, 0xff
	})
	add("l2-pair", func(m *flow.Mask) {
		m.InPort, m.EthDst, m.EthSrc = ones32(), [6]byte{255, 255, 255, 255, 255, 255}, [6]byte{255, 255, 255, 255, 255, 255}
	})
	add("ct", func(m *flow.Mask) {
		m.RecircID, m.InPort, m.CtState, m.CtZone, m.CtMark, m.EthType = ones32(), ones32(), 0xff, 0xffff, ones32(), 0xffff
	})
	add("ipv6-dst/64", func(m *flow.Mask) {
		m.InPort, m.EthType = ones32(), 0xffff
		for i := range 8 {
			m.IPv6Dst[i] = 0xff
		}
	})
	add("tunnel+l4", func(m *flow.Mask) {
		m.TunID, m.TunDst, m.InPort, m.EthType, m.NwProto, m.TpDst = ^uint64(0), ones32(), ones32(), 0xffff, 0xff, 0xffff
		m.CtLabel = [16]byte{0: 0xff, 15: 0xff}
		m.IPv6Src = [16]byte{0: 0xff, 8: 0xff}
		m.NDTarget = [16]byte{0: 0xff, 8: 0xff}
	})
	add("full", func(m *flow.Mask) { *m = flow.All() })
	// Megaflows always match recirc_id; it also splits the key space so
	// that broad masks do not block most other megaflows in the tests.
	for i := range s {
		s[i].mask.RecircID = ones32()
	}
	add("catch-all", func(*flow.Mask) {})
	return s
}

// randKey draws a key from small value pools so that random keys often
// match random megaflows.
func randKey(r *rand.Rand) flow.Key {
	var k flow.Key
	k.RecircID = uint32(r.IntN(8))
	k.InPort = uint32(1 + r.IntN(4))
	k.CtState = uint8(r.IntN(3)) << 1
	k.CtZone = uint16(r.IntN(2))
	k.CtMark = uint32(r.IntN(2))
	k.TunID = uint64(r.IntN(2))
	k.TunDst = uint32(r.IntN(2))
	k.CtLabel[15] = byte(r.IntN(2))
	k.EthDst = [6]byte{0, 0, 0, 0, 0, byte(r.IntN(4))}
	k.EthSrc = [6]byte{0, 0, 0, 0, 0, byte(r.IntN(4))}
	k.EthType = []uint16{flow.EthTypeIPv4, flow.EthTypeIPv6, flow.EthTypeARP}[r.IntN(3)]
	k.NwSrc = 10<<24 | uint32(r.IntN(3))<<16 | uint32(r.IntN(3))<<8 | uint32(r.IntN(4))
	k.NwDst = 10<<24 | uint32(r.IntN(2))<<8 | uint32(r.IntN(4))
	k.IPv6Dst[7] = byte(r.IntN(3))
	k.IPv6Dst[15] = byte(r.IntN(3))
	k.IPv6Src[8] = byte(r.IntN(2))
	k.NDTarget[0] = byte(r.IntN(2))
	k.NwProto = []uint8{flow.IPProtoTCP, flow.IPProtoUDP}[r.IntN(2)]
	k.TpSrc = uint16(1000 + r.IntN(3))
	k.TpDst = []uint16{80, 443}[r.IntN(2)]
	return k
}

// randCovered returns a random key that m matches: m's key with random
// bits outside the mask.
func randCovered(r *rand.Rand, m *flow.Match) flow.Key {
	k := m.Key
	kw, mw := k.W(), m.Mask.W()
	for i := range kw {
		if r.IntN(2) == 0 {
			kw[i] |= r.Uint64() &^ mw[i]
		}
	}
	return k
}

// randMatch draws a megaflow: a random key seen through a random shape.
func randMatch(r *rand.Rand, sh []shape) flow.Match {
	m := flow.Match{Key: randKey(r), Mask: sh[r.IntN(len(sh))].mask}
	m.Normalize()
	return m
}

// overlaps reports whether some key matches both a and b.
func overlaps(a, b *flow.Match) bool {
	ak, am, bk, bm := a.Key.W(), a.Mask.W(), b.Key.W(), b.Mask.W()
	for i := range ak {
		if (ak[i]^bk[i])&am[i]&bm[i] != 0 {
			return false
		}
	}
	return true
}

// linear is the reference classifier: a slice scanned in order.
type linear struct {
	ms   []flow.Match
	vals []int
}

func (l *linear) lookup(k *flow.Key) (int, bool) {
	for i := range l.ms {
		if l.ms[i].Matches(k) {
			return l.vals[i], true
		}
	}
	return 0, false
}

// find returns the index of the megaflow with m's mask and masked key.
func (l *linear) find(m *flow.Match) int {
	for i := range l.ms {
		if *l.ms[i].Mask.W() == *m.Mask.W() && *l.ms[i].Key.W() == *m.Key.W() {
			return i
		}
	}
	return -1
}

func (l *linear) remove(i int) {
	l.ms = append(l.ms[:i], l.ms[i+1:]...)
	l.vals = append(l.vals[:i], l.vals[i+1:]...)
}

func (l *linear) masks() int {
	seen := map[flow.Words]bool{}
	for i := range l.ms {
		seen[*l.ms[i].Mask.W()] = true
	}
	return len(seen)
}
