// Package storage reads and writes the OVSDB standalone log, the on-disk
// format of ovsdb-server's database files, so that ovsdb-tool reads what gvs
// writes and gvs opens what ovsdb-tool creates.
//
// # Format
//
// A file is a sequence of records. Each record is a header line
//
//	OVSDB JSON <length> <sha1>\n
//
// followed by <length> bytes of JSON text ending in a newline, whose SHA-1
// (hex) is <sha1>. The first record is the database schema; each later
// record is a transaction (see package server) or, after compaction, a
// snapshot of every row.
//
// # Crash safety
//
// [File.Append] returns only after the record is on stable storage (fsync),
// so a committed transaction survives a crash. A crash mid-write leaves a
// torn tail: [Open] keeps the records before it and truncates the rest.
// [File.Compact] writes a new file beside the old one, syncs it and renames
// it over the old one, so a crash leaves either the old or the new file.
//
// # Locking
//
// [Open] and [Create] first take the database's lock file as ovsdb-server
// does (".NAME.~lock~" beside it, an exclusive fcntl lock), so gvs and
// ovsdb-server refuse each other's files ([ErrLocked], "failed to lock
// lockfile") and a second gvs on one database cannot start; the lock goes
// with [File.Close] or the process.
//
// # Thread-safety
//
// A File is not safe for concurrent use; the server serialises commits.
//
// # Imports
//
// Only the standard library.
package storage
