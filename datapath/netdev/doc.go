// Package netdev owns the datapath's port devices: the Device interface
// (batched, non-blocking Recv and Send of packet.Batch, an epoll-able rx
// descriptor per queue, MAC, MTU, ifindex, link state and counters), the
// per-queue Counters every implementation keeps, and Poller, which lets a
// worker goroutine sleep on the rx descriptors of its queues when idle.
//
// # Implementations
//
// Each lives in a sub-package so a datapath links only what it opens:
//
//   - netdev/dummy: in-memory ports with frame injection, transmit capture
//     and pcap files (Open vSwitch's netdev-dummy; the test surface).
//   - netdev/afpacket: "system" ports, an AF_PACKET socket bound to an
//     existing Linux interface with a TPACKET_V3 rx ring (Linux only).
//   - netdev/afxdp: "afxdp" ports, AF_XDP sockets on the queues of an
//     existing Linux interface fed by an XDP redirect program (Linux only).
//   - netdev/tap: "internal" ports, a tap device created for the bridge or
//     port (Linux only).
//   - netdev/pcap: the pcap file format the dummy reads and writes.
//
// # Handing a port to another process
//
// A restart without loss hands every port's kernel objects to the next
// process instead of closing them: HandingOff.Handoff gives the
// descriptors (AF_PACKET sockets with their mapped rings, the tap
// descriptor, AF_XDP sockets with their UMEM and XDP objects) and the position reached in each ring, versioned; the
// sub-package's Adopt checks every descriptor and number before it uses
// any, and goes on from that position, so frames that arrived in between
// are delivered once and in order. The counters carry over.
//
// # Concurrency
//
// Recv on a given rx queue must be called by one goroutine at a time (the
// worker that owns the queue). Send may be called concurrently from many
// workers; devices serialise per tx queue. Stats, MAC, MTU and LinkState
// are safe from any goroutine. Neither Recv nor Send allocates in steady
// state.
//
// It imports only datapath/packet and golang.org/x/sys.
package netdev
