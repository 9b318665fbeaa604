package ofconn_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofconn/ofconntest"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// needOfctl returns the ovs-ofctl path; missing is a failure under CI=true.
func needOfctl(t *testing.T) string {
	t.Helper()
	p := nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	return p
}

func ofctl(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(needOfctl(t), append([]string{"--timeout=10"}, args...)...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// versionLog records the negotiated version of each closed connection.
type versionLog struct {
	mu sync.Mutex
	vs []uint8
}

func (l *versionLog) onClose(s ofconn.Sender, _ error) {
	l.mu.Lock()
	l.vs = append(l.vs, s.Version())
	l.mu.Unlock()
}

func (l *versionLog) wait(t *testing.T, n int) []uint8 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		if len(l.vs) >= n {
			vs := append([]uint8(nil), l.vs...)
			l.mu.Unlock()
			return vs
		}
		l.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("fewer than %d connections closed", n)
	return nil
}

func startServer(t *testing.T, s *ofconn.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "br0.mgmt")
	if _, err := s.Listen("punix:" + path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return "unix:" + path
}

func TestOvsOfctlProbeNegotiatesHighestCommonVersion(t *testing.T) {
	needOfctl(t)
	for _, tc := range []struct {
		proto string
		want  uint8
	}{{"OpenFlow10", 1}, {"OpenFlow13", 4}, {"OpenFlow15", 6}, {"OpenFlow10,OpenFlow14", 5}} {
		t.Run(tc.proto, func(t *testing.T) {
			var log versionLog
			s := &ofconn.Server{Handler: &ofconntest.Basic{}}
			s.OnClose = log.onClose
			target := startServer(t, s)
			if _, stderr, err := ofctl(t, "-O", tc.proto, "probe", target); err != nil {
				t.Fatalf("probe: %v: %s", err, stderr)
			}
			if got := log.wait(t, 1); got[0] != tc.want {
				t.Fatalf("negotiated version %#x, want %#x", got[0], tc.want)
			}
		})
	}
}

func TestOvsOfctlPingIsAnsweredByTheLayer(t *testing.T) {
	needOfctl(t)
	b := &ofconntest.Basic{}
	target := startServer(t, &ofconn.Server{Handler: b})
	out, stderr, err := ofctl(t, "-O", "OpenFlow13", "ping", target, "16")
	if err != nil {
		t.Fatalf("ping: %v: %s", err, stderr)
	}
	if n := strings.Count(out, "16 bytes from "+target); n != 10 {
		t.Fatalf("got %d echo replies, want 10:\n%s", n, out)
	}
	if len(b.Seen()) != 0 {
		t.Fatalf("echo requests reached the handler: %v", b.Seen())
	}
}

func TestOvsOfctlConfigAndBarrierThroughHandler(t *testing.T) {
	needOfctl(t)
	b := &ofconntest.Basic{}
	target := startServer(t, &ofconn.Server{Handler: b})
	if out, stderr, err := ofctl(t, "-O", "OpenFlow13", "get-frags", target); err != nil || out != "normal\n" {
		t.Fatalf("get-frags = %q, %v: %s", out, err, stderr)
	}
	if _, stderr, err := ofctl(t, "-O", "OpenFlow13", "set-frags", target, "drop"); err != nil {
		t.Fatalf("set-frags: %v: %s", err, stderr)
	}
	if out, stderr, err := ofctl(t, "-O", "OpenFlow13", "get-frags", target); err != nil || out != "drop\n" {
		t.Fatalf("get-frags after set-frags = %q, %v: %s", out, err, stderr)
	}
	b2 := &ofconntest.Basic{}
	target2 := startServer(t, &ofconn.Server{Handler: b2})
	if _, stderr, err := ofctl(t, "--no-names", "-O", "OpenFlow10", "add-flow", target2, "priority=7,actions=drop"); err != nil {
		t.Fatalf("add-flow: %v: %s (handler saw %v)", err, stderr, b2.Seen()[0].Raw)
	}
	var raws []string
	for _, m := range b2.Seen() {
		raws = append(raws, m.Raw.String())
	}
	got := strings.Join(raws, " ")
	if !strings.HasSuffix(got, "OFPT10_FLOW_MOD OFPT10_BARRIER_REQUEST") {
		t.Fatalf("handler saw %q, want it to end with the flow_mod then the barrier", got)
	}
	fm := b2.Seen()[len(raws)-2].Body.(*ofp.FlowMod)
	if fm.Priority != 7 {
		t.Fatalf("flow_mod priority %d, want 7", fm.Priority)
	}
}

func TestOvsOfctlIncompatibleVersionFailsAsOVS(t *testing.T) {
	needOfctl(t)
	var errs []error
	var mu sync.Mutex
	s := &ofconn.Server{Handler: &ofconntest.Basic{}, Config: ofconn.Config{Versions: []uint8{4}},
		ErrorLog: func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }}
	target := startServer(t, s)
	_, stderr, err := ofctl(t, "-O", "OpenFlow10", "probe", target)
	if err == nil {
		t.Fatal("probe succeeded across incompatible versions")
	}
	want := "version negotiation failed (we support version 0x01, peer supports version 0x04)"
	if !strings.Contains(stderr, want) {
		t.Fatalf("ovs-ofctl stderr %q lacks %q", stderr, want)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "no common OpenFlow version (we support version 0x04, peer supports version 0x01)") {
		t.Fatalf("server errors %v", errs)
	}
}

func TestOvsOfctlThreeConcurrentClients(t *testing.T) {
	needOfctl(t)
	target := startServer(t, &ofconn.Server{Handler: &ofconntest.Basic{}})
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	for _, args := range [][]string{
		{"-O", "OpenFlow13", "ping", target, "8"},
		{"-O", "OpenFlow15", "get-frags", target},
		{"-O", "OpenFlow10", "probe", target},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, stderr, err := ofctl(t, args...); err != nil {
					errc <- &exec.Error{Name: strings.Join(args, " ") + ": " + stderr, Err: err}
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}
