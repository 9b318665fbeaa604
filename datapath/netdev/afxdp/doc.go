// Package afxdp is the "afxdp" port device: AF_XDP sockets bound to the
// rx queues of an existing Linux interface (a veth, a NIC), as Open
// vSwitch's netdev-afxdp in the userspace datapath.
//
// # Kernel objects
//
// Opening a port creates, per rx queue, an AF_XDP socket with its own
// UMEM (a page-aligned anonymous mapping cut into 4 KiB frames) and its
// four rings (fill, completion, rx, tx) mapped from the kernel, bound to
// that queue of the interface. One XSKMAP holds the sockets by queue
// index, and a five-instruction XDP program, attached to the interface,
// redirects each frame to the socket of the queue it arrived on (frames
// of a queue without a socket go on to the kernel's stack). The program
// is attached through a BPF link, so the kernel detaches it when the link
// descriptor closes: on Close, on port removal, and when the process
// exits or dies, whatever the way; no program is ever left attached.
//
// The program is assembled by hand and loaded with the bpf(2) system call
// (map create, program load, link create, map update) through
// golang.org/x/sys/unix, not with github.com/cilium/ebpf: it is five
// fixed instructions with one map reference, which needs no ELF loader,
// BTF or verifier-log handling, and the package keeps its one
// third-party import (x/sys) that the rest of the datapath already has.
//
// # Modes
//
// Mode is Open vSwitch's options:xdp-mode: native-with-zerocopy (driver
// XDP, the socket bound with XDP_ZEROCOPY), native (driver XDP, XDP_COPY),
// generic (skb XDP, XDP_COPY), and best-effort, which tries those three
// in that order on queue 0 and keeps the first that works for every
// queue (a veth has driver XDP but no zero-copy, so it gets native).
// NeedWakeup binds with XDP_USE_NEED_WAKEUP: the kernel is then woken
// (sendto for tx, recvfrom for the fill ring) only when it asks.
//
// # Receive and transmit
//
// Each socket's frames are split in two fixed sets. Rx frames circulate
// between the fill ring and the rx ring: Recv copies each received frame
// into a pool packet and gives its frame straight back on the fill ring,
// so the kernel never runs short while packets are in the datapath. Tx
// frames are taken from a free list, filled with a copy of the packet and
// posted on the tx ring; the completion ring returns them to the list.
// Neither path makes a system call per packet, and neither allocates.
// The socket polls readable while its rx ring has frames (for
// netdev.Poller). Each queue transmits through a second socket bound to
// the same queue that shares the UMEM and its fill and completion rings
// (XDP_SHARED_UMEM) and has only a tx ring, so that the kernel's
// per-frame wake-ups on transmit completion find no waiter (the first
// socket is in the worker's epoll set); Send serialises per queue. The interface is put in promiscuous mode (through a packet
// socket membership, released with the port) for as long as the port is
// open.
//
// # Handing a port to another process
//
// Handoff gives a restart without loss (netdev.HandingOff) every
// descriptor: per queue the two sockets and the UMEM, which is a
// memfd's pages so that the successor maps the same frames, then the
// XSKMAP, the program, the BPF link and the promiscuous-mode socket. The
// program stays attached throughout, since the link is handed, not
// closed. Handoff first waits for the kernel to complete every frame
// sent; the rings then hold every position, and Adopt, after checking
// each object (socket families, UMEM size, that the link is an XDP link
// on this interface running the handed program, that the map is an
// XSKMAP of a slot per queue, that the ring indices are in range), goes
// on from them: frames that arrived in between are on the rx rings.
//
// It imports datapath/netdev, datapath/packet and golang.org/x/sys.
package afxdp
