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
// Groups and meters: add-group, add-groups (a command word per line: add,
// modify, delete, add_or_mod, insert_bucket, remove_bucket), mod-group
// (--may-create), del-groups, insert-buckets, remove-buckets, dump-groups,
// dump-group-stats and dump-group-features; add-meter, mod-meter,
// del-meter(s), dump-meters, meter-stats and meter-features; and
// packet-out (both ovs-ofctl 3.1 syntaxes). GROUP and METER arguments are
// in ovs-ofctl's group and meter syntax (ofptext.ParseGroupMod and
// ParseMeterMod), except dump-groups, whose argument is a bare group
// number as in ovs-ofctl (anything else dumps every group). Group mods go
// in the version the connection negotiated when the text allows it
// (selection methods and the bucket commands need OpenFlow 1.0's
// NXT_GROUP_MOD or 1.5; insert-buckets and remove-buckets in OpenFlow 1.1
// to 1.4 fail as in ovs-ofctl), each followed by a barrier, or in one
// bundle with --bundle; meters need OpenFlow 1.3 or later. Like
// ovs-ofctl's dump_transaction, the dumps print an OFPT_ERROR reply to
// stdout and exit 0.
//
// ofp-print prints, besides flow mods, packets, port status and flow
// removed messages: group and meter mods, group description and meter
// configuration requests and replies; table, port, queue, flow,
// aggregate and description statistics (with OpenFlow 1.4+ custom port
// counters), port and table descriptions, queue configuration; port and
// table mods; role requests, replies and status, request forwarding
// (the forwarded group or meter mod), asynchronous configuration, flow
// and packet-in formats, controller ids, conntrack flushes and bundled
// messages: every message of the capture corpora
// (ofproto/ofp/testdata) as ovs-ofctl 3.1 does. Other decoded types
// fail with "not printed yet". The printers are ofproto/ofprint's; the
// online commands print their replies with the same printers.
//
// TLV maps: add-tlv-map, del-tlv-map and dump-tlv-map take ovs-ofctl's
// {class=,type=,len=}->tun_metadataN syntax (ofptext.ParseTLVMaps),
// parsed before connecting; a mod is followed by a barrier (OpenFlow 1.0
// switches to NXM first, OpenFlow 1.1 is refused as by ovs-ofctl).
//
// dump-table-features and ofp-print of table features messages reduce
// each table to sets (instructions, actions, fields) and print runs of
// equal tables as ovs-ofctl does ("tables 1...252: ditto", "(same
// actions)"); OpenFlow 1.1 and 1.2 dump-tables print the features their
// table stats carry the same way. -O accepts OpenFlow10 through
// OpenFlow15; OpenFlow 1.1 flow mods and flow stats requests carry its
// standard match (ofp11_match), and a flow it cannot express exactly
// (ip_ecn, which ovs-ofctl sends anyway, dropping it) fails to encode.
//
// # Imports
//
// ofproto/ofp, ofproto/mf, ofproto/ofptext, ofproto/ofprint (every
// message is printed by ofp-print, which the daemon's vconn log shares),
// ofproto/ofconn (TLS settings), datapath/flow (VLAN bits of parse-flows),
// golang.org/x/sys/unix (terminal detection) and the standard library. It
// must not import the switch (ofproto/ofswitch, xlate, classifier), the
// datapath implementation, ovsdb or another package under cmd/
// (tests/deps_test.go).
package ofctl
