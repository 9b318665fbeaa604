package unixctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ovsdb/jsonrpc"
)

func newTestServer(t testing.TB) (*Server, *Registry, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "appctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	reg := NewRegistry(VersionString("gvs-vswitchd", "gvs", "0.1.0"))
	srv := NewServer(reg, nil)
	path := filepath.Join(dir, "t.ctl")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, reg, path
}

// rawExchange writes raw bytes and returns every byte the server sends
// until it closes the connection or goes quiet.
func rawExchange(t *testing.T, path string, in string, quiet time.Duration) string {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, in); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	buf := make([]byte, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(quiet))
		n, err := c.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.String()
		}
	}
}

func TestWireRepliesAreOVSShaped(t *testing.T) {
	_, reg, path := newTestServer(t)
	if err := reg.Register("t/echo", "ARG...", 0, Unlimited, func(_ context.Context, a []string) (string, error) {
		return strings.Join(a, ","), nil
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{`{"id":0,"method":"version","params":[]}`, `{"id":0,"result":"gvs-vswitchd (gvs) 0.1.0\n","error":null}`},
		{`{"id":"x","method":"t/echo","params":["a","<b>"]}`, `{"id":"x","result":"a,<b>\n","error":null}`},
		{`{"id":7,"method":"t/echo","params":[]}`, `{"id":7,"result":"","error":null}`},
		{`{"id":1,"method":"nosuch","params":[]}`, `{"id":1,"error":"\"nosuch\" is not a valid command (use \"list-commands\" to see a list of valid commands)\n"}`},
		{`{"id":2,"method":"version","params":[1]}`, `{"id":2,"error":"\"version\" command takes at most 0 arguments\n"}`},
		{`{"id":3,"method":"t/echo","params":["a",1]}`, `{"id":3,"error":"\"t/echo\" command has non-string argument\n"}`},
		{`{"id":4,"method":"t/echo","params":[null]}`, `{"id":4,"error":"\"t/echo\" command has non-string argument\n"}`},
		{`{"id":5,"method":"echo","params":["ping"]}`, `{"id":5,"result":["ping"],"error":null}`},
	}
	for _, tc := range tests {
		if got := rawExchange(t, path, tc.in, 200*time.Millisecond); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestNonRequestClosesConnection(t *testing.T) {
	_, _, path := newTestServer(t)
	for _, in := range []string{
		`{"id":1,"result":"x","error":null}`,
		`{"id":1,"error":"x"}`,
		`{"id":null,"method":"version","params":[]}`,
		`{"method":"version","params":{}, "id":1}`,
		`[1,2]`,
		`{"id":1,"method":"version","params":[]`, // then EOF below
	} {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, in)
		c.(*net.UnixConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || len(b) != 0 {
			t.Errorf("%s: read %q, %v; want clean close with no reply", in, b, err)
		}
	}
}

func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	_, _, path := newTestServer(t)
	var in strings.Builder
	var want strings.Builder
	for i := range 20 {
		fmt.Fprintf(&in, `{"id":%d,"method":"version","params":[]} `, i)
		fmt.Fprintf(&want, `{"id":%d,"result":"gvs-vswitchd (gvs) 0.1.0\n","error":null}`, i)
	}
	if got := rawExchange(t, path, in.String(), 300*time.Millisecond); got != want.String() {
		t.Errorf("got %s\nwant %s", got, want.String())
	}
}

func TestListCommandsFormat(t *testing.T) {
	reg := NewRegistry("v")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	h := func(context.Context, []string) (string, error) { return "", nil }
	must(reg.Register("dpif-dummy/change-port-number", "dp port new-number", 3, 3, h))
	must(reg.Register("fdb/show", "bridge", 1, 1, h))
	must(reg.RegisterCommand(Command{Name: "bond/enable-slave", MinArgs: 2, MaxArgs: 2, Run: h, Hidden: true}))
	got, _ := reg.listCommands(context.Background(), nil)
	want := "The available commands are:\n" +
		"  dpif-dummy/change-port-number dp port new-number\n" +
		"  fdb/show                bridge\n" +
		"  list-commands           \n" +
		"  set-options             [--format text|json]\n" +
		"  version                 \n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestRegisterRejectsBadCommands(t *testing.T) {
	reg := NewRegistry("v")
	h := func(context.Context, []string) (string, error) { return "", nil }
	for _, c := range []Command{
		{Name: "version", Run: h},
		{Name: "", Run: h},
		{Name: "a b", Run: h},
		{Name: "x"},
		{Name: "x", MinArgs: 2, MaxArgs: 1, Run: h},
		{Name: "x", MinArgs: -1, Run: h},
	} {
		if err := reg.RegisterCommand(c); err == nil {
			t.Errorf("RegisterCommand(%+v) succeeded", c)
		}
	}
	if err := reg.RegisterCommand(Command{Name: "version", Run: h}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v, want ErrDuplicate", err)
	}
	reg.Unregister("version")
	if _, ok := reg.Lookup("version"); ok {
		t.Error("version still registered after Unregister")
	}
}

func TestSetOptionsJSONFormat(t *testing.T) {
	_, reg, path := newTestServer(t)
	if err := reg.RegisterCommand(Command{Name: "t/obj", Run: func(context.Context, []string) (string, error) {
		return "text form", nil
	}, RunJSON: func(context.Context, []string) (any, error) {
		return map[string]any{"b": 1, "a": []string{"x"}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	in := `{"id":0,"method":"t/obj","params":[]}` +
		`{"id":1,"method":"set-options","params":["--format","json"]}` +
		`{"id":2,"method":"t/obj","params":[]}` +
		`{"id":3,"method":"version","params":[]}` +
		`{"id":4,"method":"set-options","params":["--format","yaml"]}` +
		`{"id":5,"method":"set-options","params":["--bogus"]}` +
		`{"id":6,"method":"set-options","params":["--format=text"]}` +
		`{"id":7,"method":"t/obj","params":[]}`
	want := `{"id":0,"result":"text form\n","error":null}` +
		`{"id":1,"result":"","error":null}` +
		`{"id":2,"result":{"a":["x"],"b":1},"error":null}` +
		`{"id":3,"result":{"reply-format":"plain","reply":"gvs-vswitchd (gvs) 0.1.0\n"},"error":null}` +
		`{"id":4,"error":"invalid output format \"yaml\"\n"}` +
		`{"id":5,"error":"unknown option \"--bogus\"\n"}` +
		`{"id":6,"result":{"reply-format":"plain","reply":""},"error":null}` +
		`{"id":7,"result":"text form\n","error":null}`
	if got := rawExchange(t, path, in, 300*time.Millisecond); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// The format belongs to the connection: a new one starts in text.
	if got := rawExchange(t, path, `{"id":0,"method":"t/obj","params":[]}`, 200*time.Millisecond); got != `{"id":0,"result":"text form\n","error":null}` {
		t.Errorf("new connection: %s", got)
	}
}

// A slow handler holds up only its own connection, and is cancelled when
// its client hangs up.
func TestSlowHandlerBlocksOnlyItsConnection(t *testing.T) {
	_, reg, path := newTestServer(t)
	started := make(chan struct{})
	cancelled := make(chan struct{})
	if err := reg.Register("t/slow", "", 0, 0, func(ctx context.Context, _ []string) (string, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return "", ctx.Err()
	}); err != nil {
		t.Fatal(err)
	}
	slow, err := DialPath(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	go slow.Transact(context.Background(), "t/slow", nil)
	<-started
	c, err := DialPath(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Transact(ctx, "version", nil)
	if err != nil || string(r.Result) != `"gvs-vswitchd (gvs) 0.1.0\n"` {
		t.Fatalf("version while t/slow runs: %s, %v", r.Result, err)
	}
	slow.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("slow handler not cancelled after its client closed")
	}
}

func TestClientTimeout(t *testing.T) {
	_, reg, path := newTestServer(t)
	if err := reg.Register("t/hang", "", 0, 0, func(ctx context.Context, _ []string) (string, error) {
		<-ctx.Done()
		return "", nil
	}); err != nil {
		t.Fatal(err)
	}
	c, err := DialPath(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Transact(ctx, "t/hang", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Transact = %v, want DeadlineExceeded", err)
	}
}

// Many clients and concurrent registrations; run with -race.
func TestConcurrentClientsAndRegistrations(t *testing.T) {
	_, reg, path := newTestServer(t)
	const workers, calls = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := range workers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range calls {
				name := fmt.Sprintf("t/w%d/%d", w, i)
				if err := reg.Register(name, "", 0, 1, func(_ context.Context, a []string) (string, error) {
					return name + strings.Join(a, ""), nil
				}); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			c, err := DialPath(context.Background(), path)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			for i := range calls {
				r, err := c.Transact(context.Background(), "version", nil)
				if err != nil || string(r.Result) != `"gvs-vswitchd (gvs) 0.1.0\n"` {
					errs <- fmt.Errorf("call %d: %s %v", i, r.Result, err)
					return
				}
				if _, err := c.Transact(context.Background(), "list-commands", nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(reg.Commands()); n != workers*calls+3 {
		t.Errorf("%d commands registered, want %d", n, workers*calls+3)
	}
}

func TestPanickingHandlerRepliesError(t *testing.T) {
	_, reg, path := newTestServer(t)
	if err := reg.Register("t/panic", "", 0, 0, func(context.Context, []string) (string, error) {
		var m map[string]int
		m["x"] = 1
		return "", nil
	}); err != nil {
		t.Fatal(err)
	}
	got := rawExchange(t, path, `{"id":1,"method":"t/panic","params":[]}{"id":2,"method":"version","params":[]}`, 200*time.Millisecond)
	want := `{"id":1,"error":"\"t/panic\" command failed: internal error\n"}{"id":2,"result":"gvs-vswitchd (gvs) 0.1.0\n","error":null}`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

func TestListenReplacesStaleSocket(t *testing.T) {
	dir, _ := os.MkdirTemp("", "appctl")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s.ctl")
	ln1, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	// Simulate a crash: the file stays behind.
	ln1.(*net.UnixListener).SetUnlinkOnClose(false)
	ln1.Close()
	ln2, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen over stale socket: %v", err)
	}
	ln2.Close()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file left after Close: %v", err)
	}
}

func TestResolveTarget(t *testing.T) {
	dir := t.TempDir()
	pf, err := CreatePidfile(filepath.Join(dir, "gvs-vswitchd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Remove()
	if got, err := ResolveTarget("gvs-vswitchd", dir); err != nil || got != SocketPath(dir, "gvs-vswitchd", os.Getpid()) {
		t.Errorf("by name: %q, %v", got, err)
	}
	if got, err := ResolveTarget("/abs/x.ctl", dir); err != nil || got != "/abs/x.ctl" {
		t.Errorf("absolute: %q, %v", got, err)
	}
	_, err = ResolveTarget("nosuch", dir)
	if want := fmt.Sprintf("cannot read pidfile %q (No such file or directory)", filepath.Join(dir, "nosuch.pid")); err == nil || err.Error() != want {
		t.Errorf("missing pidfile: %v, want %s", err, want)
	}
	// A pidfile nobody holds locked is stale.
	os.WriteFile(filepath.Join(dir, "stale.pid"), []byte("1\n"), 0o644)
	_, err = ResolveTarget("stale", dir)
	if want := fmt.Sprintf("cannot read pidfile %q (No such process)", filepath.Join(dir, "stale.pid")); err == nil || err.Error() != want {
		t.Errorf("stale pidfile: %v, want %s", err, want)
	}
}

// socketPair returns two connected unix stream sockets.
func socketPair(t testing.TB) (*net.UnixConn, *net.UnixConn) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) *net.UnixConn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c.(*net.UnixConn)
	}
	return conn(fds[0]), conn(fds[1])
}

// FuzzServerConn feeds arbitrary bytes to a connection: the server must
// neither panic nor hang, and everything it sends must be a well-formed
// reply or error reply.
func FuzzServerConn(f *testing.F) {
	for _, s := range []string{
		`{"id":0,"method":"version","params":[]}`,
		`{"id":0,"method":"list-commands","params":["x"]}`,
		`{"id":1,"method":"set-options","params":["--format","json"]}{"id":2,"method":"version","params":[]}`,
		`{"id":{"a":[1,2]},"method":"nosuch","params":[1,{"x":null}]}`,
		`{"id":1,"result":"x","error":null}`,
		`{"id":1,"method":"echo","params":["\u0000\ud800"]}`,
		`[[[[[[`,
		`{"id":1,"method":"version","params":[]}` + strings.Repeat("}", 3),
		"\x00\xff{\"",
	} {
		f.Add([]byte(s))
	}
	reg := NewRegistry("v")
	if err := reg.Register("t/args", "", 0, 3, func(_ context.Context, a []string) (string, error) {
		return strings.Join(a, " "), nil
	}); err != nil {
		f.Fatal(err)
	}
	srv := NewServer(reg, slog.New(slog.DiscardHandler))
	f.Cleanup(func() { srv.Close() })
	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := socketPair(t)
		defer client.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.serveConn(server)
		}()
		go func() {
			client.Write(data)
			client.CloseWrite()
		}()
		client.SetReadDeadline(time.Now().Add(10 * time.Second))
		conn := jsonrpc.NewConn(client)
		for {
			m, err := conn.Recv()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("reading replies: %v", err)
				}
				break
			}
			if m.Kind != jsonrpc.KindReply && m.Kind != jsonrpc.KindError {
				t.Fatalf("server sent a %v", m.Kind)
			}
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("serveConn did not return after EOF")
		}
	})
}
