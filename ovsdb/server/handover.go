package server

import (
	"os"

	"github.com/gvs-project/gvs/ovsdb/storage"
)

// Handing the database to a successor process (vswitchd/handover): the
// running server is held (no request is served, nothing is written)
// while the successor opens the same file with the lock handed over.

// Hold stops the server: every request waits, nothing is committed,
// until release is called. A process that handed its database over
// exits instead of releasing.
func (s *Server) Hold() (release func()) {
	s.mu.Lock()
	return s.mu.Unlock
}

// LockFile returns the file through which db holds its log's lock, or
// nil for a database without a file.
func (db *Database) LockFile() *os.File {
	if db.log == nil {
		return nil
	}
	return db.log.LockFile()
}

// OpenDatabaseFileLocked is OpenDatabaseFile with the lock a predecessor
// handed over (storage.OpenLocked): on success the database owns lock.
func OpenDatabaseFileLocked(path string, lock *os.File) (*Database, storage.OpenInfo, error) {
	return openDatabaseFile(path, func(p string) (*storage.File, [][]byte, storage.OpenInfo, error) {
		return storage.OpenLocked(p, lock)
	})
}

// DeferWrites keeps db's transactions in memory, not in its log, until
// the server's FlushDeferred (storage.File.Defer): a daemon taking over
// writes nothing before it has taken over.
func (db *Database) DeferWrites() {
	if db.log != nil {
		db.log.Defer()
	}
}

// FlushDeferred writes every database's deferred transactions to its
// log.
func (s *Server) FlushDeferred() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.dbs {
		if e.db.log != nil {
			if err := e.db.log.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}
