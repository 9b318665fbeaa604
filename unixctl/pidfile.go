package unixctl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Pidfiles follow Open vSwitch's convention, which ovs-appctl -t NAME
// relies on: the file holds the decimal pid and a newline, and the live
// daemon holds a POSIX write lock (fcntl F_SETLK) on it for as long as it
// runs. A pidfile nobody has locked is stale: ovs-appctl then fails with
// "cannot read pidfile ... (No such process)". POSIX locks, not OFD locks,
// because readers check that the lock's owner is the pid in the file.

// Pidfile is a pidfile this process created and holds locked.
type Pidfile struct {
	path string
	f    *os.File
}

// CreatePidfile writes this process's pid to path and locks it. It fails
// if a live process holds the existing pidfile's lock. The file is written
// under a temporary name and renamed into place, so readers never see it
// half written.
func CreatePidfile(path string) (*Pidfile, error) { return createPidfile(path, 0) }

// TakePidfile is CreatePidfile in a process taking over from process
// handing (a handover): that process may still hold the old file's lock.
func TakePidfile(path string, handing int) (*Pidfile, error) { return createPidfile(path, handing) }

func createPidfile(path string, handing int) (*Pidfile, error) {
	if pid, err := lockOwner(path); err == nil && pid != 0 && pid != os.Getpid() && pid != handing {
		return nil, fmt.Errorf("appctl: pidfile %s is locked by running process %d", path, pid)
	}
	tmp := path + ".tmp"
	os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("appctl: creating pidfile: %w", err)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("appctl: locking pidfile: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%d\n", os.Getpid()); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("appctl: writing pidfile: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("appctl: installing pidfile: %w", err)
	}
	return &Pidfile{path: path, f: f}, nil
}

// Path returns the pidfile's name.
func (p *Pidfile) Path() string { return p.path }

// Remove deletes the pidfile and releases its lock (at clean shutdown).
func (p *Pidfile) Remove() error {
	err := os.Remove(p.path)
	p.f.Close()
	return err
}

// lockOwner returns the pid holding a conflicting write lock on path, or 0
// if nobody does. This process's own locks never conflict with its query.
func lockOwner(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil {
		return 0, err
	}
	if lk.Type == syscall.F_UNLCK {
		return 0, nil
	}
	return int(lk.Pid), nil
}

// ReadPidfile returns the pid in a pidfile whose owner is alive, as
// ovs-appctl checks it: the file must be locked by that pid (or be this
// process's own). A stale pidfile yields syscall.ESRCH.
func ReadPidfile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: parse error", path)
	}
	if pid == os.Getpid() {
		return pid, nil
	}
	owner, err := lockOwner(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0, syscall.ESRCH // removed between the two opens
	case err != nil:
		return 0, err
	case owner == 0:
		return 0, syscall.ESRCH
	case owner != pid:
		return 0, fmt.Errorf("%s: locked by pid %d instead of %d: %w", path, owner, pid, syscall.ESRCH)
	}
	return pid, nil
}
