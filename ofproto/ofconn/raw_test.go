package ofconn_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofconn/ofconntest"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// rawPeer is a hand-driven OpenFlow peer for wire-exact tests.
type rawPeer struct {
	t  *testing.T
	nc net.Conn
}

func dialRaw(t *testing.T, target string) *rawPeer {
	t.Helper()
	nc, err := net.Dial("unix", strings.TrimPrefix(target, "unix:"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	return &rawPeer{t, nc}
}

func (p *rawPeer) write(b []byte) {
	p.t.Helper()
	if _, err := p.nc.Write(b); err != nil {
		p.t.Fatal(err)
	}
}

func (p *rawPeer) send(v uint8, xid uint32, m ofp.Message) []byte {
	p.t.Helper()
	b, err := ofp.Encode(nil, v, xid, m)
	if err != nil {
		p.t.Fatal(err)
	}
	p.write(b)
	return b
}

// read returns the next raw message, or nil at EOF.
func (p *rawPeer) read() []byte {
	p.t.Helper()
	hdr := make([]byte, 8)
	if _, err := io.ReadFull(p.nc, hdr); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset") {
			return nil
		}
		p.t.Fatal(err)
	}
	b := make([]byte, binary.BigEndian.Uint16(hdr[2:]))
	copy(b, hdr)
	if _, err := io.ReadFull(p.nc, b[8:]); err != nil {
		p.t.Fatal(err)
	}
	return b
}

