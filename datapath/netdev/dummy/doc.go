// Package dummy is the in-memory port device, the equivalent of Open
// vSwitch's netdev-dummy: frames are injected with Inject (what
// `ovs-appctl netdev-dummy/receive` does) and received by the datapath on
// the next Recv; transmitted frames go to an optional callback, a bounded
// capture queue and optional pcap files (options pcap, rxq_pcap and
// tx_pcap). A pcap file can also be replayed as received traffic.
// Streams (options pstream and stream, stream.go) join dummy ports of
// different switches over unix or TCP sockets with netdev-dummy's
// framing, which is how OVN's sandbox tests wire their hypervisors.
//
// Recv and Send never allocate in steady state (a port with streams
// copies each transmitted frame for them); each rx queue is a
// bounded ring of reusable buffers and counts drops when full.
//
// It imports datapath/netdev, datapath/netdev/pcap, datapath/packet and
// golang.org/x/sys.
package dummy
