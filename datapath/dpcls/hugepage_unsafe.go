package dpcls

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePageMin is the size from which a table asks for transparent huge
// pages: below it a table spans few pages and TLB misses do not matter.
const hugePageMin = 4 << 20

// adviseHugePages asks the kernel to back a large slot array with huge
// pages (MADV_HUGEPAGE). With one million megaflows the probes are
// random reads over tens of megabytes; with 4 KiB pages most of them also
// miss the TLB (measured: ~25 % of the per-packet time at 1 M megaflows).
// Go's runtime does not ask for huge pages itself, and the machine's THP
// mode is often "madvise". The advice is best effort: errors are ignored.
func adviseHugePages[T any](slots []slot[T]) {
	size := uintptr(len(slots)) * unsafe.Sizeof(slots[0])
	if size < hugePageMin {
		return
	}
	// madvise wants a page-aligned start: round in to whole pages.
	const page = 4096
	base := unsafe.Pointer(&slots[0])
	addr := uintptr(base)
	off := (page - addr%page) % page
	n := (size - off) &^ (page - 1)
	if size <= off || n == 0 {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(base, off)), n)
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
