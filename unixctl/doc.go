// Package unixctl is gvs's unixctl layer: the control-socket server that
// gvs-vswitchd runs so that Open vSwitch's unmodified ovs-appctl works
// against it, the command registry the rest of the daemon fills, the
// client (which gvs-appctl, cmd/appctl, drives) and the locked pidfile
// through which ovs-appctl -t finds a daemon.
//
// # Protocol
//
// A unix stream socket, conventionally <rundir>/<program>.<pid>.ctl,
// carries JSON-RPC 1.0 messages back to back (framing by ovsdb/jsonrpc).
// A request {"id":N,"method":CMD,"params":[strings]} gets either
// {"id":N,"result":TEXT,"error":null} or {"id":N,"error":TEXT}, exactly
// as Open vSwitch 3.x writes them. Non-empty texts end in a newline. The
// command name, then the argument counts, then the argument types are
// checked before a handler runs, with Open vSwitch's error texts.
// Anything that is not a request closes the connection.
//
// Since Open vSwitch 3.4, a client may send "set-options --format json"
// first; the connection then replies with JSON values: a [Command] with
// RunJSON returns its own value and plain-text commands are wrapped as
// {"reply-format":"plain","reply":TEXT}.
//
// One deliberate difference: a request named "echo" that no command
// claims is answered with its params, as JSON-RPC sessions answer
// keepalives (ovs-vswitchd 3.1 replies that echo is not a valid command).
//
// # Finding a daemon
//
// ovs-appctl -t NAME reads <rundir>/NAME.pid and connects to
// <rundir>/NAME.<pid>.ctl, but only if a live process holds a POSIX lock
// on the pidfile whose owner is that pid; otherwise it reports "cannot
// read pidfile ... (No such process)". [CreatePidfile] writes and locks a
// pidfile that way; [ResolveTarget] and [ReadPidfile] apply the same check.
//
// # Concurrency
//
// Each connection is served by its own goroutine and handles one request
// at a time, as Open vSwitch does; a slow handler delays only its own
// connection. The [Registry] may be changed while the server runs.
// A handler's context is cancelled when its client goes away or the
// server closes.
//
// # Imports
//
// The standard library, ovsdb/jsonrpc (the framing) and the internal
// leaves syserr and unixsock. Nothing of the datapath, ofproto or the
// rest of ovsdb, and nothing under cmd/: the daemon registers their
// commands from above (tests/deps_test.go). Sub-packages vlog and
// coverage build on this package, never the reverse.
package unixctl
