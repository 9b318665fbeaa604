// Package ofprint is Open vSwitch's ofp-print: it prints OpenFlow messages
// exactly as ovs-ofctl 3.1 prints them (ofp_to_string), at its verbosity
// levels, from the bytes on the wire. gvs-ofctl (cmd/ofctl) prints with it
// (ofp-print, monitor, snoop, the replies of its online commands) and so
// does the daemon's vconn debug log (cmd/vswitchd), so a message reads the
// same everywhere.
//
// # Overview
//
// [MessageV] decodes one message with ofproto/ofp and prints it with the
// printer registered for its body type (one table, keyed by the decoded
// type; the files hold its families: flow mods, packets and port status,
// statistics, sessions and roles, flow monitors, table features, groups,
// meters and TLV tables). A type no printer knows fails with "not printed
// yet"; [Any] and [FormatMessage] then print its name and a hex dump, as
// the monitor and the log do. Packets are dissected into flows with
// datapath/flow, as ovs-ofctl's flow_extract, with their transport
// checksum at verbosity 2.
//
// The reply printers the online commands share ([PortDescReply],
// [TableStatsReply], [GroupStats], [FlowStatsEntriesTo], ...) and
// [TableFeaturesList] (dump-table-features folds equal tables across reply
// parts) are exported for gvs-ofctl.
//
// Nothing here panics on bytes from the network: decode errors are
// printed as ovs-ofctl prints them.
//
// # Imports
//
// The standard library, ofproto/ofp, ofproto/mf, ofproto/ofptext and
// datapath/flow and datapath/packet (only to dissect packets). It must not
// import the switch (ofproto/ofswitch, xlate, classifier), the datapath
// implementation (datapath/dpnetdev), ovsdb, unixctl or anything under
// cmd/ (tests/deps_test.go).
package ofprint
