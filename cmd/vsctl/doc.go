// Package vsctl is gvs-vsctl: a counterpart of Open vSwitch's ovs-vsctl
// that talks to an OVSDB server (gvs's embedded one or ovsdb-server)
// through ovsdb/client, so that a host without Open vSwitch's tools can
// configure gvs.
//
// # Overview
//
// [Run] parses global options, then one or more commands separated by
// "--", each with its own options (--may-exist, --if-exists, --id=@name,
// --columns=...). Commands are rows of one table (name, argument counts,
// options, read-only or read-write, handler), like ovs-vsctl's
// vsctl_commands[]. All commands run against one working copy of the
// database, so later commands see what earlier ones did; the changes are
// then committed as one transaction and the commands' outputs printed in
// order. Syntax, output, error messages and exit codes follow ovs-vsctl
// 3.1 for what is supported; the program name in messages is gvs-vsctl.
//
// Unless --no-wait is given, a transaction that changes something also
// increments Open_vSwitch.next_cfg, and Run waits until cur_cfg catches
// up (bounded by --timeout), as ovs-vsctl waits for ovs-vswitchd.
//
// # Invariants
//
//   - Nothing is written unless every command succeeded.
//   - Output is printed only after the transaction committed.
//
// # Imports
//
// ovsdb/client, ovsdb/model, ovsdb/vswitch and the standard library. It
// must not import ovsdb/server, ofproto, datapath, unixctl or another
// package under cmd/ (tests/deps_test.go). Its end-to-end test against
// gvs-vswitchd is tests/vsctl_wait_test.go.
package vsctl
