package mf

import (
	"math/bits"
	"unsafe"
)

// flowWords is the size of a Flow in 64-bit words; a PackedMatch's
// bitmap has one bit per word, so it must stay at most 64.
const flowWords = int(unsafe.Sizeof(Flow{}) / 8)

// Compile-time checks: a Flow is whole words, and at most 64 of them.
var (
	_ [0]struct{} = [unsafe.Sizeof(Flow{}) % 8]struct{}{}
	_ [64 - flowWords]struct{}
)

type flowWordArray = [flowWords]uint64

func flowWordsOf(f *Flow) *flowWordArray { return (*flowWordArray)(unsafe.Pointer(f)) }

// PackedMatch is a Match kept for later in the memory its matched fields
// need: the words of the mask that are not zero, each with its value,
// and the tunnel metadata mapping only if it has one. A bundle holds its
// flow_mods' matches this way until it commits.
type PackedMatch struct {
	present uint64   // bit i: word i of the mask is not zero
	words   []uint64 // per present word: value, mask
	tun     *TunMap
}

// Pack returns m packed.
func (m *Match) Pack() PackedMatch {
	kw, mw := flowWordsOf(&m.Flow), flowWordsOf(&m.Mask)
	var p PackedMatch
	n := 0
	for i, w := range mw {
		if w != 0 {
			p.present |= 1 << i
			n++
		}
	}
	p.words = make([]uint64, 0, 2*n)
	for i, w := range mw {
		if w != 0 {
			p.words = append(p.words, kw[i]&w, w)
		}
	}
	if m.Tun != (TunMap{}) {
		tun := m.Tun
		p.tun = &tun
	}
	return p
}

// Unpack sets *m to the packed match.
func (p *PackedMatch) Unpack(m *Match) {
	m.Flow, m.Mask = Flow{}, Flow{}
	kw, mw := flowWordsOf(&m.Flow), flowWordsOf(&m.Mask)
	k := 0
	for b := p.present; b != 0; b &= b - 1 {
		i := bits.TrailingZeros64(b)
		kw[i], mw[i] = p.words[k], p.words[k+1]
		k += 2
	}
	if p.tun != nil {
		m.Tun = *p.tun
	} else {
		m.Tun = TunMap{}
	}
}
