package storage

import (
	"errors"
	"fmt"
	"github.com/gvs-project/gvs/internal/syserr"
	"os"
	"path/filepath"
	"syscall"
)

// LockName is the lock file Open vSwitch's lockfile module uses for a
// database file: ".NAME.~lock~" beside it, after following symlinks so
// that a link and its target share one lock.
func LockName(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".~lock~")
}

// ErrLocked is wrapped by the error of Open and Create when another
// process holds the database's lock file.
var ErrLocked = errors.New("failed to lock lockfile")

// Linux's open file description locks (fcntl(2)); the syscall package
// does not name them.
const (
	fOFDGetlk = 36
	fOFDSetlk = 37
)

// lock takes the database's lock file as ovsdb-server does: an exclusive
// fcntl write lock over the whole file ".NAME.~lock~", created 0600, so
// that gvs and ovsdb-server exclude each other from one database file in
// both directions. The lock is an open file description lock, which
// conflicts with ovsdb-server's process lock as with another of its kind
// and, unlike a process lock, also refuses a second lock from the same
// process and is not released when some other descriptor of the file is
// closed. (ovsdb-server, refused by it, logs the holder as "pid -1".)
// The lock lasts until the returned file is closed or the process ends.
func lock(path string) (*os.File, error) {
	name := LockName(path)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("storage: %s: failed to open lock file: %w", name, err)
	}
	l := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), fOFDSetlk, &l); err != nil {
		if errors.Is(err, syscall.EACCES) {
			err = syscall.EAGAIN
		}
		holder := ""
		q := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 0}
		if syscall.FcntlFlock(f.Fd(), fOFDGetlk, &q) == nil && q.Type != syscall.F_UNLCK {
			if q.Pid > 0 {
				holder = fmt.Sprintf(" (%s: cannot lock file because it is already locked by pid %d)", filepath.Base(name), q.Pid)
			} else {
				holder = fmt.Sprintf(" (%s: cannot lock file because it is already locked by another gvs)", filepath.Base(name))
			}
		}
		f.Close()
		// ovsdb-server: "I/O error: conf.db: failed to lock lockfile
		// (Resource temporarily unavailable)".
		return nil, fmt.Errorf("storage: %s: %w (%s)%s", path, ErrLocked, syserr.Text(err), holder)
	}
	return f, nil
}