func (p *rawPeer) readMsg() *ofp.Msg {
	p.t.Helper()
	b := p.read()
	if b == nil {
		p.t.Fatal("connection closed, want a message")
	}
	m, err := ofp.Decode(b)
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

// hello does the hello exchange for version v and returns the server's hello.
func (p *rawPeer) hello(v uint8) *ofp.Msg {
	p.t.Helper()
	p.send(v, 1, &ofp.Hello{})
	return p.readMsg()
}

func wantError(t *testing.T, m *ofp.Msg, v uint8, xid uint32, code ofp.ErrCode, data []byte) {
	t.Helper()
	e, ok := m.Body.(*ofp.ErrorMsg)
	if !ok {
		t.Fatalf("got %v, want OFPT_ERROR %s", m.Raw, code)
	}
	if m.Version != v || m.XID != xid || e.ErrCode(v) != code || !bytes.Equal(e.Data, data) {
		t.Fatalf("got error v%#x xid %d %s data %x, want v%#x xid %d %s data %x",
			m.Version, m.XID, e.ErrCode(m.Version), e.Data, v, xid, code, data)
	}
}

func TestServerHelloAdvertisesConfiguredVersionBitmap(t *testing.T) {
	target := startServer(t, &ofconn.Server{Handler: &ofconntest.Basic{}, Config: ofconn.Config{Versions: []uint8{1, 4}}})
	p := dialRaw(t, target)
	h := p.hello(4)
	if h.Raw != ofp.RawOFPT_HELLO || h.Version != 4 {
		t.Fatalf("server hello %v version %#x", h.Raw, h.Version)
	}
	if got := h.Body.(*ofp.Hello).Versions(); !bytes.Equal(got, []uint8{1, 4}) {
		t.Fatalf("hello bitmap versions %v, want [1 4]", got)
	}
}

func TestIncompatibleHelloGetsOVSErrorTextThenClose(t *testing.T) {
	target := startServer(t, &ofconn.Server{Handler: &ofconntest.Basic{}, Config: ofconn.Config{Versions: []uint8{4}}})
	p := dialRaw(t, target)
	p.hello(1)
	m := p.readMsg()
	wantError(t, m, 1, 0, ofp.OFPHFC_INCOMPATIBLE,
		[]byte("We support version 0x04, you support version 0x01, no common versions."))
	if b := p.read(); b != nil {
		t.Fatalf("connection stayed open, read %x", b)
	}
}

func TestMalformedMessagesGetErrorsAndConnectionSurvives(t *testing.T) {
	b := &ofconntest.Basic{}
	target := startServer(t, &ofconn.Server{Handler: b})
	p := dialRaw(t, target)
	p.hello(4)

	unknownType := []byte{4, 0xfe, 0, 8, 0, 0, 0, 9}
	p.write(unknownType)
	wantError(t, p.readMsg(), 4, 9, ofp.OFPBRC_BAD_TYPE, unknownType)

	shortFeatures := []byte{4, 5, 0, 12, 0, 0, 0, 10, 1, 2, 3, 4} // FEATURES_REQUEST has no body
	p.write(shortFeatures)
	wantError(t, p.readMsg(), 4, 10, ofp.OFPBRC_BAD_LEN, shortFeatures)

	wrongVersion := p.send(1, 11, &ofp.FeaturesRequest{})
	wantError(t, p.readMsg(), 1, 11, ofp.OFPBRC_BAD_VERSION, wrongVersion)

	long := make([]byte, 100)
	copy(long, []byte{4, 0xfe, 0, 100, 0, 0, 0, 12})
	p.write(long)
	wantError(t, p.readMsg(), 4, 12, ofp.OFPBRC_BAD_TYPE, long[:64])

	p.send(4, 13, &ofp.EchoRequest{Data: []byte("still up")})
	if m := p.readMsg(); m.XID != 13 || string(m.Body.(*ofp.EchoReply).Data) != "still up" {
		t.Fatalf("echo after errors: %v %+v", m.Raw, m.Body)
	}
	if n := len(b.Seen()); n != 0 {
		t.Fatalf("handler saw %d malformed messages", n)
	}

	p.write([]byte{4, 2, 0, 4, 0, 0, 0, 14}) // length 4 < header: framing is lost
	if got := p.read(); got != nil {
		t.Fatalf("connection survived a broken frame, read %x", got)
	}
}

func TestInactivityProbeSendsEchoThenCloses(t *testing.T) {
	const n = 100 * time.Millisecond
	target := startServer(t, &ofconn.Server{Handler: &ofconntest.Basic{}, Config: ofconn.Config{ProbeInterval: n}})
	p := dialRaw(t, target)
	p.hello(4)
	start := time.Now()
	if m := p.readMsg(); m.Raw != ofp.RawOFPT_ECHO_REQUEST {
		t.Fatalf("got %v, want the probe echo request", m.Raw)
	}
	if d := time.Since(start); d < n*8/10 {
		t.Fatalf("probe after %v, want about %v", d, n)
	}
	if b := p.read(); b != nil {
		t.Fatalf("connection open after unanswered probe, read %x", b)
	}
	if d := time.Since(start); d < 2*n*8/10 {
		t.Fatalf("closed after %v, want about %v", d, 2*n)
	}
}

func TestInactivityProbeAnsweredKeepsConnection(t *testing.T) {
	const n = 50 * time.Millisecond
	target := startServer(t, &ofconn.Server{Handler: &ofconntest.Basic{}, Config: ofconn.Config{ProbeInterval: n}})
	p := dialRaw(t, target)
	p.hello(4)
	for range 4 {
		m := p.readMsg()
		if m.Raw != ofp.RawOFPT_ECHO_REQUEST {
			t.Fatalf("got %v, want echo request", m.Raw)
		}
		p.send(4, m.XID, &ofp.EchoReply{})
	}
}

func TestMessagesReachHandlerInOrderAcrossThreeClients(t *testing.T) {
	var mu sync.Mutex
	seen := map[ofconn.Sender][]uint32{}
	h := ofconn.HandlerFunc(func(s ofconn.Sender, m *ofp.Msg) {
		if _, ok := m.Body.(*ofp.BarrierRequest); ok {
			s.Reply(m, &ofp.BarrierReply{})
			return
		}
		mu.Lock()
		seen[s] = append(seen[s], m.XID)
		mu.Unlock()
	})
	target := startServer(t, &ofconn.Server{Handler: h})
	const per = 500
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan struct{})
			c, err := ofconn.Dial(context.Background(), target, ofconn.Config{Versions: []uint8{uint8(4 + i%3)}},
				ofconn.HandlerFunc(func(_ ofconn.Sender, m *ofp.Msg) {
					if m.Raw == ofp.RawOFPT11_BARRIER_REPLY {
						close(done)
					}
				}))
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			for x := range uint32(per) {
				if err := c.Send(x+100, &ofp.SetConfig{}); err != nil {
					t.Error(err)
					return
				}
			}
			c.Send(1, &ofp.BarrierRequest{})
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("no barrier reply")
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("%d connections delivered messages, want 3", len(seen))
	}
	for s, xids := range seen {
		if len(xids) != per {
			t.Fatalf("connection got %d messages, want %d", len(xids), per)
		}
		for i, x := range xids {
			if x != uint32(i)+100 {
				t.Fatalf("connection v%#x message %d has xid %d: out of order", s.Version(), i, x)
			}
		}
	}
}

