package flow

import "unsafe"

// KeyWords is the size of a Key in uint64 words.
const KeyWords = int(unsafe.Sizeof(Key{})) / 8

// Words is a Key or Mask viewed as words.
type Words = [KeyWords]uint64

// W returns the key as words. The view aliases the key.
func (k *Key) W() *Words { return (*Words)(unsafe.Pointer(k)) }

// W returns the mask as words. The view aliases the mask.
func (m *Mask) W() *Words { return (*Words)(unsafe.Pointer(m)) }

// wordOf returns the index of the word holding the field at byte offset off.
func wordOf(off uintptr) int { return int(off / 8) }

// Segment boundaries in words: [0,SegMetaEnd) metadata, then tunnel,
// L2, L3 and L4 up to KeyWords.
var (
	SegMetaEnd   = wordOf(unsafe.Offsetof(Key{}.TunID))
	SegTunnelEnd = wordOf(unsafe.Offsetof(Key{}.EthDst))
	SegL2End     = wordOf(unsafe.Offsetof(Key{}.NwSrc))
	SegL3End     = wordOf(unsafe.Offsetof(Key{}.TpSrc))
)
