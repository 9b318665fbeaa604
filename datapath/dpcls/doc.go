// Package dpcls owns the datapath's megaflow cache: the classifier that
// maps a flow key to the megaflow (mask plus masked key) covering it, and
// the per-worker exact-match cache (EMC) in front of it. It is the gvs
// counterpart of Open vSwitch's dpcls and EMC in dpif-netdev.
//
// It imports only datapath/flow and the standard library; it knows nothing
// of OpenFlow, datapath actions or ports. The value stored per megaflow
// is a type parameter (the datapath's flow pointer in practice).
//
// # Overview
//
// Classifier performs tuple space search: one subtable per distinct mask,
// each a hash table from the masked key to the megaflow. A lookup probes
// the subtables in rank order and stops at the first match. Megaflows have
// no priorities because the datapath never installs two that overlap, so
// the first match is the only one.
//
// Each subtable keeps the list of its mask's non-zero words; hashing and
// comparison touch only those. An entry stores only the masked key words
// (compact, like Open vSwitch's miniflow), not a whole flow.Key: with a
// pointer-sized value and at most 7 non-zero mask words an entry is one
// 64-byte cache line, and a table slot is 16 bytes (hash tag and entry
// pointer) at no more than half load. One million exact 5-tuple megaflows
// take about 100 MB.
//
// LookupBatch walks the subtables once for the whole batch, as Open
// vSwitch's dpcls_lookup does, and splits each subtable's work into
// passes (hash all keys, load all home slots, compare) so that the cache
// misses of different keys overlap; in a table larger than the caches
// that is worth about 1.5x over one key at a time.
//
// # Life cycle
//
// A subtable is created by the first Insert with its mask and dropped
// from the search order by the Remove of its last megaflow. Its hash table
// grows, shrinks and sheds tombstones by migrating to a new table a few
// dozen slots per Insert or Remove (and per Rank), readers probing the new
// table and then the old one meanwhile. Open vSwitch's cmap instead
// rehashes everything in one insert; copying a million entries at once
// takes 70 to 170 ms on the development VM, a stall a worker that installs
// megaflows itself (synchronous upcalls) would feel.
//
// # Invariants
//
//   - A key inserted before a lookup starts, and not removed before it
//     ends, is found.
//   - A megaflow removed before a lookup starts is not returned by it.
//   - Lookup, LookupBatch and EMC.Lookup never allocate and never block.
//
// # Thread-safety
//
// Writers (Insert, Remove) may run on any goroutine; a mutex serialises
// them. Readers never take it and are never blocked by writers: the
// subtable order is an immutable snapshot published through an
// atomic.Pointer, and each subtable is an open-addressing table of atomic
// slots pointing to immutable entries, with tombstones for removals and
// the (new, old) table pair of a resize published as one snapshot. The
// garbage collector plays the role of Open vSwitch's RCU.
//
// Each classifier is owned by one reading goroutine, as each Open vSwitch
// PMD thread has its own dpcls: Lookup and LookupBatch count hits per
// subtable in plain fields, and Rank, which the owner calls periodically,
// sorts the subtables by those counts. Other goroutines look up with Peek
// or Get and walk with Range, Len, Subtables and Stats.
//
// An EMC is owned by one worker and is not safe for concurrent use.
package dpcls
