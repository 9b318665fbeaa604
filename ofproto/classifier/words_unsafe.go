package classifier

import (
	"unsafe"

	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/mf"
)

// flowWords is the size of an mf.Flow in 64-bit words. The classifier
// hashes and compares flows, masks and rule keys word by word.
const flowWords = int(unsafe.Sizeof(mf.Flow{}) / 8)

// mf.Flow must be a whole number of words (compile-time check).
var _ [0]struct{} = [unsafe.Sizeof(mf.Flow{}) % 8]struct{}{}

type words = [flowWords]uint64

// fw views a flow (or a mask, which has the same type) as words. The view
// aliases the flow.
func fw(f *mf.Flow) *words { return (*words)(unsafe.Pointer(f)) }

// flowOf views words as a flow.
func flowOf(w *words) *mf.Flow { return (*mf.Flow)(unsafe.Pointer(w)) }

// Lookup stages, in order, as Open vSwitch's flow segments: a subtable miss
// in an early stage un-wildcards only the fields of the stages checked so
// far.
const (
	stageMeta = iota
	stageL2
	stageL3
	stageL4
	numStages
)

// stageMasks[s] has a 1-bit for every bit of mf.Flow in stage s. Fields are
// assigned as in Open vSwitch's struct flow (which differs from the
// datapath key's own segments for the conntrack original-tuple fields and
// packet_type): the conntrack addresses are L3, its ports L4, packet_type
// metadata; ND target and ARP hardware addresses and tcp_flags are L3.
var stageMasks = buildStageMasks()

// portsMask covers tp_src and tp_dst, the ports-trie bits.
var portsMask = fieldMask(keyField(unsafe.Offsetof(flow.Key{}.TpSrc), 2), keyField(unsafe.Offsetof(flow.Key{}.TpDst), 2))

type span struct{ off, size uintptr }

func keyField(off, size uintptr) span { return span{unsafe.Offsetof(mf.Flow{}.Key) + off, size} }

func fieldMask(spans ...span) words {
	var w words
	b := (*[flowWords * 8]byte)(unsafe.Pointer(&w))
	for _, s := range spans {
		for i := s.off; i < s.off+s.size; i++ {
			b[i] = 0xff
		}
	}
	return w
}

func buildStageMasks() [numStages]words {
	var k flow.Key
	f := func(off, size uintptr) span { return keyField(off, size) }
	l2 := []span{
		f(unsafe.Offsetof(k.EthDst), 6), f(unsafe.Offsetof(k.EthType), 2), f(unsafe.Offsetof(k.EthSrc), 6),
		f(unsafe.Offsetof(k.VLANs), unsafe.Sizeof(k.VLANs)), f(unsafe.Offsetof(k.MPLSLSE), 4),
	}
	l3 := []span{
		f(unsafe.Offsetof(k.NwSrc), 4), f(unsafe.Offsetof(k.NwDst), 4),
		f(unsafe.Offsetof(k.CtNwSrc), 4), f(unsafe.Offsetof(k.CtNwDst), 4),
		f(unsafe.Offsetof(k.IPv6Src), 16), f(unsafe.Offsetof(k.IPv6Dst), 16),
		f(unsafe.Offsetof(k.CtIPv6Src), 16), f(unsafe.Offsetof(k.CtIPv6Dst), 16),
		f(unsafe.Offsetof(k.IPv6Label), 4), f(unsafe.Offsetof(k.NwProto), 1),
		f(unsafe.Offsetof(k.NwTos), 1), f(unsafe.Offsetof(k.NwTTL), 1), f(unsafe.Offsetof(k.NwFrag), 1),
		f(unsafe.Offsetof(k.ArpSha), 6), f(unsafe.Offsetof(k.ArpTha), 6), f(unsafe.Offsetof(k.NDTarget), 16),
		f(unsafe.Offsetof(k.TCPFlags), 2), f(unsafe.Offsetof(k.NDOptType), 1),
	}
	l4 := []span{
		f(unsafe.Offsetof(k.TpSrc), 2), f(unsafe.Offsetof(k.TpDst), 2),
		f(unsafe.Offsetof(k.CtTpSrc), 2), f(unsafe.Offsetof(k.CtTpDst), 2),
		f(unsafe.Offsetof(k.IGMPGroup), 4), f(unsafe.Offsetof(k.NDReserved), 4),
	}
	var m [numStages]words
	m[stageL2] = fieldMask(l2...)
	m[stageL3] = fieldMask(l3...)
	m[stageL4] = fieldMask(l4...)
	// Everything else (metadata, tunnel, registers, conj_id, padding) is
	// the metadata stage.
	for i := range m[stageMeta] {
		m[stageMeta][i] = ^(m[stageL2][i] | m[stageL3][i] | m[stageL4][i])
	}
	return m
}
