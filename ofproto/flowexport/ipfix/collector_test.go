package ipfix

import (
	"net"
	"sync"
	"testing"
	"time"
)

// testCollector is a loopback UDP socket that records every datagram.
type testCollector struct {
	conn *net.UDPConn
	mu   sync.Mutex
	msgs [][]byte
	ch   chan struct{}
}

func newTestCollector(t testing.TB) *testCollector { return startCollector(t, false) }

// newSinkCollector drops what it receives, so that benchmarks measure
// only the exporter's allocations.
func newSinkCollector(t testing.TB) *testCollector { return startCollector(t, true) }

func startCollector(t testing.TB, discard bool) *testCollector {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	c := &testCollector{conn: conn, ch: make(chan struct{}, 1<<16)}
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

func (c *testCollector) addr() string { return c.conn.LocalAddr().String() }

// wait returns once n datagrams in total have arrived (or fails).
func (c *testCollector) wait(t testing.TB, n int) [][]byte {
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

// quiet checks that no more than n datagrams arrive within a short while.
func (c *testCollector) quiet(t testing.TB, n int) {
	t.Helper()
	time.Sleep(100 * time.Millisecond)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.msgs) > n {
		t.Fatalf("got %d datagrams, want %d", len(c.msgs), n)
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 30, 1, 0, 0, 500_000_000, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
