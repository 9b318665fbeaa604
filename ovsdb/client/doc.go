// Package client is gvs's OVSDB client (an "IDL"): the connection, the
// in-memory replica of monitored tables, transactions and locks that
// gvs-vswitchd's bridge layer and gvs-vsctl use against gvs's embedded
// server or an external ovsdb-server (RFC 7047 with Open vSwitch's
// extensions).
//
// # Overview
//
// A [Client] owns one JSON-RPC connection at a time. [Dial] connects to
// "unix:PATH" or "tcp:HOST:PORT" and reconnects to the same target with
// exponential backoff when the connection drops; [NewClient] wraps an
// established connection (for example one end of a net.Pipe to an
// in-process server) and does not reconnect. One reader goroutine per
// connection answers the server's echo requests, hands replies to their
// callers by id and applies notifications (update, update2, update3,
// locked, stolen) in arrival order.
//
// [Client.Monitor] subscribes to tables and columns with
// monitor_cond_since, falling back to monitor_cond and then monitor when
// the server does not know the method, and maintains a [Replica]: table
// -> UUID -> [Row] with values typed by ovsdb/model. Every applied update
// publishes a new immutable [Snapshot] with a larger sequence number and
// queues [Change] values (insert, modify, delete with old and new rows)
// for a single callback goroutine, in the order the updates were applied.
//
// [Client.Txn] builds a transaction of RFC 7047 operations (insert with
// uuid-name, update, mutate, delete, select, wait, comment, assert) whose
// values are plain Go values or model.Datum checked against the schema;
// [Txn.Commit] returns per-operation results with named UUIDs resolved,
// or a [*TxnError] carrying the server's error name and details.
// [Txn.Verify] is Open vSwitch's IDL verify: a wait with "until": "=="
// on the columns the caller read.
//
// [Client.Lock] and [Client.Steal] return a [Lock] whose state follows the
// server's locked and stolen notifications.
//
// # Invariants
//
//   - A Snapshot and the Rows in it are never changed after publication;
//     an update copies only the tables it touches.
//   - Snapshot sequence numbers increase by one with every applied update
//     (initial contents and resynchronisation after a reconnect included).
//   - Changes reach the callback in the order their updates were applied,
//     one at a time, on one goroutine per Replica.
//   - Updates that a transaction causes are applied before Commit returns
//     when the server sends them before the reply (both ovsdb-server and
//     gvs's server do).
//   - Nothing a server sends can panic the client: an update that cannot
//     be decoded or applied drops the connection, which then reconnects and
//     resynchronises the replica.
//
// # Life cycle
//
// Dial or NewClient, then Monitor, Txn and Lock as needed; Close ends the
// connection, the reconnect loop and the callback goroutines. After a
// reconnect each replica is monitored again with its last transaction id;
// if the server cannot resume from it, the replica is rebuilt from the new
// initial contents and callbacks report the difference (rows that appeared,
// changed or disappeared while the client was disconnected). Locks that
// were requested are requested again.
//
// # Thread-safety
//
// All methods may be called from any goroutine. Callbacks run on the
// replica's own goroutine with no lock held and may call any method,
// including Commit, except Client.Close and Replica.Cancel (which wait
// for that goroutine to finish).
//
// Client.mu, Replica.mu and Lock.mu are never held together; the reader
// goroutine is the only writer of replicas and lock states.
//
// # Imports
//
// ovsdb/jsonrpc, ovsdb/model and the standard library. It must not import
// ovsdb/server, ofproto or datapath.
package client
