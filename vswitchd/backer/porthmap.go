package backer

import (
	"cmp"
	"slices"

	"github.com/gvs-project/gvs/internal/ovshash"
)

// portHmap replays the order in which Open vSwitch's bridge.c iterates a
// bridge's ports (HMAP_FOR_EACH over br->ports, an hmap keyed by
// hash_string(name, 0)): buckets in index order, each bucket's ports
// newest first, the bucket count growing as ports are added and never
// shrinking. The spanning tree numbers ports in that order when
// stp-port-num is not set, so which port gets which number, and what a
// deletion renumbers, is Open vSwitch's.
type portHmap struct {
	mask    uint32
	buckets map[uint32][]string // head of chain first
	n       int
}

func portHash(name string) uint32 { return ovshash.Bytes([]byte(name), 0) }

func (h *portHmap) has(name string) bool {
	return slices.Contains(h.buckets[portHash(name)&h.mask], name)
}

func (h *portHmap) insertFast(name string) {
	if h.buckets == nil {
		h.buckets = map[uint32][]string{}
	}
	b := portHash(name) & h.mask
	h.buckets[b] = append([]string{name}, h.buckets[b]...)
	h.n++
}

// calcMask is hmap.c's bucket mask for a capacity.
func calcMask(capacity int) uint32 {
	m := uint32(capacity / 2)
	m |= m >> 1
	m |= m >> 2
	m |= m >> 4
	m |= m >> 8
	m |= m >> 16
	m |= (m & 1) << 1
	return m
}

func (h *portHmap) insert(name string) {
	h.insertFast(name)
	if uint32(h.n/2) > h.mask {
		if nm := calcMask(h.n); nm > h.mask {
			old, oldMask := h.buckets, h.mask
			h.buckets, h.mask, h.n = map[uint32][]string{}, nm, 0
			for i := uint32(0); i <= oldMask; i++ {
				for _, name := range old[i] {
					h.insertFast(name)
				}
			}
		}
	}
}

func (h *portHmap) remove(name string) {
	b := portHash(name) & h.mask
	if i := slices.Index(h.buckets[b], name); i >= 0 {
		h.buckets[b] = slices.Delete(h.buckets[b], i, i+1)
		h.n--
	}
}

// sync makes the set the names given: gone ones are removed, new ones
// inserted in the order of their hashes (Open vSwitch adds a
// reconfiguration's new ports in its wanted-ports hash order).
func (h *portHmap) sync(names []string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for _, n := range h.order() {
		if !want[n] {
			h.remove(n)
		}
	}
	var add []string
	for _, n := range names {
		if !h.has(n) {
			add = append(add, n)
		}
	}
	slices.SortStableFunc(add, func(a, b string) int { return cmp.Compare(portHash(a), portHash(b)) })
	for _, n := range add {
		h.insert(n)
	}
}

// order lists the ports in iteration order.
func (h *portHmap) order() []string {
	var out []string
	for i := uint32(0); i <= h.mask; i++ {
		out = append(out, h.buckets[i]...)
	}
	return out
}
