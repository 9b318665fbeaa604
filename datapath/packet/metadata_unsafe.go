package packet

import "unsafe"

// clearBeforeTunnel zeroes every Metadata field before Tunnel (the last
// field) without touching the tunnel key.
func (md *Metadata) clearBeforeTunnel() {
	b := unsafe.Slice((*byte)(unsafe.Pointer(md)), unsafe.Offsetof(md.Tunnel))
	clear(b)
}
