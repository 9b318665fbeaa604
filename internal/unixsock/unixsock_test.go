package unixsock

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestListenMakesTheSocketModeAndGroupAndReplacesAStaleSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // leaves the file, as a killed daemon does
	gid := 1
	if os.Getuid() != 0 {
		gid = os.Getgid() // only root may give a file another group
	}
	l, err := Listen(path, Perm{Mode: 0o770, GID: gid, SetGID: true})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o770 || int(st.Gid) != gid {
		t.Fatalf("socket mode %v gid %d, want 0770 and gid %d", fi.Mode(), st.Gid, gid)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	c.Close()
	l.Close()
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("socket file left after Close: %v", err)
	}
}

// TestZeroPermIsOpenVSwitchsModeFromTheUmask: Open vSwitch's sockets
// are 0770 less the umask (Debian's ovsdb-server under umask 022 makes
// db.sock srwxr-x---, under 077 srwx------); so are gvs's by default.
func TestZeroPermIsOpenVSwitchsModeFromTheUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o750}, {0o077, 0o700}, {0o002, 0o770}, {0o027, 0o750}} {
		old := unix.Umask(tc.umask)
		if got := Umask(); got != os.FileMode(tc.umask) {
			t.Errorf("Umask() = %o under umask %o", got, tc.umask)
		}
		path := filepath.Join(t.TempDir(), "s.sock")
		l, err := Listen(path, Perm{})
		unix.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Lstat(path)
		if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != tc.want || int(st.Gid) != os.Getegid() {
			t.Errorf("umask %03o: mode %v gid %d, want %v and gid %d", tc.umask, fi.Mode().Perm(), st.Gid, tc.want, os.Getegid())
		}
		l.Close()
	}
}

// TestListenNeverTakesALiveSocket: a second daemon must neither replace
// nor, on its way out, delete the socket a running one listens on.
func TestListenNeverTakesALiveSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	first, err := Listen(path, Perm{})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if _, err := Listen(path, Perm{}); !errors.Is(err, ErrInUse) {
		t.Fatalf("second Listen: err = %v, want ErrInUse", err)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the first listener is gone: %v", err)
	}
	c.Close()
}

func TestListenRefusesToReplaceARegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(path, Perm{}); err == nil {
		t.Fatal("Listen replaced a regular file")
	}
	if b, _ := os.ReadFile(path); string(b) != "x" {
		t.Fatal("the regular file was changed")
	}
}
