package afpacket

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// loadStatus reads a ring status word with acquire semantics: the frame
// data the kernel wrote before setting it are then visible.
func loadStatus(ring []byte, off int) uint32 {
	_ = ring[off+3]
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(&ring[off])))
}

// storeStatus writes a ring status word with release semantics, after
// which the kernel may reuse the slot.
func storeStatus(ring []byte, off int, v uint32) {
	_ = ring[off+3]
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&ring[off])), v)
}

// sendmmsg sends msgs with one system call and returns how many the
// kernel took.
func sendmmsg(fd int, msgs []unix.Mmsghdr) (int, unix.Errno) {
	n, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), uintptr(len(msgs)), unix.MSG_DONTWAIT, 0, 0)
	return int(n), e
}
