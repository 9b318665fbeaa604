// Package exporttest holds what the flow exporters' tests share: a
// loopback UDP collector that records datagrams, a settable clock, and a
// private Open vSwitch (ovsdb-server and ovs-vswitchd with the dummy
// datapath, started by internal/ovsoracle) to compare exports with. Test
// code only; it imports only the standard library and internal/ovsoracle.
package exporttest

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/ovsoracle"
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
// binaries the comparison needs are missing, and skips in -short mode.
func RequireOpenVSwitch(t *testing.T, pkg string) {
	t.Helper()
	ovsoracle.Require(t, ovsoracle.SwitchBinaries...)
	if testing.Short() {
		t.Skip(pkg + ": Open vSwitch comparison skipped in -short mode")
	}
}

// OpenVSwitch is a private ovsdb-server and ovs-vswitchd (dummy datapath)
// that this test started and stops, with bridge br0 (datapath ID 0xabc,
// fail-mode standalone) and dummy ports p1 and p2 (ofports and ifindexes
// 1/1001 and 2/1002).
type OpenVSwitch struct {
	t testing.TB
	o *ovsoracle.Switch
}

func StartOpenVSwitch(t *testing.T) *OpenVSwitch {
	t.Helper()
	o := &OpenVSwitch{t: t, o: ovsoracle.Start(t, ovsoracle.Options{})}
	o.Vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"other-config:datapath-id=0000000000000abc", "fail-mode=standalone",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1", "options:ifindex=1001",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2", "options:ifindex=1002")
	return o
}

// Run runs a command with the switch's environment (ovs-appctl with no
// -t reaches its ovs-vswitchd) and returns its output.
func (o *OpenVSwitch) Run(name string, args ...string) string {
	o.t.Helper()
	return o.o.Run(name, args...)
}

func (o *OpenVSwitch) Vsctl(args ...string) string {
	o.t.Helper()
	return o.Run("ovs-vsctl", append([]string{"--timeout=10"}, args...)...)
}

// Receive injects a frame on a dummy port.
func (o *OpenVSwitch) Receive(port string, frame []byte) {
	o.t.Helper()
	o.o.Receive(port, fmt.Sprintf("%x", frame))
}
