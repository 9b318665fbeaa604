// Package server is gvs's OVSDB server: in-memory databases with the
// transaction engine, monitors and locks of RFC 7047 plus Open vSwitch's
// extensions, served over JSON-RPC to unmodified Open vSwitch and OVN
// clients, and optionally backed by a standalone database file that
// ovsdb-tool reads.
//
// # Overview
//
// A [Server] serves [Database] values and the reserved _Server database
// (table Database: name, model, connected, leader, schema, cid, sid,
// index) on any number of listeners ([Server.Serve]) or single connections
// ([Server.ServeConn]). Methods: list_dbs, get_schema, transact, cancel,
// monitor, monitor_cond, monitor_cond_since (update, update2 and update3
// notifications), monitor_cancel, lock, steal, unlock (locked and stolen
// notifications), echo and set_db_change_aware.
//
// Transactions run every RFC 7047 operation (insert with uuid-name or
// uuid, select, update, mutate, delete, wait, commit, abort, comment,
// assert) against a copy-on-write overlay of the committed rows. At commit
// the engine checks, in ovsdb-server's order: strong references
// ("referential integrity violation"), garbage collection of unreferenced
// rows of non-root tables, maxRows, weak references (dropped, or
// "constraint violation" if that empties a column that may not be empty)
// and unique indexes ("constraint violation"). Any failure rejects the
// whole transaction; results and error objects are shaped and worded as
// ovsdb-server's, so clients see the same replies. These checks read
// per-row strong reference counts and a reverse index of weak referrers
// that every applied change (and log replay) keeps current, so a commit's
// cost follows what it changed, not the database's size.
//
// # Invariants
//
//   - Committed rows are immutable; a transaction copies a row before it
//     changes it, so aborting is dropping the overlay.
//   - A transaction that changes the database is appended to the log and
//     synced before it is applied, before monitors hear of it, and before
//     the client gets its reply: an acknowledged transaction survives a
//     crash.
//   - For each session, notifications and replies leave in the order the
//     server produced them: the updates a transaction causes precede its
//     reply.
//   - Nothing a client sends can panic the server; malformed requests get
//     RFC 7047 errors, and unframeable input closes that connection only.
//
// # Life cycle
//
// Open or create databases ([OpenDatabaseFile], [CreateDatabaseFile],
// [NewDatabase]), add them with [Server.AddDatabase], then call
// [Server.Serve] for each listener. [Server.Close] stops listeners and
// connections, waits for their goroutines and closes the files. The log is
// compacted (rewritten as schema plus snapshot, atomically) when it has
// grown past [DefaultCompactMinSize] and quadrupled since the last
// compaction.
//
// # Thread-safety
//
// One mutex (Server.mu) guards every database, monitor, lock and session
// table; requests from all connections are handled one at a time under it,
// as ovsdb-server's single thread handles them. Each session has its own
// outgoing queue and writer goroutine, so a slow client never blocks the
// others.
//
// # Bounds (backlog.go)
//
// What a client can make the server hold is bounded as in ovsdb-server: a
// session's next request is read only while its queued output is at most
// [Limits].ReadBacklog bytes (64 KiB), so a client that sends without
// reading fills its socket and waits; while it is over that, its monitors'
// updates are merged (one change per row: the row before the first and
// after the last transaction) instead of queued, and sent when it catches
// up; a client behind with no output moving for StallTimeout (60 s) is
// disconnected, logged through the error hook and counted
// ([Server.SlowClientsDropped]). [Server.Backlog] is the bytes queued.
//
// Lock acquisition order: Server.mu, then a session's queue lock.
//
// # Imports
//
// ovsdb/model, ovsdb/jsonrpc, ovsdb/storage and the standard library. It
// must not import ofproto or datapath.
package server
