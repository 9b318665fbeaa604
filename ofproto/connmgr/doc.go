// Package connmgr owns a bridge's OpenFlow connections, as Open vSwitch's
// connmgr.c: the <bridge>.mgmt service listener, the controller targets
// (active connections that reconnect, passive listeners, targets held
// during flow-restore-wait) and their status for the Controller table,
// inactivity probes, fail-open's view of the controllers (ControllersDown),
// packet-in rate limiting (pinsched.go, Open vSwitch's pinsched), and the
// <bridge>.snoop listener whose connections get a copy of one controller
// connection's traffic (snoop.go).
//
// # Connections
//
// A Manager keeps one Conn per connection, created on its first message
// (or when an active controller connects) and dropped when it closes. A
// Conn holds what the manager and the asynchronous message senders need
// (primary or service connection, controller id, asynchronous message
// configuration, miss_send_len, flow format) and X, the switch's own
// per-connection state (bundles, flow monitors), which the manager never
// looks at: the type parameter keeps it typed without the manager
// importing the switch. Every received message goes to Config.Serve on
// the connection's goroutine; the switch sends replies and asynchronous
// messages itself, iterating with Each, and sends packet-ins through
// SendPacketIn so that a rate-limited controller's are scheduled.
//
// # What it does not own
//
// The meaning of messages (flow_mod, bundles, roles, async config
// requests, flow monitors) is the switch's (ofproto/ofswitch), as is the
// choice of which connections want which asynchronous message.
//
// # Concurrency
//
// Each connection's messages are served on its own goroutine; Each, Get
// and SendPacketIn may be called from any goroutine (packet-ins come from
// datapath workers). The connection set and the controller targets have
// their own mutexes; a Conn's fields read by other goroutines are atomic.
//
// # Imports
//
// connmgr imports ofproto/{ofconn,ofp} and internal/{unixsock,syserr}. It
// must not import ofproto/ofswitch, ofproto/upcall or ofproto/xlate (the
// switch is reached through Config and the type parameter), OVSDB
// packages or the datapath (dpif and below; ofp's match layout brings in
// datapath/flow only).
package connmgr
