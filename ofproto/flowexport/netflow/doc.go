// Package netflow owns the NetFlow v5 exporter of a bridge, as Open
// vSwitch's ofproto/netflow.c sends it: per-flow accounting keyed by
// (in_port, nw_src, nw_dst, nw_proto, nw_tos, tp_src, tp_dst), active
// timeouts, and the 24-byte header plus up to 30 48-byte records per UDP
// message.
//
// # Overview
//
// The revalidator pushes the statistics of each datapath flow with
// Account; Expire exports a flow whose datapath flow was deleted; Run,
// about once a second, sends queued records and exports flows past the
// active timeout. Records are sent only for flows with packets. As in
// Open vSwitch:
//   - sysUptime and the first/last times are milliseconds since New;
//   - flow_sequence is advanced per record and the header holds the
//     number of the message's last record (counted from 0);
//   - counters over 32 bits are split over several records with even
//     bytes per packet; an output-port change exports the flow first;
//   - ip_tos carries only the DSCP bits, ICMP type and code go in dst_port.
//
// # Thread-safety
//
// All methods may be called from any goroutine; one mutex guards the
// state. Account does not allocate for a known flow.
//
// It imports only the standard library: no ofproto or datapath package.
package netflow
