// Package appctl is gvs-appctl's command line ([Run]): Open vSwitch's
// ovs-appctl options (-t/--target, -T/--timeout, -f/--format, --help,
// --version), one request sent through a unixctl client, and the reply
// printed with ovs-appctl's texts and exit statuses.
//
// The protocol, the client and the pidfile lookup belong to the unixctl
// package; this package holds only the command-line handling.
//
// # Imports
//
// The standard library, cobra, internal/version and unixctl. No other
// package under cmd/ (tests/deps_test.go).
package appctl
