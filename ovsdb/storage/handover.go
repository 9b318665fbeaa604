package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Handing the database to another process (a planned restart without
// loss): the lock is an open file description lock, so a duplicate of
// its descriptor received over SCM_RIGHTS holds the same lock. The
// running process stops writing and hands LockFile's descriptor; the
// successor opens the log with OpenLocked, and the lock never becomes
// free in between for a third process to take.

// LockFile returns the held lock file, for handing its descriptor to a
// successor. The File keeps it; closing the File releases this
// process's hold only.
func (lf *File) LockFile() *os.File { return lf.lock }

// OpenLocked is Open with the lock a predecessor handed over instead of
// taking it afresh: lock must be a descriptor of path's lock file
// through which the lock is held (or free). On success the File owns
// lock; on error it stays the caller's.
func OpenLocked(path string, lock *os.File) (*File, [][]byte, OpenInfo, error) {
	if err := checkHandedLock(path, lock); err != nil {
		return nil, nil, OpenInfo{}, err
	}
	lf, recs, info, err := open(path)
	if err != nil {
		return nil, nil, info, err
	}
	lf.lock = lock
	return lf, recs, info, nil
}

// checkHandedLock checks that lock is path's lock file and that taking
// the lock through it succeeds: it does when this description already
// holds it, and fails when another one does.
func checkHandedLock(path string, lock *os.File) error {
	name := LockName(path)
	want, err := os.Stat(name)
	if err != nil {
		return fmt.Errorf("storage: %s: handed lock: %w", path, err)
	}
	got, err := lock.Stat()
	if err != nil {
		return fmt.Errorf("storage: %s: handed lock: %w", path, err)
	}
	if !os.SameFile(want, got) {
		return fmt.Errorf("storage: %s: the handed descriptor is not %s", path, name)
	}
	l := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(lock.Fd(), fOFDSetlk, &l); err != nil {
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EAGAIN) {
			return fmt.Errorf("storage: %s: %w (the handed descriptor does not hold the lock)", path, ErrLocked)
		}
		return fmt.Errorf("storage: %s: handed lock: %w", path, err)
	}
	return nil
}

// Defer makes Append keep records in memory instead of writing them,
// until Flush: a successor taking over writes nothing to the log until
// the handover has succeeded, so that a failed one leaves the file as
// the running process knows it. Deferred records are not durable.
func (lf *File) Defer() { lf.deferred = true }

// Flush writes the records deferred since Defer, syncs them and makes
// Append write again.
func (lf *File) Flush() error {
	if !lf.deferred {
		return nil
	}
	lf.deferred = false
	if len(lf.pending) == 0 {
		return nil
	}
	if _, err := lf.f.Write(lf.pending); err != nil {
		lf.rewind()
		return fmt.Errorf("storage: append to %s: %w", lf.path, err)
	}
	if err := lf.f.Sync(); err != nil {
		lf.rewind()
		return fmt.Errorf("storage: sync %s: %w", lf.path, err)
	}
	lf.size += int64(len(lf.pending))
	lf.pending = nil
	return nil
}
