// Package lacp is the Link Aggregation Control Protocol (IEEE 802.1AX,
// formerly 802.3ad) as Open vSwitch 3.1 runs it on a bonded port: one
// LACP object per bond, one member per bonded interface.
//
// It owns:
//   - the LACPDU codec (PDU, Decode, Encode) and the frame a member sends
//     (to the Slow Protocols group address 01:80:c2:00:00:02, ethertype
//     0x8809);
//   - the protocol: each member's partner information and its status
//     (current, expired, defaulted) with the receive timer (three transmit
//     intervals), periodic and need-to-transmit sends, the choice of the
//     lead member and which members are attached to the aggregator, the
//     lacp-fallback-ab rule, and may_enable, the answer the bond asks
//     before it sends on a member;
//   - the settings read from the Port and Interface rows (lacp,
//     other_config:lacp-*), with Open vSwitch's defaults and warnings;
//   - the texts of lacp/show and lacp/show-stats, in Open vSwitch's words.
//
// Time comes from a Clock in milliseconds, so tests (and time/warp) drive
// it without sleeping. The package does no I/O: the switch hands received
// Slow Protocols payloads to Process, calls Run at WakeTime with a
// function that sends a PDU on a member, and reports carrier changes.
// It imports only the standard library: nothing of the datapath, of
// OpenFlow translation or of OVSDB.
package lacp
