package dummy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/datapath/packet"
)

// sendFrames transmits frames on d.
func sendFrames(t *testing.T, d *Device, frames ...[]byte) {
	t.Helper()
	pool := packet.NewPool(64)
	var b packet.Batch
	for _, f := range frames {
		p := pool.Get()
		p.SetData(f)
		b.Add(p)
	}
	if err := d.Send(0, &b, pool); err != nil {
		t.Fatal(err)
	}
}

// recvFrames receives until n frames arrived or a deadline passed.
func recvFrames(t *testing.T, d *Device, n int) [][]byte {
	t.Helper()
	pool := packet.NewPool(64)
	var got [][]byte
	for deadline := time.Now().Add(5 * time.Second); len(got) < n && time.Now().Before(deadline); {
		var b packet.Batch
		d.Recv(0, &b, pool)
		for _, p := range b.Slice() {
			got = append(got, append([]byte(nil), p.Data()...))
		}
		netdev.FreeBatch(&b, pool)
		time.Sleep(time.Millisecond)
	}
	return got
}

func waitState(t *testing.T, d *Device, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); d.ConnState() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("%s: conn-state %s, want %s", d.Name(), d.ConnState(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two ports joined by punix/unix carry each other's frames both ways,
// byte for byte and in order; the active side reports connected.
func TestStreamJoinsTwoPortsBothWays(t *testing.T) {
	dir := t.TempDir()
	a := open(t, Config{Name: "a"})
	b := open(t, Config{Name: "b"})
	if err := a.SetStreams("punix:ab.sock", "", dir); err != nil {
		t.Fatal(err)
	}
	if err := b.SetStreams("", "unix:"+filepath.Join(dir, "ab.sock"), ""); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, "connected")
	if a.ConnState() != "unknown" {
		t.Fatalf("passive port's conn-state %s", a.ConnState())
	}
	time.Sleep(20 * time.Millisecond) // the passive side has accepted
	var want [][]byte
	for i := 0; i < 10; i++ {
		want = append(want, frame(60+i, byte(i)))
	}
	sendFrames(t, a, want...)
	if got := recvFrames(t, b, 10); !equalFrames(got, want) {
		t.Fatalf("b received %d frames, want the 10 sent", len(got))
	}
	back := [][]byte{frame(100, 0xee)}
	sendFrames(t, b, back...)
	if got := recvFrames(t, a, 1); !equalFrames(got, back) {
		t.Fatalf("a received %x", got)
	}
	if p, s := b.Streams(); p != "" || s != "unix:"+filepath.Join(dir, "ab.sock") {
		t.Fatalf("streams %q %q", p, s)
	}
}

func equalFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// On the wire a frame is its 2-byte length and its bytes; a length
// shorter than an Ethernet header ends the connection, and the active
// side connects again.
func TestStreamFramingAndReconnectAfterAProtocolError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "peer.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := open(t, Config{Name: "p"})
	if err := d.SetStreams("", "unix:"+path, ""); err != nil {
		t.Fatal(err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, d, "connected")
	f := frame(64, 7)
	sendFrames(t, d, f)
	got := make([]byte, 66)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if binary.BigEndian.Uint16(got) != 64 || !bytes.Equal(got[2:], f) {
		t.Fatalf("on the wire: %x", got)
	}
	in := frame(70, 9)
	c.Write(append([]byte{0, 70}, in...))
	if r := recvFrames(t, d, 1); !equalFrames(r, [][]byte{in}) {
		t.Fatalf("received %x", r)
	}
	c.Write([]byte{0, 13}) // shorter than an Ethernet header
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after a 13-byte length the port kept the connection: %v", err)
	}
	c2, err := ln.Accept() // reconnected
	if err != nil {
		t.Fatal(err)
	}
	c2.Close()
}

// An active stream started before its listener exists keeps trying and
// connects once it appears.
func TestActiveStreamConnectsWhenTheListenerAppears(t *testing.T) {
	dir := t.TempDir()
	b := open(t, Config{Name: "b"})
	if err := b.SetStreams("", "unix:late.sock", dir); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if b.ConnState() != "disconnected" {
		t.Fatalf("conn-state %s before the listener exists", b.ConnState())
	}
	a := open(t, Config{Name: "a"})
	if err := a.SetStreams("punix:late.sock", "", dir); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, "connected")
}

func TestStreamConfigurationErrorsAreOpenVSwitchs(t *testing.T) {
	d := open(t, Config{Name: "p"})
	err := d.SetStreams("punix:/tmp/x", "unix:/tmp/y", "")
	if !errors.Is(err, ErrBothStreams) || err.Error() != "Open failed: both punix:/tmp/x and unix:/tmp/y are configured: "+ErrBothStreams.Error() {
		t.Fatalf("got %v", err)
	}
	if err := d.SetStreams("pfoo:bar", "", ""); err == nil || err.Error() != "pfoo:bar: open failed (Address family not supported by protocol)" {
		t.Fatalf("got %v", err)
	}
	if p, s := d.Streams(); p != "" || s != "" || d.ConnState() != "unknown" {
		t.Fatalf("after errors: %q %q %s", p, s, d.ConnState())
	}
}
