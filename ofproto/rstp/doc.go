// Package rstp is the Rapid Spanning Tree Protocol (IEEE 802.1D-2004
// clause 17, 802.1w) as Open vSwitch 3.1's lib/rstp.c runs it on a
// bridge with Bridge.rstp_enable.
//
// It owns:
//   - the BPDU codec: RST BPDUs (version 2), and the configuration and
//     TCN BPDUs of 802.1D-1998 bridges it falls back to (Decode, Encode);
//   - the state machines of clause 17, run to a fixed point after every
//     event: port timers (one tick a second, Tick), receive, protocol
//     migration, bridge detection (edge ports), transmit, port
//     information, role selection, role transitions (proposal and
//     agreement), port state transitions (Discarding, Learning,
//     Forwarding) and topology change;
//   - the texts: rstp/show (Bridge.Show), the state and role names and
//     the status keys, in Open vSwitch's words.
//
// The package does no I/O: frames to send go to the Bridge's Send function
// after its lock is released, received BPDUs come in through
// Port.Received. It imports only the standard library and the BPDU wire
// layout it shares with the other spanning tree (ofproto/internal/bpdu):
// no datapath, OpenFlow or database package.
package rstp
