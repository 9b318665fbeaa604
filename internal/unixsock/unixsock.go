package unixsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultMode is the mode of gvs's unix sockets before the umask: owner
// and group may connect, others may not.
const DefaultMode os.FileMode = 0o770

// Perm is the ownership and mode a socket file gets.
type Perm struct {
	// Mode is the socket file's permission bits; 0 means DefaultMode
	// less the process umask, as Open vSwitch makes its sockets (0750
	// under umask 022, 0700 under 077).
	Mode os.FileMode
	// GID is the group the file is chowned to when SetGID is true;
	// otherwise the file keeps the group bind gave it (the daemon's).
	GID    int
	SetGID bool
	// Handed, if set, records the listeners for a handover and gives
	// back those a predecessor handed over (handover.go).
	Handed *Handed
}

func (p Perm) mode() os.FileMode {
	if p.Mode == 0 {
		return DefaultMode &^ Umask()
	}
	return p.Mode & os.ModePerm
}

// Umask returns the process's file mode creation mask, read from
// /proc/self/status so that it is never changed, even for a moment
// (022 if it cannot be read).
func Umask() os.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return os.FileMode(m) & os.ModePerm
				}
			}
		}
	}
	return 0o022
}

// ErrInUse is wrapped by Listen's error when a live process already
// listens on the path.
var ErrInUse = errors.New("socket in use by another process")

// Listen removes a stale socket file at path (never another kind of
// file, and never one a live process still listens on: ErrInUse), listens
// on it with the permissions p, and returns the listener; closing it
// removes the file.
func Listen(path string, p Perm) (*net.UnixListener, error) {
	if p.Handed != nil {
		return p.Handed.listen(path, func() (*net.UnixListener, error) { return listen(path, p) })
	}
	return listen(path, p)
}

func listen(path string, p Perm) (*net.UnixListener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("listening on %s: %w", path, ErrInUse)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("removing stale socket %s: %w", path, err)
		}
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var ferr error
		err := c.Control(func(fd uintptr) { ferr = unix.Fchmod(int(fd), 0o700) })
		if err != nil {
			return err
		}
		return ferr
	}}
	l, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	ul := l.(*net.UnixListener)
	if err := Apply(path, p); err != nil {
		ul.Close()
		return nil, err
	}
	return ul, nil
}

// Apply sets path's group (when p.SetGID) and then its mode.
func Apply(path string, p Perm) error {
	if p.SetGID {
		if err := os.Lchown(path, -1, p.GID); err != nil {
			return fmt.Errorf("setting the group of %s: %w", path, err)
		}
	}
	if err := os.Chmod(path, p.mode()); err != nil {
		return fmt.Errorf("setting the mode of %s: %w", path, err)
	}
	return nil
}
