package unixsock

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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

func TestZeroPermIsDefaultModeWithTheProcessGroup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := Listen(path, Perm{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fi, _ := os.Lstat(path)
	if st := fi.Sys().(*syscall.Stat_t); fi.Mode().Perm() != DefaultMode || int(st.Gid) != os.Getegid() {
		t.Fatalf("mode %v gid %d, want %v and gid %d", fi.Mode().Perm(), st.Gid, DefaultMode, os.Getegid())
	}
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
