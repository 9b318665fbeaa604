package unixsock

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestHandedListenersAreServedByTheSuccessor: a listener recorded in one
// Handed and inherited by another (its descriptor duplicated, as
// SCM_RIGHTS would) is the same socket: the successor's Listen on the
// same path or TCP address takes it instead of binding (which would
// fail: the path and port are in use), a client connecting once the
// first set is held reaches the successor, and inherited sockets no
// Listen claims are closed.
func TestHandedListenersAreServedByTheSuccessor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "db.sock")
	old := NewHanded()
	ul, err := Listen(path, Perm{Handed: old})
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	tl, err := ListenTCP("tcp", "127.0.0.1:0", Perm{Handed: old})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	gone, err := Listen(filepath.Join(dir, "gone.sock"), Perm{Handed: old})
	if err != nil {
		t.Fatal(err)
	}
	gone.Close()
	ls := old.Listeners()
	if len(ls) != 2 || ls[0].Path != path || ls[1].Path != "tcp:127.0.0.1:0" {
		t.Fatalf("listeners: %+v", ls)
	}
	resume := old.Hold()
	if _, err := ul.Accept(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("accept while held: %v", err)
	}
	succ := NewHanded()
	for _, l := range append(ls, Listener{Path: filepath.Join(dir, "other.sock"), Fd: ls[0].Fd}) {
		fd, err := syscall.Dup(l.Fd)
		if err != nil {
			t.Fatal(err)
		}
		succ.Inherit(l.Path, fd)
	}
	ul2, err := Listen(path, Perm{Handed: succ})
	if err != nil {
		t.Fatal(err)
	}
	defer ul2.Close()
	tl2, err := ListenTCP("tcp", "127.0.0.1:0", Perm{Handed: succ})
	if err != nil {
		t.Fatal(err)
	}
	defer tl2.Close()
	if tl2.Addr().String() != tl.Addr().String() {
		t.Fatalf("the successor's TCP listener is %s, the handed one %s", tl2.Addr(), tl.Addr())
	}
	if got := succ.CloseUnclaimed(); len(got) != 1 || got[0] != filepath.Join(dir, "other.sock") {
		t.Fatalf("unclaimed: %q", got)
	}
	for _, c := range []struct {
		network, addr string
		l             net.Listener
	}{{"unix", path, ul2}, {"tcp", tl.Addr().String(), tl2}} {
		cc, err := net.DialTimeout(c.network, c.addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := c.l.Accept()
		if err != nil {
			t.Fatalf("%s: the successor did not accept: %v", c.network, err)
		}
		sc.Close()
		cc.Close()
	}
	resume()
}
