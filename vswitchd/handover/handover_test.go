package handover

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/internal/fdpass"
)

// The test binary doubles as the successor: with HANDOVER_CHILD set it
// takes over from the socket named there and writes, through every
// descriptor it received, who it is and the state it got.
func TestMain(m *testing.M) {
	if path := os.Getenv("HANDOVER_CHILD"); path != "" {
		err := Take(path, "child-build", func(b *Bundle) error {
			defer b.Close()
			if os.Getenv("HANDOVER_FAIL") != "" {
				return errors.New("cannot adopt port p0")
			}
			for _, fd := range b.Fds() {
				line := fmt.Sprintf("taken by %d: %s, %d ports from %s\n", os.Getpid(), b.State, len(b.Ports), b.Build)
				if _, err := unix.Write(fd, []byte(line)); err != nil {
					return err
				}
			}
			return nil
		}, 10*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// connPair is a connected pair of handover connections, closed when
// the test ends.
func connPair(t testing.TB) (*fdpass.Conn, *fdpass.Conn) {
	t.Helper()
	a, b, err := fdpass.Pair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// fakeSource hands over pipes' write ends as one port's two descriptors
// and a listener.
type fakeSource struct {
	t              *testing.T
	reads          []*os.File
	writes         []*os.File
	frozen, thawed atomic.Int32
}

func newFakeSource(t *testing.T) *fakeSource {
	s := &fakeSource{t: t}
	for i := 0; i < 3; i++ {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		s.reads, s.writes = append(s.reads, r), append(s.writes, w)
	}
	return s
}

func (s *fakeSource) Freeze() (*Bundle, error) {
	s.frozen.Add(1)
	return &Bundle{
		Ports: []Port{{DPType: "netdev", DPPort: 1, Handoff: netdev.Handoff{Type: "system", Name: "p0",
			Fds: []int{int(s.writes[0].Fd()), int(s.writes[1].Fd())}, State: []byte{1}}}},
		Listeners: []Listener{{Name: "db.sock", Fd: int(s.writes[2].Fd())}},
		State:     []byte("conntrack and MAC tables"),
	}, nil
}

func (s *fakeSource) Thaw() { s.thawed.Add(1) }

// serveOnce listens at a fresh path, starts the successor process and
// returns Give's result and the successor's output.
func serveOnce(t *testing.T, src Source, env ...string) (error, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "handover.sock")
	l, err := fdpass.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append(env, "HANDOVER_CHILD="+path)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := fdpass.Accept(l)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gerr := Give(c, src, SameFamily(), "parent-build", 10*time.Second)
	cmd.Wait()
	return gerr, out.String()
}

func readLine(t *testing.T, f *os.File) string {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 256)
	n, err := f.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[:n])
}

// Every descriptor reaches the successor process as the same open file,
// with the state, and the running side is not thawed.
func TestSuccessorProcessReceivesEveryDescriptorAndTheState(t *testing.T) {
	src := newFakeSource(t)
	err, out := serveOnce(t, src)
	if err != nil {
		t.Fatalf("Give: %v (successor: %s)", err, out)
	}
	for i, r := range src.reads {
		line := readLine(t, r)
		if !strings.HasPrefix(line, "taken by ") || !strings.HasSuffix(line, ": conntrack and MAC tables, 1 ports from parent-build\n") ||
			strings.Contains(line, fmt.Sprintf("taken by %d:", os.Getpid())) {
			t.Errorf("descriptor %d: %q", i, line)
		}
	}
	if src.frozen.Load() != 1 || src.thawed.Load() != 0 {
		t.Fatalf("frozen %d, thawed %d times", src.frozen.Load(), src.thawed.Load())
	}
}

// A successor that cannot apply what it got says why; the running side
// thaws and reports it.
func TestFailedSuccessorLeavesTheRunningDaemonForwarding(t *testing.T) {
	src := newFakeSource(t)
	err, out := serveOnce(t, src, "HANDOVER_FAIL=1")
	if err == nil || !strings.Contains(err.Error(), "handover to child-build failed, forwarding again: successor: cannot adopt port p0") {
		t.Fatalf("Give: %v", err)
	}
	if !strings.Contains(out, "applying what parent-build handed over: cannot adopt port p0") {
		t.Fatalf("successor said %q", out)
	}
	if src.frozen.Load() != 1 || src.thawed.Load() != 1 {
		t.Fatalf("frozen %d, thawed %d times", src.frozen.Load(), src.thawed.Load())
	}
}

// A process that is not a build of the same program is refused before
// anything is frozen.
func TestAnotherProgramIsRefused(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is needed to play a foreign peer")
		}
		t.Skip("no python3")
	}
	path := filepath.Join(t.TempDir(), "handover.sock")
	l, err := fdpass.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cmd := exec.Command(py, "-c", `import socket,sys,time
s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); time.sleep(0.5)`, path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	c, err := fdpass.Accept(l)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := newFakeSource(t)
	err = Give(c, src, SameFamily(), "parent-build", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "handover refused: process") || !strings.Contains(err.Error(), "which is not a gvs build") {
		t.Fatalf("Give: %v", err)
	}
	if src.frozen.Load() != 0 {
		t.Fatal("froze for a foreign peer")
	}
}

