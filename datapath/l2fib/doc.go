// Package l2fib is the datapath's MAC learning table and the execution of
// the mac_learn learn-and-forward datapath action.
//
// # Overview
//
// Each bridge owns one [Table] keyed by (VLAN, MAC) → datapath port.
// While the table is small the translator (ofproto's NORMAL) learns in it
// and looks it up itself, one megaflow per address pair as Open vSwitch
// (Changes tells it when to revalidate). Beyond that it turns Port VLAN
// modes into one
// mac_learn(table=T,vlan=V[,in_tagged],ports(P[:tagged],...)) action per
// (in_port, VLAN): the datapath learns the source and looks up the
// destination for every packet, so one megaflow serves any number of
// MACs. A [Forwarder] (one per poll-mode worker) executes the action:
// learned destination → that port (if a member of the VLAN and not the
// input port; a destination on the input port is dropped, as Open
// vSwitch), otherwise flood to every member port but the input port,
// pushing or popping the 802.1Q tag per output port. ofproto keeps the
// semantics (access, trunk, native-tagged, native-untagged); this package
// only sees per-VLAN port sets with a tagged bit.
//
// # Invariants
//
//   - Capacity (mac-table-size) is never exceeded: a full table evicts,
//     from the port holding the most dynamic entries, the least recently
//     refreshed of that port's oldest few entries (an approximation of
//     Open vSwitch's per-port LRU that needs no list update on refresh).
//     Evictions are counted and reported through a rate-limited callback.
//   - An entry is never removed while it is refreshed within the aging
//     time: lookups do not check age (no flood on "stale" entries); only
//     the sweep removes entries, and only those whose last refresh is at
//     least the aging time old.
//   - Static entries (fdb/add) are never aged, evicted or moved.
//   - A MAC that moves more than MoveLimit times within MoveWindow is
//     locked to its port for MoveLockTime (flap damping, gvs's addition;
//     Open vSwitch only locks MACs learned from gratuitous ARPs on bonds).
//   - Capacity is table-wide (an atomic count reserved before each
//     insert), so a table fills to exactly its capacity; the victim is
//     chosen in the inserting shard (its port with the most entries),
//     which is fair in aggregate because hashing spreads every port's
//     MACs over all shards.
//
// # Memory
//
// Entries are 40 bytes in pointer-free 1,024-entry chunks allocated as a
// shard fills; a shard's first entry also allocates its bucket array (4
// bytes per entry of its share of the capacity). The default capacity,
// 4 Mi entries in 256 shards, costs about 176 MiB full (44 B/entry;
// 44.4 B/entry measured at 16 Mi entries), about 26 MiB once a few
// hundred MACs have touched every shard, and almost nothing empty.
// Chunks are kept after flushes (the high-water mark stays allocated).
// Chunks and bucket arrays come from anonymous mappings advised to use
// transparent huge pages (arena.go): at millions of entries every lookup
// touches a random page, and 4 KiB pages add a TLB miss to each.
//
// # Thread-safety
//
// Lookups and refreshes take no lock: readers load atomics (bucket heads,
// chain links, key, port, refresh stamp) and validate the key after
// reading the port, so a reader never sees a port for another key. A
// reader that raced with a removal may miss an entry once (the packet is
// flooded, and counted). Inserts, moves and removals take the lock of the
// entry's shard; shard locks are never nested. Refresh stamps are written
// only when the coarse clock second changes, so hot entries do not bounce
// cache lines between workers. Counters of the packet path are summed per
// batch in the Forwarder and added to the table once per batch.
//
// # Life cycle
//
// The owner creates a Table per bridge with [New], registers it under the
// action's table id in a [Registry], calls [Table.Sweep] about once a
// second (it also advances the coarse clock), and [Table.FlushPort] when a
// port goes down or is deleted. The datapath's MACLearn hook calls
// [Forwarder.Forward].
//
// # Imports
//
// Only datapath/packet and datapath/odp (and the standard library); never
// ofproto, OVSDB or appctl: fdb/* commands format [Table.Dump] and
// [Table.Stats] with [AppendShow] and [AppendStats].
package l2fib
