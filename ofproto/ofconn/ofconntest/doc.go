// Package ofconntest provides a recording fake of ofconn.Sender for
// handler tests: every message a handler sends is encoded in the
// recorder's version and decoded back, so tests see exactly what would
// go on the wire. It imports ofproto/ofconn and ofproto/ofp only.
package ofconntest