// A process of the same program under another user is refused, and
// told so.
func TestAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("needs root to run the successor as another user")
		}
		t.Skip("not root")
	}
	// A directory the other user can reach, with a copy of this binary.
	dir, err := os.MkdirTemp("", "handover")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	exe := filepath.Join(dir, "successor")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "handover.sock")
	l, err := fdpass.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	os.Chmod(path, 0o666)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "HANDOVER_CHILD="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := fdpass.Accept(l)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	src := newFakeSource(t)
	err = Give(c, src, SameFamily(), "parent-build", 5*time.Second)
	cmd.Wait()
	if err == nil || !strings.Contains(err.Error(), "runs as user 65534, not root or 0") {
		t.Fatalf("Give: %v", err)
	}
	if !strings.Contains(out.String(), "handover refused by the running daemon: process") {
		t.Fatalf("successor said %q", out.String())
	}
	if src.frozen.Load() != 0 {
		t.Fatal("froze for another user")
	}
}

// A successor speaking another protocol version is refused before
// anything is frozen.
func TestOtherProtocolVersionIsRefused(t *testing.T) {
	a, b := connPair(t)
	go b.Send([]byte(`{"type":"hello","version":2,"build":"future"}`), nil)
	src := newFakeSource(t)
	err := Give(a, src, func(*unix.Ucred) error { return nil }, "parent-build", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), `successor speaks "hello" version 2, this daemon version 1`) {
		t.Fatalf("Give: %v", err)
	}
	msg, _, err := b.Recv()
	if err != nil || !strings.Contains(string(msg), `"type":"refused"`) {
		t.Fatalf("successor got %q, %v", msg, err)
	}
	if src.frozen.Load() != 0 {
		t.Fatal("froze for a wrong version")
	}
}

// A bundle that carries more descriptors than it announced is refused by
// the successor and every descriptor it carried is closed.
func TestInconsistentBundleIsRefusedAndItsDescriptorsClosed(t *testing.T) {
	a, b := connPair(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		a.Send([]byte(`{"type":"bundle","version":1,"build":"x","ports":[{"name":"p0","n_fds":1}],"listeners":[],"n_fds":1}`), nil)
		a.Send([]byte("fds"), []int{int(w.Fd()), int(w.Fd())})
		w.Close()
	}()
	if _, err := receive(b); err == nil || !strings.Contains(err.Error(), `descriptor message "fds" with 2 descriptors, 2 of 1 received`) {
		t.Fatalf("receive: %v", err)
	}
	// The pipe's only remaining writer would be a leaked duplicate.
	r.SetReadDeadline(time.Now().Add(time.Second))
	if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the pipe still has a writer: %d, %v", n, err)
	}
}

// FuzzReceive feeds the successor arbitrary messages (split at 0xff 0xfe)
// in place of a bundle: it returns a bundle that agrees with itself or
// an error.
func FuzzReceive(f *testing.F) {
	f.Add([]byte(`{"type":"bundle","version":1,"build":"x","ports":[],"listeners":[],"n_fds":0}` + "\xff\xfe" + "state"))
	f.Add([]byte(`{"type":"refused","reason":"no"}`))
	f.Add([]byte(`{"type":"bundle","version":1,"ports":[{"name":"p","n_fds":-1}],"n_fds":-1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b := connPair(t)
		msgs := strings.Split(string(in), "\xff\xfe")
		if len(msgs) > 16 {
			return
		}
		for _, m := range msgs {
			if err := a.Send([]byte(m), nil); err != nil {
				return
			}
		}
		a.Close()
		bd, err := receive(b)
		if err != nil {
			return
		}
		defer bd.Close()
		if len(bd.Fds()) != 0 {
			t.Fatalf("%d descriptors from none", len(bd.Fds()))
		}
	})
}
