// Package packet owns the datapath's packet buffer and batch types: a
// reusable byte buffer with headroom for pushed headers, the L2/L3/L4
// offsets found by flow extraction, the per-packet metadata that travels
// with a packet through recirculation (in_port, recirc_id, dp_hash,
// pkt_mark, conntrack state, tunnel key), batches of up to BatchSize
// packets, and a per-owner free list so the fast path never allocates.
//
// It also holds Internet checksum helpers (full and incremental, RFC 1624)
// used by the datapath's set actions.
//
// It must not import any other gvs package.
package packet
