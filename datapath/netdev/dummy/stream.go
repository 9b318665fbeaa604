package dummy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Streams join dummy ports of different switches (two gvs processes, or
// gvs and Open vSwitch) as netdev-dummy's options:pstream and
// options:stream do: every frame a port transmits is written to its
// streams, every frame read from them is received on the port (rx queue
// 0). A frame travels as a 2-byte big-endian length and the frame; a
// length below an Ethernet header ends the connection, as Open vSwitch
// ends it with EPROTO. Each stream keeps at most streamQueue frames
// waiting to be written and drops the rest. A passive port (pstream)
// accepts any number of connections and writes to all of them; an
// active one (stream) connects and reconnects, waiting 100 ms after a
// failure and twice as long after each further one, as Open vSwitch's
// reconnect does for it.
const (
	streamQueue      = 100
	reconnectBackoff = 100 * time.Millisecond
	maxBackoff       = time.Duration(1<<31-1) * time.Millisecond
	ethHeaderLen     = 14
)

// streams is a port's stream configuration and connections.
type streams struct {
	pstream, stream string // as configured (empty when unset)
	ln              net.Listener
	connected       atomic.Bool // active: a connection is up

	mu    sync.Mutex
	conns map[*streamConn]struct{}
	stop  chan struct{}
	wg    sync.WaitGroup
}

type streamConn struct {
	c  net.Conn
	tx chan []byte
}

// ErrBothStreams is SetStreams' refusal of a pstream and a stream at
// once; Open vSwitch logs it as "Open failed: both P and S are
// configured" and leaves the port without streams.
var ErrBothStreams = errors.New("both a pstream and a stream are configured")

// SetStreams applies options:pstream and options:stream (either may be
// empty). dir resolves relative unix socket paths, as Open vSwitch
// resolves them against its run directory. Setting what is already set
// changes nothing; anything else closes the old streams first. A
// pstream that cannot listen is an error (the port keeps no streams);
// an active stream that cannot connect yet keeps trying.
func (d *Device) SetStreams(pstream, stream, dir string) error {
	d.streamMu.Lock()
	defer d.streamMu.Unlock()
	old := d.streams.Load()
	if old != nil && old.pstream == pstream && old.stream == stream {
		return nil
	}
	if old != nil {
		d.streams.Store(nil)
		old.close()
	}
	if pstream != "" && stream != "" {
		return fmt.Errorf("Open failed: both %s and %s are configured: %w", pstream, stream, ErrBothStreams)
	}
	if pstream == "" && stream == "" {
		return nil
	}
	s := &streams{pstream: pstream, stream: stream, conns: map[*streamConn]struct{}{}, stop: make(chan struct{})}
	if pstream != "" {
		network, addr, err := streamAddr(pstream, dir, true)
		if err != nil {
			return err
		}
		if s.ln, err = net.Listen(network, addr); err != nil {
			return fmt.Errorf("%s: open failed (%w)", pstream, err)
		}
		s.wg.Add(1)
		go s.accept(d)
	} else {
		network, addr, err := streamAddr(stream, dir, false)
		if err != nil {
			return err
		}
		s.wg.Add(1)
		go s.connect(d, network, addr)
	}
	d.streams.Store(s)
	return nil
}

// ConnState is netdev-dummy/conn-state's word for the port: "connected"
// or "disconnected" for an active stream, "unknown" otherwise.
func (d *Device) ConnState() string {
	s := d.streams.Load()
	switch {
	case s == nil || s.stream == "":
		return "unknown"
	case s.connected.Load():
		return "connected"
	}
	return "disconnected"
}

// Streams returns the configured pstream and stream.
func (d *Device) Streams() (pstream, stream string) {
	if s := d.streams.Load(); s != nil {
		return s.pstream, s.stream
	}
	return "", ""
}

// streamAddr parses an Open vSwitch stream name: unix:PATH and tcp:IP:PORT
// (active), punix:PATH and ptcp:PORT[:IP] (passive).
func streamAddr(name, dir string, passive bool) (network, addr string, err error) {
	kind, rest, ok := strings.Cut(name, ":")
	if passive {
		kind = strings.TrimPrefix(kind, "p")
		if !strings.HasPrefix(name, "p") {
			ok = false
		}
	}
	switch {
	case ok && kind == "unix" && rest != "":
		if !filepath.IsAbs(rest) && dir != "" {
			rest = filepath.Join(dir, rest)
		}
		return "unix", rest, nil
	case ok && kind == "tcp" && passive:
		port, ip, _ := strings.Cut(rest, ":")
		return "tcp", net.JoinHostPort(ip, port), nil
	case ok && kind == "tcp":
		if i := strings.LastIndex(rest, ":"); i > 0 {
			return "tcp", net.JoinHostPort(strings.Trim(rest[:i], "[]"), rest[i+1:]), nil
		}
	}
	return "", "", fmt.Errorf("%s: open failed (Address family not supported by protocol)", name)
}

func (s *streams) accept(d *Device) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		sc := s.add(c)
		if sc == nil {
			c.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(d, sc)
		}()
	}
}

func (s *streams) connect(d *Device, network, addr string) {
	defer s.wg.Done()
	backoff := reconnectBackoff
	for {
		c, err := net.DialTimeout(network, addr, time.Second)
		if err == nil {
			if sc := s.add(c); sc != nil {
				start := time.Now()
				s.connected.Store(true)
				s.serve(d, sc)
				s.connected.Store(false)
				if time.Since(start) >= backoff {
					backoff = reconnectBackoff
				}
			} else {
				c.Close()
			}
		}
		select {
		case <-s.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// add registers a connection unless the streams are closing.
func (s *streams) add(c net.Conn) *streamConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.stop:
		return nil
	default:
	}
	sc := &streamConn{c: c, tx: make(chan []byte, streamQueue)}
	s.conns[sc] = struct{}{}
	return sc
}

// serve writes queued frames and reads received ones until either side
// fails; received frames are injected into d.
func (s *streams) serve(d *Device, sc *streamConn) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := bufio.NewWriter(sc.c)
		for f := range sc.tx {
			if _, err := w.Write(f); err != nil {
				sc.c.Close()
				return
			}
			if len(sc.tx) == 0 {
				if err := w.Flush(); err != nil {
					sc.c.Close()
					return
				}
			}
		}
	}()
	r := bufio.NewReader(sc.c)
	var hdr [2]byte
	buf := make([]byte, 0, 2048)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		n := int(binary.BigEndian.Uint16(hdr[:]))
		if n < ethHeaderLen {
			break // EPROTO
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			break
		}
		d.Inject(buf)
	}
	sc.c.Close()
	s.mu.Lock()
	delete(s.conns, sc)
	close(sc.tx)
	s.mu.Unlock()
	<-done
}

// send queues a frame (with its length) on every connection, dropping it
// where a queue is full.
func (s *streams) send(f []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 || len(f) > 0xffff {
		return
	}
	b := make([]byte, 2+len(f))
	binary.BigEndian.PutUint16(b, uint16(len(f)))
	copy(b[2:], f)
	for sc := range s.conns {
		select {
		case sc.tx <- b:
		default:
		}
	}
}

// close stops accepting and connecting and ends every connection.
func (s *streams) close() {
	s.mu.Lock()
	close(s.stop)
	for sc := range s.conns {
		sc.c.Close()
	}
	s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close()
	}
	s.wg.Wait()
}
