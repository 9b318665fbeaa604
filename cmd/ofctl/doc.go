// Package ofctl is gvs-ofctl: a counterpart of Open vSwitch's ovs-ofctl.
//
// # Overview
//
// [Run] parses global options (-O/--protocols, --help, --version), then
// runs one command from a table (name, usage, argument counts, handler,
// online or offline), like ovs-ofctl's all_commands[]. The offline
// commands parse-flow, parse-flows, ofp-print and ofp-parse print exactly
// what ovs-ofctl 3.1 prints for the flows and message types gvs supports;
// the program name in messages is gvs-ofctl. Online commands are listed
// in the table but fail with "not implemented yet" until gvs-ofctl can
// talk to a switch.
//
// # Imports
//
// ofproto/ofp, ofproto/mf, ofproto/ofptext and the standard library. It
// must not import datapath or the ofproto root package.
package ofctl
