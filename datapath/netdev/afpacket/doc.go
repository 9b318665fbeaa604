// Package afpacket is the "system" port device: an AF_PACKET socket bound
// to an existing Linux interface (a veth, a NIC), as Open vSwitch's
// netdev-linux in the userspace datapath.
//
// # Receive
//
// Each rx queue is a socket with a TPACKET_V3 ring shared with the kernel
// (mmap). The kernel fills fixed-size blocks with variable-size frames and
// hands a block to user space when it is full or its retire timeout
// expires; Recv walks the block, copies each frame into a pool packet and
// gives the block back once every frame is consumed. There is no syscall
// per packet, and none per Recv while a block has frames. The socket is
// readable (for netdev.Poller) when a block is ready. Frames this host
// sends on the interface (PACKET_OUTGOING) are ignored. When the kernel
// has taken a VLAN tag out of the frame (rx VLAN offload, reported in
// tp_vlan_tci with TP_STATUS_VLAN_VALID) Recv puts it back, so the
// datapath sees the frame as it was on the wire. With more than one rx
// queue the sockets form a PACKET_FANOUT_HASH group. The interface is put
// in promiscuous mode for as long as the port is open.
//
// At low rates a frame waits for its block's retire timeout
// (Config.BlockTimeout, 1 ms by default) before Recv sees it; at high
// rates blocks fill first. While nobody reads (a paused datapath during
// a handover) the ring holds frames for NumBlocks retire timeouts at low
// rates (128 ms by default), its 4 MiB at high rates.
//
// Frames the kernel left with a partial checksum (TP_STATUS_CSUMNOTREADY:
// sent by a local stack with checksum offload) have their TCP or UDP
// checksum completed on receive, since the port they are forwarded to
// will not do it.
//
// # Transmit
//
// Each tx queue is a socket bound with protocol 0 (it receives nothing)
// and PACKET_QDISC_BYPASS, which hands frames straight to the driver.
// Send passes a whole batch to one sendmmsg(2) call; frames the kernel
// refuses (too big, link down) are counted as tx drops. A TPACKET_V2 tx
// ring was measured against sendmmsg on a veth (64-byte frames, batches
// of 32, BenchmarkAFPacketVethTx) and was not faster (1.4-1.7 against
// 1.7-2.0 Mpps on a 2-core VM): the kernel still builds one skb per frame
// and the ring adds a copy and status handshakes, so sendmmsg stays.
//
// The interface's MAC, MTU, ifindex and carrier are read from the kernel
// by name; renaming the interface under an open port is not followed.
//
// It imports datapath/netdev, datapath/packet and golang.org/x/sys.
package afpacket
