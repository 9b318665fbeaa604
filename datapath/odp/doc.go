// Package odp owns the datapath action set (Open vSwitch's "ODP" actions):
// its pre-decoded representation, its text format, and the executor that
// runs an action list over a batch of packets.
//
// # Representation
//
// Actions is a slice of Action values built once per megaflow, by
// ParseActions or by the translator, and never modified afterwards, so
// every worker can run it concurrently. Nested lists (clone, sample,
// check_pkt_len) are Actions fields. Set and masked set actions carry a
// SetField: a value and mask image laid out like the header they write,
// so applying one is a masked merge plus an incremental checksum update
// (RFC 1624 for IPv4, TCP, UDP, ICMP and ICMPv6 including pseudo-header
// changes; SCTP's CRC32c is recomputed, keeping a wrong checksum wrong).
//
// ct and the MAC learn-and-forward action run in their own modules through
// the Datapath hooks. tnl_push carries a prebuilt outer header
// (TunnelPushParams, datapath/tnl) that the datapath pushes in place;
// tnl_pop hands the packets to the datapath, which decapsulates and
// recirculates them.
//
// # Text
//
// Actions.String prints what `ovs-appctl dpctl/dump-flows` prints after
// "actions:" (checked against Open vSwitch 3.1 output in the tests);
// ParseActions reads it back and reports the offending token on error.
//
// # Execution
//
// Execute(ctx, batch, actions) follows odp-execute.c and dpif-netdev:
// a non-final output (or recirc, tnl_pop, mac_learn) gets copies from the
// worker's Pool so later actions see the originals; the final one steals
// the batch; packets left at the end are returned to the Pool; clone,
// sample and check_pkt_len run their nested lists on copies unless they
// are the final action; trunc applies to the next output only; sample
// draws from a per-Context PRNG. Effects outside the packet go through
// the Datapath callback interface. Execute allocates nothing when the
// Pool is not empty.
//
// Text differences from Open vSwitch 3.1, on purpose: recirc(0x1) parses
// (OVS prints it but reads only decimal); set(tunnel(...)) members print
// in one canonical order (OVS echoes parsed text in input order, and
// prints xlate's in this order); userspace without userdata prints none
// (OVS invents a zero cookie).
//
// MPLS: push_mpls inserts a label stack entry after the Ethernet and VLAN
// headers (in front of an existing stack) and rewrites the Ethertype
// before it; pop_mpls removes the outermost entry and writes its
// Ethertype; set(mpls(...)) rewrites the outermost entry (a masked set
// ORs its value in, as OVS). Packet.L2_5 follows the stack and the L3/L4
// offsets move with it, so later set actions still find their headers.
// push_mpls and pop_mpls parse back from what String prints, which OVS
// 3.1 prints but cannot parse.
//
// Not implemented yet: push_eth/pop_eth, add_mpls, NSH, dec_ttl,
// lb_output, set(tunnel) Geneve options and GBP, decoding of ofproto's
// 24-byte userspace cookies (printed as hex userdata).
//
// It imports only datapath/packet and datapath/tnl (and datapath/flow in
// tests).
package odp
