// Package tnl owns native tunnelling in the userspace datapath: the outer
// headers of UDP tunnels (Geneve and VXLAN) and of GRE (Ethernet over GRE,
// Open vSwitch's gre and ip6gre ports), over IPv4 and IPv6, as Open
// vSwitch 3.1's dpif-netdev builds, pushes, pops and prints them for the
// tnl_push and tnl_pop datapath actions. Types (types.go) is the table of
// every tunnel type Open vSwitch has (its datapath port name, UDP port,
// options and layers), natively supported here or not.
//
// # Overview
//
// Build turns Params (the tunnel's addresses, ports, VNI and options) into
// a Header: the prebuilt outer header bytes of tnl_push, with the IPv4 total
// length 0 and its checksum computed for that, the UDP source port and
// length 0, and a UDP checksum field of 0xffff when a checksum is wanted
// (always for IPv6), as Open vSwitch's template; a GRE header has the
// Transparent Ethernet Bridging protocol and, by its C, K and S flags, a
// zero checksum word, the key and a zero sequence number. Push prepends a
// Header to a packet and fills the lengths, checksums and the UDP source
// port (from the packet's RSS hash, or Open vSwitch's 5-tuple hash of the
// inner packet when it has none); PushSeq also writes a GRE sequence
// number, which the datapath counts per tunnel port. Pop validates and
// strips the outer headers of a received frame and fills the packet's
// tunnel metadata. AppendHeaderText and ParseHeader are the header(...)
// text of tnl_push.
//
// # Tunnel metadata after Pop
//
// The tunnel key follows Open vSwitch's netdev_*_pop_header: tun_id is the
// VNI, the key flag is always set, csum only when the UDP checksum is
// non-zero (and valid), oam from the Geneve O bit; df is never set (Open
// vSwitch does not set it on receive); the rest of the metadata is zeroed,
// as pkt_metadata_init_tnl does. For GRE, tun_id is the key and the key
// flag is set only when the K flag is, csum only for a (valid) GRE
// checksum; tp_src and tp_dst are 0. Geneve options are kept raw, in the
// FLOW_TNL_F_UDPIF convention of datapath/flow: Tunnel.Flags has
// flow.TunFlagUDPIF, Tunnel.Meta holds the option TLVs as on the wire and
// Tunnel.MetaPresent their length in bytes (0 for none); Meta beyond that
// length is zero. Options longer than packet.TunMetaBytes are refused.
//
// # Invariants
//
// Push and Pop never allocate and never panic on any input; Pop leaves a
// packet it refuses unchanged. A Header is immutable once built and may be
// shared by every worker.
//
// It imports only datapath/packet, datapath/flow and the standard library.
package tnl
