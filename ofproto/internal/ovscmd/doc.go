// Package ovscmd holds what the unixctl-command packages of ofproto
// (ofproto/router, ofproto/tnlneigh) share: the Command type they export to
// the daemon, and the Open vSwitch-compatible scanners and formatters their
// commands need so that gvs accepts, refuses and prints exactly what
// Open vSwitch does (its ovs_scan integer conversions, inet_pton and
// ipv6_format_mapped). Package ovscmdtest holds the test-only oracle
// harness that replays command scripts against Open vSwitch and gvs.
//
// # Imports
//
// The standard library only. It must not import cmd/*, ovsdb/* or any other
// ofproto package: those import it.
package ovscmd
