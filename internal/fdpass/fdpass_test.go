package fdpass

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func pair(t *testing.T) (*Conn, *Conn) {
	t.Helper()
	a, b, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// A pipe's write end sent across arrives as a descriptor to the same
// pipe: what is written through it is read from the sender's read end.
func TestDescriptorArrivesAsTheSameOpenFile(t *testing.T) {
	a, b := pair(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := a.Send([]byte("ports"), []int{int(w.Fd())}); err != nil {
		t.Fatal(err)
	}
	w.Close() // the receiver's duplicate keeps the pipe open
	msg, fds, err := b.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if string(msg) != "ports" || len(fds) != 1 {
		t.Fatalf("got %q with %d descriptors", msg, len(fds))
	}
	if _, err := unix.Write(fds[0], []byte("via the duplicate")); err != nil {
		t.Fatal(err)
	}
	unix.Close(fds[0])
	got := make([]byte, 64)
	n, _ := r.Read(got)
	if string(got[:n]) != "via the duplicate" {
		t.Fatalf("read %q", got[:n])
	}
}

// A payload larger than one packet is split and joined again, byte for
// byte, and the next message is unaffected.
func TestLargeMessageIsChunkedAndReassembled(t *testing.T) {
	a, b := pair(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*chunk/16+7)
	done := make(chan error, 1)
	go func() {
		if err := a.Send(big, nil); err != nil {
			done <- err
			return
		}
		done <- a.Send(nil, nil)
	}()
	msg, fds, err := b.Recv()
	if err != nil || len(fds) != 0 || !bytes.Equal(msg, big) {
		t.Fatalf("got %d bytes, %d fds, %v; want %d bytes", len(msg), len(fds), err, len(big))
	}
	msg, _, err = b.Recv()
	if err != nil || len(msg) != 0 {
		t.Fatalf("empty message: got %q, %v", msg, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestTooManyDescriptorsAreRefusedBeforeSending(t *testing.T) {
	a, _ := pair(t)
	err := a.Send(nil, make([]int, MaxFds+1))
	if err == nil || !strings.Contains(err.Error(), "251 descriptors in one message, at most 250") {
		t.Fatalf("got %v", err)
	}
}

// A chunk whose header claims a length beyond the bound is refused
// without allocating it.
func TestOversizedClaimIsRefused(t *testing.T) {
	a, b := pair(t)
	hdr := []byte{0, 0x7f, 0xff, 0xff, 0xff}
	if _, _, err := a.c.WriteMsgUnix(hdr, nil, nil); err != nil {
		t.Fatal(err)
	}
	_, _, err := b.Recv()
	if err == nil || !strings.Contains(err.Error(), "message of 2147483647 bytes, at most 1073741824") {
		t.Fatalf("got %v", err)
	}
}

// Descriptors that arrive in a later chunk are closed and the message
// refused: the receiver never holds descriptors it did not agree to.
func TestDescriptorsInALaterChunkAreRefusedAndClosed(t *testing.T) {
	a, b := pair(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first := []byte{flagMore, 0, 0, 0, 2, 'x'}
	if _, _, err := a.c.WriteMsgUnix(first, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.c.WriteMsgUnix([]byte{0, 0, 0, 0, 2, 'y'}, unix.UnixRights(int(w.Fd())), nil); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, _, err := b.Recv(); err == nil || !strings.Contains(err.Error(), "descriptors after a message's first chunk") {
		t.Fatalf("got %v", err)
	}
	// With every write end closed, the read end sees end of file.
	if n, _ := r.Read(make([]byte, 1)); n != 0 {
		t.Fatalf("pipe still has a writer")
	}
}

func TestPeerCredentialsAreThoseOfTheConnectingProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.sock")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v", st.Mode(), err)
	}
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := Accept(l)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cred, err := s.Peer()
	if err != nil {
		t.Fatal(err)
	}
	if int(cred.Pid) != os.Getpid() || int(cred.Uid) != os.Getuid() {
		t.Fatalf("peer %+v, want pid %d uid %d", cred, os.Getpid(), os.Getuid())
	}
	c.Close()
	if _, _, err := s.Recv(); !IsEOF(err) {
		t.Fatalf("after the peer closed: %v", err)
	}
}

// FuzzRecv feeds Recv arbitrary packets (the input split at 0xff 0xfe
// markers): it returns a message or an error, never more than the
// packets held.
func FuzzRecv(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 2, 'h', 'i'})
	f.Add([]byte{1, 0, 0, 0, 3, 'a', 0xff, 0xfe, 0, 0, 0, 0, 3, 'b', 'c'})
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b, err := Pair()
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		defer b.Close()
		pkts := bytes.Split(in, []byte{0xff, 0xfe})
		if len(pkts) > 64 {
			return
		}
		for _, p := range pkts {
			if len(p) > chunk+header {
				return
			}
			if _, _, err := a.c.WriteMsgUnix(p, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		a.Close() // a message left incomplete ends in an error
		msg, fds, err := b.Recv()
		if err == nil && len(msg) > len(in) {
			t.Fatalf("message of %d bytes from %d bytes of input", len(msg), len(in))
		}
		if len(fds) != 0 {
			t.Fatalf("%d descriptors from none", len(fds))
		}
	})
}
