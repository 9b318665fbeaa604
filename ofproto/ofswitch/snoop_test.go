package ofswitch

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// readRaw reads one framed OpenFlow message.
func readRaw(t *testing.T, r *bufio.Reader) *ofp.Msg {
	t.Helper()
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, binary.BigEndian.Uint16(hdr[2:]))
	copy(b, hdr[:])
	if _, err := io.ReadFull(r, b[8:]); err != nil {
		t.Fatal(err)
	}
	m, err := ofp.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSnoopCopiesControllerTrafficAndDetaches connects a bridge to a
// controller, snoops on it through the snoop socket, and checks that the
// snooper gets the switch's hello and then both directions of a
// request/reply exchange, also after the controller reconnects; once the
// snooper leaves, the connection is untapped; removing the controller
// closes its snoop connections.
func TestSnoopCopiesControllerTrafficAndDetaches(t *testing.T) {
	dir := t.TempDir()
	b, err := New(Config{Name: "br0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	snoopPath := filepath.Join(dir, "br0.snoop")
	if err := b.ListenSnoop(snoopPath); err != nil {
		t.Fatal(err)
	}
	// Without a controller the snoop connection is closed at once.
	nc, err := net.Dial("unix", snoopPath)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := nc.Read(make([]byte, 8)); err == nil {
		t.Fatalf("snoop without a controller read %d bytes", n)
	}
	nc.Close()

	replies := make(chan *ofp.Msg, 8)
	srv := &ofconn.Server{Handler: ofconn.HandlerFunc(func(_ ofconn.Sender, m *ofp.Msg) { replies <- m }),
		Config: ofconn.Config{Versions: []uint8{4}}}
	ctlSock := filepath.Join(dir, "ctl.sock")
	if _, err := srv.Listen("punix:" + ctlSock); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b.SetConfig(Settings{Controllers: []string{"unix:" + ctlSock}})
	var ctl *ofconn.Conn
	for deadline := time.Now().Add(5 * time.Second); ctl == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cs := srv.Conns(); len(cs) == 1 {
			ctl = cs[0]
		}
	}
	if ctl == nil {
		t.Fatal("the bridge did not connect to the controller")
	}
	nc, err = net.Dial("unix", snoopPath)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	if m := readRaw(t, r); m.Raw != ofp.RawOFPT_HELLO {
		t.Fatalf("snoop socket sent %s first, want OFPT_HELLO", m.Raw)
	}
	hello, _ := ofp.Encode(nil, 1, 1, &ofp.Hello{})
	nc.Write(hello)
	target := "unix:" + ctlSock
	for deadline := time.Now().Add(5 * time.Second); !b.conns.Snooped(target); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the controller is not snooped")
		}
	}
	exchange := func(c *ofconn.Conn, xid uint32) {
		t.Helper()
		if err := c.Send(xid, &ofp.FeaturesRequest{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []ofp.Raw{ofp.RawOFPT_FEATURES_REQUEST, ofp.RawOFPT13_FEATURES_REPLY} {
			if m := readRaw(t, r); m.Raw != want || m.XID != xid || m.Version != 4 {
				t.Fatalf("snooper got %s (version %d, xid %#x), want %s (version 4, xid %#x)", m.Raw, m.Version, m.XID, want, xid)
			}
		}
	}
	exchange(ctl, 0x42)
	// The controller connection drops; the bridge reconnects and the
	// snooper, still attached to the target, sees the new connection.
	ctl.Close()
	var ctl2 *ofconn.Conn
	for deadline := time.Now().Add(5 * time.Second); ctl2 == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cs := srv.Conns(); len(cs) == 1 && cs[0] != ctl {
			ctl2 = cs[0]
		}
	}
	if ctl2 == nil {
		t.Fatal("the bridge did not reconnect to the controller")
	}
	exchange(ctl2, 0x43)
	nc.Close()
	for deadline := time.Now().Add(5 * time.Second); b.conns.Snooped(target); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the snooper's departure left it attached")
		}
	}
	// Removing the controller ends the snoop connections on it.
	nc, err = net.Dial("unix", snoopPath)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if m := readRaw(t, bufio.NewReader(nc)); m.Raw != ofp.RawOFPT_HELLO {
		t.Fatalf("snoop socket sent %s first, want OFPT_HELLO", m.Raw)
	}
	for deadline := time.Now().Add(5 * time.Second); !b.conns.Snooped(target); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second snooper was not attached")
		}
	}
	b.SetConfig(Settings{})
	if n, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatalf("snoop connection still open (read %d bytes) after the controller was removed", n)
	}
}

// TestSnoopConnectionsEndWithTheBridge: closing the bridge closes the
// snoop connections on its controllers.
func TestSnoopConnectionsEndWithTheBridge(t *testing.T) {
	dir := t.TempDir()
	b, err := New(Config{Name: "br0"})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			b.Close()
		}
	}()
	snoopPath := filepath.Join(dir, "br0.snoop")
	if err := b.ListenSnoop(snoopPath); err != nil {
		t.Fatal(err)
	}
	srv := &ofconn.Server{Handler: ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {})}
	ctlSock := filepath.Join(dir, "ctl.sock")
	if _, err := srv.Listen("punix:" + ctlSock); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	b.SetConfig(Settings{Controllers: []string{"unix:" + ctlSock}})
	for deadline := time.Now().Add(5 * time.Second); len(srv.Conns()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the bridge did not connect to the controller")
		}
	}
	nc, err := net.Dial("unix", snoopPath)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	if m := readRaw(t, r); m.Raw != ofp.RawOFPT_HELLO {
		t.Fatalf("snoop socket sent %s first, want OFPT_HELLO", m.Raw)
	}
	b.Close()
	closed = true
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("after the bridge closed, the snoop connection read %v, want EOF", err)
	}
}
