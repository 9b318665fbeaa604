// Package sflow owns the sFlow version 5 agent of a bridge, as Open
// vSwitch's ofproto/ofproto-dpif-sflow.c and lib/sflow_*.c send it: the
// datagram header, compact flow samples with extended-switch and raw
// packet header records, and per-port counter samples.
//
// # Overview
//
// Sample writes a flow sample into the pending datagram; Run, about once
// a second, adds the counter samples of ports whose polling interval has
// passed and sends the datagram. A datagram is also sent when the next
// sample would bring it to 1400 bytes. As in Open vSwitch:
//   - the datagram sequence counts datagrams from 1, flow samples have
//     their own sequence, and each port's counter samples theirs;
//   - the uptime is whole seconds since New, in milliseconds;
//   - flow samples come from one sampler, data source 2:(1000+SubID), and
//     carry the sampling rate and a sample pool grown by the rate;
//   - frame_length counts the 4-byte FCS the datapath stripped;
//   - counter samples hold Ethernet, OpenFlow port, port name and generic
//     interface records, with all received packets counted as unicast.
//
// The global counters (datapath and application resources) and the LACP,
// MPLS and tunnel records are not sent.
//
// # Thread-safety
//
// All methods may be called from any goroutine; one mutex guards the
// state. The counters callback is called without the lock held.
//
// It imports only the standard library: no ofproto or datapath package.
package sflow
