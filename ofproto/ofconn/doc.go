// Package ofconn owns OpenFlow channels over stream sockets: the listening
// side (Server, "punix:PATH" / "ptcp:PORT[:IP]") and the active side
// (Dial and Client, "unix:PATH" / "tcp:IP:PORT", with reconnect backoff).
//
// The shape follows net/http: a Handler is invoked once per decoded
// message with a Sender for replies and asynchronous messages. The layer
// itself does what Open vSwitch's vconn/rconn do: hello exchange and
// version negotiation (highest common version from the version bitmaps or
// header versions; OFPHFC_INCOMPATIBLE with Open vSwitch's text when none,
// then close), echo replies, the inactivity probe (echo after N idle
// seconds, close after 2N), OFPBRC_BAD_VERSION for messages in another
// version, and an OFPT_ERROR reply for every message ofp cannot decode
// (the connection survives; a header length below 8 breaks framing and
// closes it).
//
// # Multipart requests in parts
//
// An OpenFlow 1.3+ multipart request sent in parts (OFPSF_REQ_MORE on all
// but the last, one xid) reaches the handler once, assembled as Open
// vSwitch assembles it: flow monitor and table features requests entry by
// entry, others body after body. Parts of different types fail with
// OFPBRC_BAD_STAT, a request whose last part does not come within a
// second with OFPBRC_MULTIPART_REQUEST_TIMEOUT, and more than 1 MiB of
// pending parts with OFPBRC_MULTIPART_BUFFER_OVERFLOW. Earlier versions
// pass parts on one by one, as Open vSwitch does.
//
// # Ordering, barriers and backpressure
//
// Messages from one connection reach the handler in arrival order, one at
// a time, on the connection's reader goroutine; a slow handler therefore
// stops reading (TCP backpressure toward the peer). Barrier requests are
// passed to the handler like any other message: since delivery is
// sequential, a handler that finishes each message before returning may
// answer a barrier immediately.
//
// Each connection has a bounded send queue (Config.QueueLen messages, plus
// at most 64 KiB the writer holds while the socket is slow).
// Sender.Send blocks while the queue is full and fails with ErrClosed once
// the connection closes, so memory per connection is bounded and a peer
// that stops reading slows its producers down instead of growing a queue.
//
// # Snooping
//
// Conn.SetTap installs a function that sees every message the connection
// reads or queues after the hello exchange (the switch's <bridge>.snoop
// copies); without one the cost is an atomic load per message.
//
// # Imports
//
// ofconn imports ofproto/ofp and the standard library only; it must not
// import the switch (ofproto) or datapath packages.
package ofconn
