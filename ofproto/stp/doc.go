// Package stp is the 802.1D (1998) Spanning Tree Protocol as Open
// vSwitch 3.1's lib/stp.c runs it on a bridge: one Bridge per bridge with
// STP enabled (Bridge.stp_enable), up to 255 ports numbered from 0.
//
// It owns:
//   - the BPDU codec (configuration and topology change notification
//     BPDUs, Decode, and the 802.2 LLC frame the switch sends to
//     01:80:c2:00:00:00, Frame);
//   - the protocol: bridge and port timers in 1/256 s ticks driven by
//     Tick, root and designated port selection, the port state machine
//     (disabled, blocking, listening, learning, forwarding), topology
//     change detection, notification and acknowledgement, and the MAC
//     table flush it asks for (CheckAndResetFDBFlush);
//   - the texts: stp/show (Bridge.Show), the state and role names of the
//     Port status column, and the "stp" log module's lines, in Open
//     vSwitch's words.
//
// The package does no I/O: frames to send go to the Bridge's Send
// function, after the Bridge's lock is released (a BPDU sent into a patch
// port may come straight back into another Bridge); received BPDUs come in
// through Port.Received. It imports only the standard library and the BPDU
// wire layout it shares with the other spanning tree
// (ofproto/internal/bpdu): no datapath, OpenFlow or database package.
package stp
