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
