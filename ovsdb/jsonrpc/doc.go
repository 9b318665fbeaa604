// Package jsonrpc implements JSON-RPC 1.0 as Open vSwitch speaks it over
// stream sockets: OVSDB (RFC 7047) and ovs-appctl's unixctl both use it.
//
// # Overview
//
// Messages are JSON objects written back to back on the stream, with no
// length prefix and no separator. A [Conn] frames them by scanning the byte
// stream for the end of each top-level object, checking JSON syntax as it
// goes with the rules of Open vSwitch's lexer (scan.go), so a message never
// has to be decoded twice and limits apply before decoding: a message larger
// than [Conn.MaxMessageSize] or nested deeper than [MaxDepth], or bytes that
// cannot be JSON (unbalanced brackets, a bad number or escape, an unescaped
// control character, \u0000: [ErrSyntax]) end the connection at once with an
// error instead of exhausting memory or the stack, or leaving the framer
// waiting for brackets that never balance.
//
// Four kinds of message exist ([Kind]): a request (method, params, id), a
// notification (method, params, id null), a reply (result, error null, id)
// and an error reply (error, id). Replies are encoded as Open vSwitch encodes
// them, so that its clients see byte-for-byte the same shapes.
//
// # Thread-safety
//
// [Conn.Send] may be called from any number of goroutines; [Conn.Recv] from
// one goroutine at a time.
//
// # Imports
//
// Only the standard library. The package must not import anything else of
// gvs: it sits below both the OVSDB server and the unixctl server.
package jsonrpc