func TestClientReconnectsAfterDisconnect(t *testing.T) {
	s := &ofconn.Server{Handler: &ofconntest.Basic{}}
	target := startServer(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	conns := make(chan *ofconn.Conn, 4)
	cl := &ofconn.Client{Target: target, Handler: ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {}),
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		OnConnect: func(c *ofconn.Conn) { conns <- c }}
	done := make(chan error, 1)
	go func() { done <- cl.Run(ctx) }()
	first := <-conns
	// The server registers the connection once it has read our hello,
	// which may be after our side finished the handshake.
	deadline := time.Now().Add(3 * time.Second)
	for len(s.Conns()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	for _, c := range s.Conns() {
		c.Close()
	}
	select {
	case <-first.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("client connection did not see the server close it")
	}
	select {
	case second := <-conns:
		if second.Version() != 6 {
			t.Fatalf("reconnected with version %#x, want 0x06", second.Version())
		}
	case <-time.After(3 * time.Second):
		t.Fatal("client did not reconnect")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v", err)
	}
}

func TestParseTargets(t *testing.T) {
	for _, tc := range []struct{ in, network, addr string }{
		{"punix:/run/br0.mgmt", "unix", "/run/br0.mgmt"},
		{"ptcp:6653", "tcp", ":6653"},
		{"ptcp:6653:127.0.0.1", "tcp", "127.0.0.1:6653"},
		{"ptcp:6653:::1", "tcp", "[::1]:6653"},
	} {
		n, a, err := ofconn.ParseListen(tc.in)
		if err != nil || n != tc.network || a != tc.addr {
			t.Errorf("ParseListen(%q) = %q %q %v, want %q %q", tc.in, n, a, err, tc.network, tc.addr)
		}
	}
	for _, tc := range []struct{ in, network, addr string }{
		{"unix:/run/br0.mgmt", "unix", "/run/br0.mgmt"},
		{"tcp:127.0.0.1:6653", "tcp", "127.0.0.1:6653"},
		{"tcp:[::1]:6654", "tcp", "[::1]:6654"},
		{"tcp:10.0.0.1", "tcp", "10.0.0.1:6653"},
	} {
		n, a, err := ofconn.ParseDial(tc.in)
		if err != nil || n != tc.network || a != tc.addr {
			t.Errorf("ParseDial(%q) = %q %q %v, want %q %q", tc.in, n, a, err, tc.network, tc.addr)
		}
	}
	for _, bad := range []string{"unix:", "tcp", "ssl:1.2.3.4:6653"} {
		if _, _, err := ofconn.ParseDial(bad); err == nil {
			t.Errorf("ParseDial(%q) succeeded", bad)
		}
	}
}

func TestTCPListenerServesOvsOfctl(t *testing.T) {
	needOfctl(t)
	s := &ofconn.Server{Handler: &ofconntest.Basic{}}
	l, err := s.Listen("ptcp:0:127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if out, stderr, err := ofctl(t, "-O", "OpenFlow13", "get-frags", "tcp:"+l.Addr().String()); err != nil || out != "normal\n" {
		t.Fatalf("get-frags over tcp = %q, %v: %s", out, err, stderr)
	}
}

// TestEchoReplyInTheRequestsVersion: Open vSwitch answers an echo
// request in the version the request carries (ofputil_encode_echo_reply),
// not the negotiated one.
func TestEchoReplyInTheRequestsVersion(t *testing.T) {
	target := startServer(t, &ofconn.Server{Handler: &ofconntest.Basic{}})
	p := dialRaw(t, target)
	p.hello(4)
	for _, v := range []uint8{1, 4, 6} {
		p.send(v, 20+uint32(v), &ofp.EchoRequest{Data: []byte("v")})
		if m := p.readMsg(); m.Raw != ofp.RawOFPT_ECHO_REPLY || m.Version != v || m.XID != 20+uint32(v) {
			t.Errorf("echo request version %d: reply %v version %d xid %d", v, m.Raw, m.Version, m.XID)
		}
	}
}

// TestProbeFuncIsAskedAgain: a changed probe setting applies to a
// connection already up (Controller.inactivity_probe changed by
// ovs-vsctl), 0 disabling it.
func TestProbeFuncIsAskedAgain(t *testing.T) {
	var probe atomic.Int64
	probe.Store(int64(time.Hour))
	target := startServer(t, &ofconn.Server{Handler: &ofconntest.Basic{}, Config: ofconn.Config{
		Probe: func(*ofconn.Conn) time.Duration { return time.Duration(probe.Load()) }}})
	p := dialRaw(t, target)
	p.hello(4)
	probe.Store(int64(50 * time.Millisecond))
	p.send(4, 1, &ofp.EchoRequest{}) // wakes the reader, which takes the new interval
	if m := p.readMsg(); m.Raw != ofp.RawOFPT_ECHO_REPLY {
		t.Fatalf("got %v", m.Raw)
	}
	if m := p.readMsg(); m.Raw != ofp.RawOFPT_ECHO_REQUEST {
		t.Fatalf("got %v, want the probe", m.Raw)
	}
	if b := p.read(); b != nil {
		t.Fatalf("open after the unanswered probe, read %x", b)
	}
}
