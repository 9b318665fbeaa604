package ofconn

import (
	"bufio"
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

func TestBitmapStringMatchesOVS(t *testing.T) {
	for _, tc := range []struct {
		bm   uint32
		want string
	}{
		{0, "no versions"},
		{1 << 4, "version 0x04"},
		{versionsUpTo(4), "version 0x04 and earlier"},
		{1<<1 | 1<<4 | 1<<5, "versions 0x01, 0x04, 0x05"},
	} {
		if got := bitmapString(tc.bm); got != tc.want {
			t.Errorf("bitmapString(%#x) = %q, want %q", tc.bm, got, tc.want)
		}
	}
	if got, want := IncompatibleText(1<<4, versionsUpTo(1)), "We support version 0x04, you support version 0x01, no common versions."; got != want {
		t.Errorf("IncompatibleText = %q, want %q", got, want)
	}
}

// pipeConn handshakes a Conn over net.Pipe, whose writes block until the
// peer reads: the peer below reads only the hello.
func pipeConn(t *testing.T, cfg Config, h Handler) (*Conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	go func() {
		hello, _ := ofp.Encode(nil, 4, 1, &ofp.Hello{})
		r := bufio.NewReader(b)
		if _, err := readMsg(r, nil); err != nil {
			return
		}
		b.Write(hello)
	}()
	c, r, err := handshake(context.Background(), a, &cfg, h, "test")
	if err != nil {
		t.Fatal(err)
	}
	go c.run(r)
	return c, b
}

func TestSendBlocksWhenQueueFullAndFailsAfterClose(t *testing.T) {
	const queueLen = 2
	c, _ := pipeConn(t, Config{QueueLen: queueLen}, HandlerFunc(func(Sender, *ofp.Msg) {}))
	var n atomic.Int64
	result := make(chan error, 1)
	go func() {
		for range 100000 {
			if err := c.Send(7, &ofp.BarrierReply{}); err != nil {
				result <- err
				return
			}
			n.Add(1)
		}
		result <- nil
	}()
	// The peer never reads: Send must stop once the queue and the
	// writer's buffer (writeBufSize bytes of 8-byte messages) are full.
	bound := int64(queueLen + writeBufSize/8 + 1)
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-result:
		t.Fatalf("Send never blocked (returned %v after %d messages)", err, n.Load())
	default:
	}
	if got := n.Load(); got > bound {
		t.Fatalf("%d messages accepted with a stalled peer, bound is %d", got, bound)
	}
	c.Close()
	select {
	case err := <-result:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("blocked send returned %v after close, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("blocked send did not return after close")
	}
	if err := c.Send(8, &ofp.BarrierReply{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("send after close: %v", err)
	}
}

func TestVersionsUpTo(t *testing.T) {
	if got := versionsUpTo(1); got != 0b10 {
		t.Fatalf("versionsUpTo(1) = %b", got)
	}
	if got := versionsUpTo(6); got != 0b1111110 {
		t.Fatalf("versionsUpTo(6) = %b", got)
	}
}

// FuzzConnInput feeds arbitrary bytes after a hello: the connection must
// never panic, whatever the peer sends.
func FuzzConnInput(f *testing.F) {
	f.Add([]byte{4, 0xfe, 0, 8, 0, 0, 0, 9})
	f.Add([]byte{4, 2, 0, 12, 0, 0, 0, 1, 'a', 'b', 'c', 'd'})
	f.Add([]byte{1, 5, 0, 8, 0, 0, 0, 1, 4, 14, 0, 4})
	f.Add([]byte{4, 14, 0, 56, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, b := net.Pipe()
		defer b.Close()
		cfg := Config{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c, r, err := handshake(context.Background(), a, &cfg, HandlerFunc(func(s Sender, m *ofp.Msg) {
				s.ReplyError(m, ofp.OFPBRC_EPERM)
			}), "test")
			if err != nil {
				a.Close()
				return
			}
			c.run(r)
		}()
		go func() { // drain everything the connection writes
			buf := make([]byte, 4096)
			for {
				if _, err := b.Read(buf); err != nil {
					return
				}
			}
		}()
		hello, _ := ofp.Encode(nil, 4, 1, &ofp.Hello{})
		b.Write(hello)
		b.Write(in)
		b.Close()
		<-done
	})
}

func TestStateDefaultsAndUpdates(t *testing.T) {
	var s State
	if s.Role() != RoleEqual || s.PacketInFormat() != 0 {
		t.Fatalf("defaults role %d format %d", s.Role(), s.PacketInFormat())
	}
	if _, set := s.AsyncConfig(); set {
		t.Fatal("async config reported set before SetAsyncConfig")
	}
	s.SetRole(RoleSlave)
	s.SetPacketInFormat(2)
	want := AsyncConfig{PacketIn: [2]uint32{3, 0}}
	s.SetAsyncConfig(want)
	if got, set := s.AsyncConfig(); s.Role() != RoleSlave || s.PacketInFormat() != 2 || !set || got != want {
		t.Fatalf("state role %d format %d async %+v %v", s.Role(), s.PacketInFormat(), got, set)
	}
}
