package l2fib

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// arena hands out the table's pointer-free memory (entry chunks and
// bucket arrays) from anonymous mappings advised to use transparent huge
// pages. With millions of entries every lookup touches a random page;
// on 4 KiB pages that is a TLB miss (a nested page walk on a VM) on top
// of the cache miss, and it dominated the per-packet cost at 1 M flows.
// Memory is returned to the kernel when the table is collected
// (runtime.AddCleanup in New). If mapping fails the Go heap is used.
type arena struct {
	mu     sync.Mutex
	maps   [][]byte // every mapping, unmapped by release
	cur    []byte   // unused tail of the newest slab
	mapped int      // bytes mapped, for tests and memory reports
}

const (
	hugePage = 2 << 20
	// slabSize is how much is mapped at a time for small allocations;
	// untouched pages cost nothing, touched ones come in huge pages.
	slabSize = 8 << 20
	// allocAlign keeps allocations cache-line aligned.
	allocAlign = 64
)

// alloc returns n zeroed bytes, cache-line aligned, that live until
// release. The memory must never hold Go pointers.
func (a *arena) alloc(n int) unsafe.Pointer {
	n = (n + allocAlign - 1) &^ (allocAlign - 1)
	a.mu.Lock()
	defer a.mu.Unlock()
	if n > slabSize/4 {
		if m := a.mapHuge(n); m != nil {
			return unsafe.Pointer(&m[0])
		}
		return heapAlloc(n)
	}
	if len(a.cur) < n {
		m := a.mapHuge(slabSize)
		if m == nil {
			return heapAlloc(n)
		}
		a.cur = m
	}
	p := unsafe.Pointer(&a.cur[0])
	a.cur = a.cur[n:]
	return p
}

// mapHuge maps size bytes (rounded up to a huge page) and asks for huge
// pages; nil if the mapping fails.
func (a *arena) mapHuge(size int) []byte {
	size = (size + hugePage - 1) &^ (hugePage - 1)
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	// Advice only: without THP the mapping works on small pages.
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE)
	a.maps = append(a.maps, m)
	a.mapped += size
	return m
}

// heapAlloc is the fallback: pointer-free Go memory, kept alive by the
// pointers into it.
func heapAlloc(n int) unsafe.Pointer {
	b := make([]uint64, n/8)
	return unsafe.Pointer(&b[0])
}

// bytes returns how much the arena has mapped (an upper bound on what
// it uses: the newest slab's tail is unused).
func (a *arena) bytes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mapped
}

// release unmaps everything. Nothing may use the memory afterwards.
func (a *arena) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.maps {
		_ = unix.Munmap(m)
	}
	a.maps, a.cur, a.mapped = nil, nil, 0
}

// newChunk returns a zeroed entry chunk.
func (a *arena) newChunk() *chunk {
	return (*chunk)(a.alloc(int(unsafe.Sizeof(chunk{}))))
}

// newBuckets returns n zeroed bucket heads.
func (a *arena) newBuckets(n int) []atomic.Uint32 {
	return unsafe.Slice((*atomic.Uint32)(a.alloc(n*int(unsafe.Sizeof(atomic.Uint32{})))), n)
}
