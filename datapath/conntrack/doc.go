// Package conntrack owns the datapath's connection tracker: the state
// behind the ct() datapath action, as Open vSwitch's userspace
// lib/conntrack.c. It imports only datapath/packet, datapath/flow,
// datapath/odp and the standard library; it knows nothing of OpenFlow,
// ports or workers.
//
// # Overview
//
// A Tracker holds 65,536 zones. Each zone is its own hash table, created
// by the zone's first commit, so that flushing a zone (OVN does it on
// router failover) never touches another zone. A connection is keyed by
// (zone, 5-tuple); its original- and reply-direction keys both point at
// the one Conn. Execute runs a batch through ct(): it parses each packet
// (IPv4/IPv6; TCP, UDP, ICMP/ICMPv6 echo and errors, other protocols),
// looks it up, advances the protocol state (TCP with the pf window
// checks of Open vSwitch, optionally liberal), commits, sets ct_mark and
// ct_label, applies NAT (including the packet quoted by a related ICMP
// error) and writes ct_state, ct_zone, ct_mark, ct_label and the
// original-direction tuple into the packet's metadata.
//
// # Invariants
//
//   - A Conn's keys never change after it is published; its TCP state is
//     guarded by Conn.mu; its expiry, with the UDP/ICMP state in the same
//     word, is atomic (compare-and-swap, no lock).
//   - Every key in a zone table is unique: NAT chooses reply keys that
//     are free in the zone, under the zone lock.
//   - A key in a zone's table before a lookup starts, and not removed
//     before it ends, is found. Chains are lock-free lists with one
//     writer (the zone lock); a resize relinks them with the zone's
//     sequence counter odd, and a lookup that missed while it changed
//     retries (a lookup that starts during a resize waits for it).
//   - Tracker.count equals the sum of the live zones' counts.
//   - zone.all lists exactly the zone's connections (zone lock); a
//     Conn's slot is its index there.
//
// # Life cycle
//
// Connections are created by a committing ct() and die by expiry (Sweep,
// called periodically with a work budget), by a TCP restart, by
// force_commit in the reply direction or by a flush. FlushZone swaps the
// zone's pointer to nil in O(1) and marks the old zone dead; packets
// already past the lookup finish with what they found. The memory of
// dead connections is then reused (below) or left to the collector.
//
// # Reuse and grace periods
//
// Lookups take no lock, so a removed Conn may still be read by a packet
// that found it just before; it is reused only after a grace period,
// as Open vSwitch's ovsrcu_postpone. A removal (an expired or flushed
// tuple: the Conn; a zone flush: the zone's connections in commit order
// and its bucket array, one O(1) entry) is unlinked first and then put
// in a limbo stamped with a new epoch. An entry ends its grace period
// when
//
//   - every registered Reader has called Quiesce since (publishing an
//     epoch at least the entry's), or is Offline or closed, and
//   - every call without a Reader (Tracker.ExecuteAt, Sweep, FlushTuple)
//     that may have started before it has returned: such calls count
//     themselves in one of two phases; a grace period flips the phase
//     and waits, without blocking, for the old phase to drain.
//
// Then the entry moves to a pool, from which commits take connections
// (a flushed zone's in their commit order, so that a refilled zone gets
// its old memory layout back) and zone creations take bucket arrays and
// the emptied arrays of consumed runs (for zone.all). A pooled Conn is
// reset to its zero value by the committer under the zone lock before
// anything is written into it, and published only by the chain insert,
// so a reader never sees a half-reused connection. The limbo and the
// pool each hold at most 2^17 connections (24 MiB), plus 8 bucket arrays
// and 8 list arrays; beyond that the oldest retirements are dropped to
// the collector (a pooled connection's stale chain links may keep a few
// dropped ones alive until it is reused). A caller that never quiesces
// only stops reuse, never correctness. No Conn pointer leaves the
// package; Dump walks only live zones, under their lock. A flushed zone
// whose memory the host has paged out (reading 4 of its connections
// takes over 16 µs) is left to the collector instead: on the VM this was
// measured on, memory untouched for a second or more costs 20-80 µs
// per 4 KiB page to touch again, more than a fresh page's fault.
// Config.NoReuse turns reuse off.
//
// A datapath worker creates one Reader (NewReader), runs ct() through
// Reader.ExecuteAt (no shared write), calls Quiesce between batches,
// when it holds nothing from conntrack, Offline before it blocks, and
// Close when it exits. Tracker.ExecuteAt stays safe without a Reader at
// the cost of two atomic adds per call on a line shared by its stripe.
//
// # Thread-safety
//
// Execute may run on every worker at once. Lookups take no lock (except
// while their zone's table doubles or halves): zone pointers are atomic,
// a zone's bucket array is published atomically and chain links are
// atomic pointers. Commits, removals, resizes, dumps and expiry of one
// zone take that zone's mutex; different zones never contend. The
// shared writes on the packet path are the global connection counter,
// the reuse lock when a connection is removed or a commit refills its
// zone's spares (once per 32 reused connections) and, for calls without
// a Reader, the stripe counter.
// Connection state (TCP windows) is updated under the connection's own
// mutex, UDP and ICMP state with one compare-and-swap; ct_mark and
// ct_label are read atomically.
//
// # Fragments, helpers, limits
//
// A Reassembler (separate from the Tracker, called by the datapath
// before ct) reassembles IPv4 and IPv6 fragments with bounded memory and
// a timeout; fragments that reach Execute unreassembled are +inv. The
// TFTP helper and the FTP helper (PORT, EPRT, 227, 229; no payload NAT)
// create expectations that make the data connection +rel. Zone limits
// and the global limit refuse commits (counted); the packet stays +new
// without a connection, as in Open vSwitch.
//
// ExportState and ImportState (state.go) carry the table across a
// restart of the daemon: every connection of every zone with both keys,
// NAT, mark, label, TCP window state, helper and the time it has left,
// and the pending helper expectations. The encoding is versioned
// (StateVersion) and checked as a whole before anything is added; the
// importing tracker's limits and timeout policies apply. The daemon
// frames it in an internal/statefile section.
//
// # Who owns what
//
// Tracker (conntrack.go) is the zone array and the packet path: lookup,
// state update, commit, removal, and the public face of the rest.
// zone (table.go) owns one zone's table, its connection list and its
// helper expectations (helper.go: the helpers themselves are functions
// from a packet to the expectation it announces). zoneConfig
// (zonecfg.go) owns the zone limits and timeout policies and pushes
// changes into the zones. natChooser (nat.go) owns the choice of NAT
// tuples. reuse (reuse.go) owns memory reuse: every connection, bucket
// array and list array is allocated and retired through it, and Reader
// is its per-goroutine handle. Dump and the dpctl texts (dump.go:
// FormatDump, FormatStats, FormatLimits) read what the Tracker reports;
// ExportState and ImportState (state.go) carry it across restarts.
//
// Lock acquisition order (a goroutine holding a lock may take only locks
// further down):
//
//  1. Tracker.sweepMu (the sweeper's cursor)
//  2. zoneConfig.mu (limits and timeout policies; on the packet path only
//     when a zone is created)
//  3. zone.mu (one zone at a time; never two zones)
//  4. Conn.mu (one connection at a time)
//  5. reuse.mu (the limbo and pool; taken under zone.mu by commits and
//     removals, never held while taking another lock) and
//     reuse.readersMu (the Reader registry, taken alone)
//
// Conn.mu is never held while taking zone.mu.
package conntrack
