// Package exporttest holds what the flow exporters' tests share: a
// loopback UDP collector that records datagrams, a settable clock, and a
// private Open vSwitch (ovsdb-server and ovs-vswitchd with the dummy
// datapath) to compare exports with. Test code only; it imports only the
// standard library.
package exporttest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Collector is a loopback UDP socket that records every datagram.
type Collector struct {
	conn *net.UDPConn
	mu   sync.Mutex
	msgs [][]byte
	ch   chan struct{}
}

func NewCollector(t testing.TB) *Collector { return startCollector(t, false) }

// NewSinkCollector drops what it receives, so that benchmarks measure
// only the exporter's allocations.
func NewSinkCollector(t testing.TB) *Collector { return startCollector(t, true) }

func startCollector(t testing.TB, discard bool) *Collector {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	c := &Collector{conn: conn, ch: make(chan struct{}, 1<<16)}
	go func() {
		buf := make([]byte, 65536)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			if discard {
				continue
			}
			c.mu.Lock()
			c.msgs = append(c.msgs, append([]byte(nil), buf[:n]...))
			c.mu.Unlock()
			c.ch <- struct{}{}
		}
	}()
	t.Cleanup(func() { conn.Close() })
	return c
}

func (c *Collector) Addr() string { return c.conn.LocalAddr().String() }

// Wait returns once n datagrams in total have arrived (or fails).
func (c *Collector) Wait(t testing.TB, n int) [][]byte {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		c.mu.Lock()
		got := len(c.msgs)
		c.mu.Unlock()
		if got >= n {
			break
		}
		select {
		case <-c.ch:
		case <-deadline:
			t.Fatalf("got %d datagrams, want %d", got, n)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.msgs...)
}

// Msgs returns the datagrams received so far.
func (c *Collector) Msgs() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.msgs...)
}

// Quiet checks that no more than n datagrams arrive within a short while.
func (c *Collector) Quiet(t testing.TB, n int) {
	t.Helper()
	time.Sleep(100 * time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.msgs) > n {
		t.Fatalf("got %d datagrams, want %d", len(c.msgs), n)
	}
}

// FakeClock is a settable clock.
type FakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func NewFakeClock() *FakeClock {
	return &FakeClock{t: time.Date(2026, 11, 30, 1, 0, 0, 500_000_000, time.UTC)}
}

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// RequireOpenVSwitch skips (fails under CI=true) when the Open vSwitch
// binaries the comparison needs are missing.
func RequireOpenVSwitch(t *testing.T, pkg string) {
	t.Helper()
	for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-appctl", "ovs-ofctl"} {
		if _, err := exec.LookPath(b); err != nil {
			msg := fmt.Sprintf("%s: %s not found (install openvswitch-switch and openvswitch-common)", pkg, b)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	if testing.Short() {
		t.Skip(pkg + ": Open vSwitch comparison skipped in -short mode")
	}
}

// OpenVSwitch is a private ovsdb-server and ovs-vswitchd (dummy datapath)
// that this test started and stops.
type OpenVSwitch struct {
	t   *testing.T
	env []string
}

func StartOpenVSwitch(t *testing.T) *OpenVSwitch {
	t.Helper()
	dir := t.TempDir()
	o := &OpenVSwitch{t: t, env: append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir,
		"OVS_SYSCONFDIR="+dir, "OVS_ipfixDATADIR=/usr/share/openvswitch")}
	db := filepath.Join(dir, "conf.db")
	o.Run("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
	sock := filepath.Join(dir, "db.sock")
	o.Run("ovsdb-server", "--remote=punix:"+sock, "--pidfile="+filepath.Join(dir, "ovsdb-server.pid"),
		"--log-file="+filepath.Join(dir, "ovsdb-server.log"), "--no-chdir", "--detach", db)
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(dir, "ovsdb-server.pid")); err == nil {
			var pid int
			fmt.Sscan(string(b), &pid)
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	vs := exec.Command("ovs-vswitchd", "--enable-dummy", "--disable-system", "--no-chdir",
		"--log-file="+filepath.Join(dir, "ovs-vswitchd.log"), "--pidfile="+filepath.Join(dir, "ovs-vswitchd.pid"),
		"unix:"+sock)
	vs.Env = o.env
	if err := vs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vs.Process.Kill(); vs.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, "ovs-vswitchd.*.ctl")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("ovs-vswitchd's control socket did not appear")
		}
		time.Sleep(20 * time.Millisecond)
	}
	o.Run("ovs-vsctl", "--timeout=10", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"other-config:datapath-id=0000000000000abc", "fail-mode=standalone",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:ifindex=1001",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2", "options:ifindex=1002")
	return o
}

func (o *OpenVSwitch) Run(name string, args ...string) string {
	o.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = o.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		o.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (o *OpenVSwitch) Vsctl(args ...string) string {
	o.t.Helper()
	return o.Run("ovs-vsctl", append([]string{"--timeout=10"}, args...)...)
}

// Receive injects a frame on a dummy port.
func (o *OpenVSwitch) Receive(port string, frame []byte) {
	o.t.Helper()
	o.Run("ovs-appctl", "netdev-dummy/receive", port, fmt.Sprintf("%x", frame))
}
