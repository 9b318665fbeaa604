// Package flow owns the datapath flow key: a fixed-layout, pointer-free
// struct (Key) that is also viewed as an array of uint64 words for masked
// hashing and comparison; masks (Mask, the same layout) and matches; flow
// extraction from packet bytes (Extract); and the datapath flow text format
// that `ovs-appctl dpctl/dump-flows` prints (Format/Parse).
//
// Layout. Fields are grouped in segments, in this order: metadata (recirc,
// in_port, marks, conntrack), tunnel, L2, L3, L4. The segment boundaries
// (SegMetaEnd, SegTunnelEnd, SegL2End, SegL3End) are word indices so a
// classifier can stage lookups. Multi-byte integer fields are in host
// order; MAC and IPv6 addresses are byte arrays in network order. The key
// never holds a pointer, so it can be a map key and compared with ==.
//
// Extraction follows Open vSwitch's flow_extract: a truncated or malformed
// packet yields the longest valid prefix of the key, never a panic and
// never a read past the buffer.
//
// It imports only datapath/packet.
package flow
