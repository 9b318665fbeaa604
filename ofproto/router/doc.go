// Package router is the tunnel routing table: for a tunnel's remote IP it
// finds the output device (bridge), gateway and source IP, as Open vSwitch's
// ovs-router does for native tunnelling.
//
// # Overview
//
// A Table holds three kinds of route, printed by ovs/route/show as
// "Cached:" (learned from the kernel), "Cached: ... local" (kernel local
// table) and "User:" (added with ovs/route/add). Every route carries a source
// address chosen, when it is inserted, from the output device's addresses
// (AddrsFunc): the longest address prefix covering the destination, else the
// gateway. A route whose device has no such address is refused, which is why
// ovs/route/add answers "Error while inserting route.".
//
// Priorities follow Open vSwitch so that lookups and ovs/route/show agree
// with it: prefix lengths are counted in a 128-bit space (IPv4 adds 96);
// kernel routes rank plen, kernel local routes plen+64 and user routes
// plen+32. Routes with equal prefix length form one group ("subtable");
// groups are listed by their highest priority, routes inside a group in
// insertion order. A lookup matches the packet mark exactly. LookupFrom is
// the form used for tunnels with a configured local_ip: that source must be
// one of the host's own (local) routes.
//
// Kernel routes come from rtnetlink (Kernel, Linux only): every IPv4 and IPv6
// unicast or local route of all tables of the current network namespace is
// dumped, and any route or link notification triggers a fresh dump that
// replaces all cached routes, as Open vSwitch 3.1 does (3.1 does not filter
// by table; the oracle shows a table-100 route as Cached too). Kernel.Addrs
// reads a Linux device's addresses with RTM_GETADDR and caches them until
// the next dump; dummy devices' addresses come from the caller's AddrsFunc.
//
// # Thread-safety
//
// Lookup reads an immutable snapshot through an atomic pointer and never
// blocks or allocates; it is safe to call from upcall handlers. Mutations
// serialise on Table.mu and publish a new snapshot.
//
// # Imports
//
// Only the standard library, golang.org/x/sys/unix and
// ofproto/internal/ovscmd (the Command type and Open vSwitch-compatible
// scanners it shares with ofproto/tnlneigh). It must not import cmd/*,
// ovsdb/* or other ofproto packages; commands are exposed as plain Command
// values that the daemon adapts into its unixctl registry.
package router
