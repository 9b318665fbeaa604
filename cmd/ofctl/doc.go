// Package ofctl is gvs-ofctl: a counterpart of Open vSwitch's ovs-ofctl.
//
// # Overview
//
// [Run] parses global options (-O/--protocols, --strict, --no-stats,
// --sort/--rsort, --bundle, --names/--no-names, --timeout, --help,
// --version; anywhere on the command line, as getopt_long allows), then
// runs one command from a table (name, usage, argument counts, handler),
// like ovs-ofctl's all_commands[]. The offline commands parse-flow,
// parse-flows, ofp-print and ofp-parse print exactly what ovs-ofctl 3.1
// prints for the flows and message types gvs supports; the program name
// in messages is gvs-ofctl.
//
// The online commands (show, dump-desc, dump-tables, dump-table-features,
// dump-ports, dump-ports-desc, dump-flows, dump-aggregate, add-flow, add-flows,
// mod-flows, del-flows, replace-flows, diff-flows) talk to a switch over
// "unix:PATH", "tcp:IP[:PORT]", a socket file or a bridge name
// ($OVS_RUNDIR/NAME.mgmt) with one synchronous connection per step, as
// ovs-ofctl does: the same hello negotiation, the same choice of flow
// protocol on OpenFlow 1.0 (NXT_SET_FLOW_FORMAT for NXM-only matches and
// for every dump, NXT_FLOW_MOD_TABLE_ID for table ids, each followed by a
// barrier), and the same transaction ids, which dumps print (the
// connections ovs-ofctl opens to look up port and table names are made
// too, so errors and ids agree).
//
// monitor and snoop print every message a connection receives (to
// stderr, at ovs-ofctl's verbosity 2: packets are dissected into flows
// with their transport checksum), monitor after setting miss_send_len,
// invalid_ttl and the NXT_PACKET_IN2 format as ovs-ofctl does, snoop on
// $OVS_RUNDIR/NAME.snoop. monitor's watch:[SPEC] arguments send one flow
// monitor each (NXST_FLOW_MONITOR before OpenFlow 1.3, ONFST in 1.3,
// OFPMP_FLOW_MONITOR after) and print the initial reply to stdout; both
// commands serve ofctl/barrier, ofctl/send, ofctl/block, ofctl/unblock
// and exit on $OVS_RUNDIR/gvs-ofctl.PID.ctl, as ovs-ofctl's unixctl
// server. add-flows and replace-flows draw a progress
// line on stderr when it is a terminal, and never otherwise.
//
// Groups and meters: del-groups (with --bundle), dump-group-stats,
// dump-group-features, del-meter(s), meter-stats and meter-features, and
// packet-out (both ovs-ofctl 3.1 syntaxes). Their GROUP and METER
// arguments take only the group_id= and meter= keywords: the group,
// meter and TLV-map text syntax (add-group, dump-groups, add-meter,
// dump-meters, TLV maps) is missing from ofptext, so those commands are
// absent. Like ovs-ofctl's dump_transaction, these dumps print an
// OFPT_ERROR reply to stdout and exit 0.
//
// dump-table-features and ofp-print of table features messages reduce
// each table to sets (instructions, actions, fields) and print runs of
// equal tables as ovs-ofctl does ("tables 1...252: ditto", "(same
// actions)"); OpenFlow 1.1 and 1.2 dump-tables print the features their
// table stats carry the same way. -O accepts OpenFlow10 through
// OpenFlow15, but OpenFlow 1.1 flow mods and flow stats requests are
// refused: ofp has no encoding of OpenFlow 1.1's standard match.
//
// # Imports
//
// ofproto/ofp, ofproto/mf, ofproto/ofptext, datapath/flow and
// datapath/packet (only to dissect packets, as ovs-ofctl's flow_extract),
// golang.org/x/sys/unix (terminal detection) and the standard library. It
// must not import the switch (ofproto/ofswitch, xlate, classifier) or the
// datapath implementation.
package ofctl
