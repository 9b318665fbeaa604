// Package tnlneigh is the tunnel neighbour cache: IP to MAC bindings per
// bridge used to build the outer Ethernet header of natively tunnelled
// packets, as Open vSwitch's tnl-neigh-cache does.
//
// # Overview
//
// Entries are learned by Snoop from ARP replies, gratuitous ARPs and IPv6
// Neighbor Advertisements seen by translation, or set with tnl/neigh/set.
// Every entry ages out after the idle time (tnl/neigh/aging, default 900 s,
// at most 3600 s); a successful Lookup restarts its timer. Expired entries
// are dropped lazily, on Lookup misses, Expire and tnl/neigh/show.
//
// While the MAC of a tunnel next hop is unknown the caller sends ARP
// requests or Neighbor Solicitations built by ARPRequest and
// NeighborSolicit, byte for byte as Open vSwitch composes them.
// ShouldSendRequest marks the address INCOMPLETE and allows one request per
// retransmit interval (tnl/neigh/retrans_time, default 1000 ms). That rate
// limit and its command are gvs additions: Open vSwitch 3.1 sends a request
// on every miss and has no INCOMPLETE state; INCOMPLETE addresses are not
// listed by tnl/neigh/show, whose output stays Open vSwitch's.
//
// # Thread-safety
//
// Lookup takes no lock (the entry map is copy-on-write behind an atomic
// pointer), refreshes the entry's expiry atomically and does not allocate;
// it may run on many upcall handlers at once. Everything else serialises on
// Cache.mu. Time comes from Cache.Now so tests control it.
//
// # Imports
//
// The standard library, datapath/flow (for FieldsFromKey) and
// ofproto/internal/ovscmd (the Command type and Open vSwitch-compatible
// scanners it shares with ofproto/router) only. It must not import cmd/*,
// ovsdb/* or other ofproto packages.
package tnlneigh
