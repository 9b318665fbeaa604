package ofconn

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Errors returned by Sender methods and the handshake.
var (
	ErrClosed       = errors.New("ofconn: connection closed")
	ErrIncompatible = errors.New("ofconn: no common OpenFlow version")
	ErrFraming      = errors.New("ofconn: message length shorter than the OpenFlow header")
)

const (
	headerLen       = 8
	errorDataMax    = 64 // bytes of the offending message echoed in OFPT_ERROR, as Open vSwitch
	defaultQueueLen = 100
	writeBufSize    = 64 << 10 // bytes the writer may hold beyond the queue
	minVersion      = 1
	maxVersion      = 6
)

// Config is the per-connection behaviour shared by Server and Client.
type Config struct {
	// Versions are the OpenFlow wire versions allowed (1 = OF1.0 ... 6 =
	// OF1.5); empty means all six.
	Versions []uint8
	// ProbeInterval is the inactivity probe: after that long without a
	// received message an echo request is sent, and after twice that the
	// connection is closed. Zero disables the probe (the default, as for
	// Open vSwitch's punix management connections).
	ProbeInterval time.Duration
	// Probe, if set, overrides ProbeInterval and is asked again each time
	// the connection waits for a message, so that a changed setting
	// (Controller.inactivity_probe) applies to connections already up.
	Probe func(c *Conn) time.Duration
	// QueueLen bounds the send queue in messages; zero means 100. The
	// writer additionally buffers up to 64 KiB while the socket is slow.
	QueueLen int
	// OnClose, if set, is called once when a connection closes, with the
	// reason (nil after a clean close by either side).
	OnClose func(s Sender, err error)
	// Debug, if set, sees every message the connection sends and
	// receives, hellos included, and its version negotiation (Open
	// vSwitch's vconn debug log).
	Debug Debugger
}

// Debugger logs a connection's messages. Enabled is asked before each
// message, so a logger that is off costs one call.
type Debugger interface {
	Enabled() bool
	// Message is a message sent or received on the connection named
	// name ("unix#3", "tcp:10.0.0.1:6653").
	Message(name string, sent bool, b []byte)
	// Negotiated reports the version chosen from the two sides' version
	// bitmaps, in Open vSwitch's words.
	Negotiated(name string, version uint8, local, peer string)
}

func (c *Config) bitmap() uint32 {
	if len(c.Versions) == 0 {
		return versionsUpTo(maxVersion)
	}
	var bm uint32
	for _, v := range c.Versions {
		if v >= minVersion && v <= maxVersion {
			bm |= 1 << v
		}
	}
	return bm
}

func (c *Config) queueLen() int {
	if c.QueueLen > 0 {
		return c.QueueLen
	}
	return defaultQueueLen
}

// versionsUpTo is the bitmap a hello without a bitmap element implies:
// every version from 1 through v.
func versionsUpTo(v uint8) uint32 {
	if v >= 31 {
		return ^uint32(1)
	}
	return (uint32(1)<<(v+1) - 1) &^ 1
}

func highest(bm uint32) uint8 { return uint8(31 - bits.LeadingZeros32(bm)) }

// bitmapString formats a version set as Open vSwitch does in its
// negotiation messages.
func bitmapString(bm uint32) string {
	switch {
	case bm == 0:
		return "no versions"
	case bm&(bm-1) == 0:
		return fmt.Sprintf("version 0x%02x", highest(bm))
	case (bm>>1+1)&(bm>>1) == 0:
		return fmt.Sprintf("version 0x%02x and earlier", highest(bm))
	}
	var parts []string
	for v := 0; v < 32; v++ {
		if bm&(1<<v) != 0 {
			parts = append(parts, fmt.Sprintf("0x%02x", v))
		}
	}
	return "versions " + strings.Join(parts, ", ")
}

// IncompatibleText is the OFPHFC_INCOMPATIBLE error text Open vSwitch
// sends when the local and peer version sets do not intersect.
func IncompatibleText(local, peer uint32) string {
	s := fmt.Sprintf("We support %s, you support %s, no common versions.", bitmapString(local), bitmapString(peer))
	if len(s) > 127 { // Open vSwitch formats into a 128-byte buffer
		s = s[:127]
	}
	return s
}

// Role is the controller role of a connection (OFPCR_ROLE_*); kept for
// the switch layer, not interpreted here: role-based filtering of
// requests and asynchronous messages is the handler's job.
type Role uint32

// Controller roles.
const (
	RoleEqual  Role = 1
	RoleMaster Role = 2
	RoleSlave  Role = 3
)

// State is mutable per-connection protocol state owned by the handler
// layer. It is safe for concurrent use.
type State struct {
	role           atomic.Uint32
	packetInFormat atomic.Uint32
	mu             sync.Mutex
	async          AsyncConfig
	asyncSet       bool
}

// AsyncConfig is the asynchronous-message configuration of a connection
// (OFPT_SET_ASYNC / NXT_SET_ASYNC_CONFIG): per message kind, a reason
// bitmask for the master/equal role (index 0) and the slave role (index 1).
type AsyncConfig struct {
	PacketIn, PortStatus, FlowRemoved [2]uint32
}

// AsyncConfig returns the configuration and whether one was ever set
// (callers apply the Open vSwitch defaults when it was not).
func (s *State) AsyncConfig() (AsyncConfig, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.async, s.asyncSet
}

// SetAsyncConfig records the asynchronous-message configuration.
func (s *State) SetAsyncConfig(c AsyncConfig) {
	s.mu.Lock()
	s.async, s.asyncSet = c, true
	s.mu.Unlock()
}

// Role returns the connection's controller role (RoleEqual initially).
func (s *State) Role() Role {
	if r := Role(s.role.Load()); r != 0 {
		return r
	}
	return RoleEqual
}

// SetRole records the controller role.
func (s *State) SetRole(r Role) { s.role.Store(uint32(r)) }

// PacketInFormat returns the NXPIF_* packet-in format (0, standard, by default).
func (s *State) PacketInFormat() uint32 { return s.packetInFormat.Load() }

// SetPacketInFormat records the packet-in format.
func (s *State) SetPacketInFormat(f uint32) { s.packetInFormat.Store(f) }

// Sender is a handler's view of a connection, like net/http's
// ResponseWriter. Implementations are safe for concurrent use.
type Sender interface {
	// Version is the negotiated OpenFlow wire version.
	Version() uint8
	// Send queues m with transaction ID xid in the negotiated version. It
	// blocks while the send queue is full and returns ErrClosed once the
	// connection is closed.
	Send(xid uint32, m ofp.Message) error
	// Reply sends m with req's transaction ID.
	Reply(req *ofp.Msg, m ofp.Message) error
	// ReplyError sends an OFPT_ERROR for req carrying code and the start
	// of req's encoding.
	ReplyError(req *ofp.Msg, code ofp.ErrCode) error
	// State is the connection's role and format state.
	State() *State
	// Close closes the connection.
	Close() error
}

// Handler serves the messages of a connection. ServeOpenFlow is called
// once per message, in order, never concurrently for one connection.
// The Msg is not reused after the call returns, but a flow_mod's body is
// (ofp.DecodeWith) and parts of bodies alias the read buffer: a handler
// that keeps a body past the call copies what it keeps.
type Handler interface {
	ServeOpenFlow(s Sender, m *ofp.Msg)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(s Sender, m *ofp.Msg)

// ServeOpenFlow calls f(s, m).
func (f HandlerFunc) ServeOpenFlow(s Sender, m *ofp.Msg) { f(s, m) }

// Conn is one OpenFlow channel after its hello exchange.
type Conn struct {
	nc net.Conn
	// listener is the listener that accepted the connection (nil for
	// active ones); set before the connection runs.
	listener net.Listener
	cfg      *Config
	h        Handler
	version  uint8
	peer     uint32 // peer's version bitmap
	state    State
	// scratch is reused by the read loop's decodes (dispatch).
	scratch ofp.Scratch
	// name is the connection's name in debug logs.
	name string

	queue chan []byte
	// wmu guards bw; pending counts messages queued but not yet written.
	// A send with nothing pending writes directly (no hand-off to the
	// writer goroutine: one wake-up fewer per reply); otherwise it queues
	// behind the pending ones, so order is kept.
	wmu       sync.Mutex
	bw        *bufio.Writer
	pending   atomic.Int64
	done      chan struct{}
	closeOnce sync.Once
	mu        sync.Mutex
	err       error
	xid       atomic.Uint32
	wdone     chan struct{}
	// tap, if set, sees every message sent or received (snooping).
	tap atomic.Pointer[func([]byte)]
	// mp holds multipart requests whose parts (sent with OFPSF_REQ_MORE)
	// have not all arrived, by xid; mpBytes is their total size. The
	// reader goroutine adds and completes them, timers expire them.
	mpMu sync.Mutex
	// guarded by mpMu
	mp map[uint32]*partialRequest
	// guarded by mpMu
	mpBytes int
}

// SetTap makes f see every message the connection sends or receives
// from now on, after the hello exchange, in the order each direction
// queues or reads them; nil stops it. f runs on the sending or reading
// goroutine: it must not block or modify b, and must copy b to keep it.
// Without a tap the cost is one atomic load per message.
func (c *Conn) SetTap(f func(b []byte)) {
	if f == nil {
		c.tap.Store(nil)
		return
	}
	c.tap.Store(&f)
}

var _ Sender = (*Conn)(nil)

// Version returns the negotiated wire version.
func (c *Conn) Version() uint8 { return c.version }

// PeerVersions returns the peer's advertised version bitmap (bit v set
// for version v).
func (c *Conn) PeerVersions() uint32 { return c.peer }

// State returns the per-connection state.
func (c *Conn) State() *State { return &c.state }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// Listener returns the listener that accepted the connection, or nil for
// a connection this side opened.
func (c *Conn) Listener() net.Listener { return c.listener }

// Done is closed when the connection has closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection closed (nil while open or after a clean
// close).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// NextXID returns a fresh transaction ID for a request this side starts.
func (c *Conn) NextXID() uint32 { return c.xid.Add(1) }

// Send implements Sender.
func (c *Conn) Send(xid uint32, m ofp.Message) error {
	b, err := ofp.Encode(make([]byte, 0, 64), c.version, xid, m)
	if err != nil {
		return fmt.Errorf("ofconn: encoding reply: %w", err)
	}
	return c.SendRaw(b)
}

// SendRaw queues an already encoded message (b is not copied; the caller
// must not modify it afterwards). Blocking as Send.
func (c *Conn) SendRaw(b []byte) error {
	select {
	case <-c.done:
		return ErrClosed
	default:
	}
	if tap := c.tap.Load(); tap != nil {
		(*tap)(b)
	}
	if d := c.cfg.Debug; d != nil && d.Enabled() {
		d.Message(c.name, true, b)
	}
	if c.pending.Load() == 0 && c.wmu.TryLock() {
		if c.pending.Load() == 0 {
			_, err := c.bw.Write(b)
			if err == nil {
				err = c.bw.Flush()
			}
			c.wmu.Unlock()
			if err != nil {
				c.shutdown(fmt.Errorf("ofconn: writing: %w", err))
				return ErrClosed
			}
			return nil
		}
		c.wmu.Unlock()
	}
	c.pending.Add(1)
	select {
	case c.queue <- b:
		return nil
	case <-c.done:
		c.pending.Add(-1)
		return ErrClosed
	}
}

// Reply implements Sender.
func (c *Conn) Reply(req *ofp.Msg, m ofp.Message) error { return c.Send(req.XID, m) }

// ReplyError implements Sender. The error carries the whole request, as
// Open vSwitch's replies to messages it decoded but could not apply do.
func (c *Conn) ReplyError(req *ofp.Msg, code ofp.ErrCode) error {
	data, _ := ofp.EncodeMsg(nil, req)
	b, err := ofp.Encode(nil, req.Version, req.XID, ofp.NewErrorMsg(req.Version, code, data))
	if err != nil {
		return c.sendError(req.Version, req.XID, code, data)
	}
	return c.SendRaw(b)
}

func (c *Conn) sendError(v uint8, xid uint32, code ofp.ErrCode, data []byte) error {
	if len(data) > errorDataMax {
		data = data[:errorDataMax]
	}
	b, err := ofp.Encode(nil, v, xid, ofp.NewErrorMsg(v, code, append([]byte(nil), data...)))
	if err != nil {
		return fmt.Errorf("ofconn: encoding %s: %w", code, err)
	}
	return c.SendRaw(b)
}

// Close closes the connection; queued messages not yet written are
// dropped.
func (c *Conn) Close() error {
	c.shutdown(nil)
	return nil
}

func (c *Conn) shutdown(err error) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
		c.nc.Close()
	})
}

// writer drains the send queue, flushing when it runs empty so bursts
// share system calls.
func (c *Conn) writer() {
	defer close(c.wdone)
	for {
		select {
		case b := <-c.queue:
			c.wmu.Lock()
			_, err := c.bw.Write(b)
			c.pending.Add(-1)
			if err == nil && len(c.queue) == 0 {
				err = c.bw.Flush()
			}
			c.wmu.Unlock()
			if err != nil {
				c.shutdown(fmt.Errorf("ofconn: writing: %w", err))
				return
			}
		case <-c.done:
			return
		}
	}
}

// readMsg reads one framed message into buf (grown as needed).
func readMsg(r *bufio.Reader, buf []byte) ([]byte, error) {
	hdr, err := r.Peek(headerLen)
	if err != nil {
		if errors.Is(err, io.EOF) && len(hdr) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return buf, err
	}
	n := int(binary.BigEndian.Uint16(hdr[2:4]))
	if n < headerLen {
		return buf, fmt.Errorf("%w (%d bytes)", ErrFraming, n)
	}
	if cap(buf) < n {
		buf = make([]byte, n, 65535)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return buf, err
	}
	return buf, nil
}

// handshake sends our hello, reads the peer's and negotiates. On no
// common version it sends OFPHFC_INCOMPATIBLE and returns ErrIncompatible.
func handshake(ctx context.Context, nc net.Conn, cfg *Config, h Handler, name string) (*Conn, *bufio.Reader, error) {
	local := cfg.bitmap()
	if local == 0 {
		return nil, nil, errors.New("ofconn: no valid versions configured")
	}
	c := &Conn{nc: nc, cfg: cfg, h: h, name: name, queue: make(chan []byte, cfg.queueLen()),
		done: make(chan struct{}), wdone: make(chan struct{}), bw: bufio.NewWriterSize(nc, writeBufSize)}
	var vs []uint8
	for v := uint8(minVersion); v <= maxVersion; v++ {
		if local&(1<<v) != 0 {
			vs = append(vs, v)
		}
	}
	hello, err := ofp.Encode(nil, highest(local), c.NextXID(), ofp.NewHello(vs...))
	if err != nil {
		return nil, nil, fmt.Errorf("ofconn: encoding hello: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
		defer nc.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	debug := cfg.Debug
	if debug != nil && !debug.Enabled() {
		debug = nil
	}
	if debug != nil {
		debug.Message(name, true, hello)
	}
	if _, err := nc.Write(hello); err != nil {
		return nil, nil, fmt.Errorf("ofconn: sending hello: %w", err)
	}
	r := bufio.NewReaderSize(nc, 64<<10)
	b, err := readMsg(r, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("ofconn: receiving hello: %w", err)
	}
	if debug != nil {
		debug.Message(name, false, b)
	}
	m, err := ofp.Decode(b)
	if err != nil || m.Raw != ofp.RawOFPT_HELLO {
		return nil, nil, fmt.Errorf("ofconn: received message while expecting hello (%d bytes, type %d)", len(b), b[1])
	}
	peer := versionsUpTo(m.Version)
	if vs := m.Body.(*ofp.Hello).Versions(); vs != nil {
		peer = 0
		for _, v := range vs {
			if v < 32 {
				peer |= 1 << v
			}
		}
	}
	c.peer = peer
	common := peer & local
	if common == 0 {
		v := uint8(1)
		if peer != 0 {
			v = highest(peer)
		}
		text := IncompatibleText(local, peer)
		if e, err := ofp.Encode(nil, v, 0, ofp.NewErrorMsg(v, ofp.OFPHFC_INCOMPATIBLE, []byte(text))); err == nil {
			nc.Write(e)
		}
		return nil, nil, fmt.Errorf("%w (we support %s, peer supports %s)", ErrIncompatible, bitmapString(local), bitmapString(peer))
	}
	c.version = highest(common)
	if debug != nil {
		debug.Negotiated(name, c.version, bitmapString(local), bitmapString(peer))
	}
	return c, r, nil
}

// run starts the writer and serves messages until the connection closes.
func (c *Conn) run(r *bufio.Reader) {
	go c.writer()
	err := c.readLoop(r)
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = nil
	}
	c.shutdown(err)
	<-c.wdone
	if c.cfg.OnClose != nil {
		c.cfg.OnClose(c, c.Err())
	}
}

// probeInterval is the connection's inactivity probe now.
func (c *Conn) probeInterval() time.Duration {
	if c.cfg.Probe != nil {
		return c.cfg.Probe(c)
	}
	return c.cfg.ProbeInterval
}

// readLoop reads and dispatches messages. With an inactivity probe, as
// Open vSwitch's rconn: after the interval without receiving anything an
// echo request goes out, and after as long again the connection is
// closed.
func (c *Conn) readLoop(r *bufio.Reader) error {
	probing := false
	var buf []byte
	for {
		probe := c.probeInterval()
		if probe > 0 {
			c.nc.SetReadDeadline(time.Now().Add(probe))
		} else {
			c.nc.SetReadDeadline(time.Time{})
		}
		var err error
		buf, err = readMsg(r, buf)
		if err != nil {
			var ne net.Error
			if probe > 0 && errors.As(err, &ne) && ne.Timeout() {
				if probing {
					return fmt.Errorf("ofconn: no response to inactivity probe after %v", 2*probe)
				}
				probing = true
				if err := c.Send(c.NextXID(), &ofp.EchoRequest{}); err != nil {
					return err
				}
				continue
			}
			select {
			case <-c.done:
				return nil
			default:
			}
			return err
		}
		probing = false
		c.dispatch(buf)
	}
}

// dispatch handles one framed message: echo and version checks here,
// decode errors answered with OFPT_ERROR, everything else to the handler.
func (c *Conn) dispatch(b []byte) {
	if tap := c.tap.Load(); tap != nil {
		(*tap)(b)
	}
	if d := c.cfg.Debug; d != nil && d.Enabled() {
		d.Message(c.name, false, b)
	}
	v, xid := b[0], binary.BigEndian.Uint32(b[4:8])
	m, err := ofp.DecodeWith(b, &c.scratch)
	if err != nil {
		code := ofp.CodeOf(err)
		if code == 0 {
			code = ofp.OFPBRC_BAD_TYPE
		}
		c.sendError(v, xid, code, b)
		return
	}
	switch m.Raw {
	case ofp.RawOFPT_ECHO_REQUEST:
		// In the request's version, whatever was negotiated, as Open
		// vSwitch's ofputil_encode_echo_reply.
		if r, err := ofp.Encode(make([]byte, 0, 64), v, m.XID, &ofp.EchoReply{Data: m.Body.(*ofp.EchoRequest).Data}); err == nil {
			c.SendRaw(r)
		}
		return
	case ofp.RawOFPT_HELLO:
		return
	case ofp.RawOFPT_ERROR, ofp.RawOFPT_ECHO_REPLY:
		// Passed on in any version, as Open vSwitch does; echo replies
		// matter to active sides that measure round trips.
	default:
		if v != c.version {
			c.sendError(v, xid, ofp.OFPBRC_BAD_VERSION, b)
			return
		}
	}
	if m = c.assemble(b, m); m == nil {
		return
	}
	c.h.ServeOpenFlow(c, m)
}

// maxMultipartBytes bounds the parts of unfinished multipart requests a
// connection buffers; past it the request fails with
// OFPBRC_MULTIPART_BUFFER_OVERFLOW. 4 MiB as Open vSwitch: a table
// features request that renames a table lists every table with all its
// properties, well over 1 MiB.
const maxMultipartBytes = 4 << 20

// multipartTimeout is how long the parts of a multipart request wait for
// the last one before the request fails with
// OFPBRC_MULTIPART_REQUEST_TIMEOUT (one second, as in Open vSwitch).
const multipartTimeout = time.Second

// partialRequest is the parts of a multipart request received so far.
type partialRequest struct {
	parts [][]byte // copies of the framed parts
	bytes int
	timer *time.Timer
}

// assemble collects the parts of an OpenFlow 1.3+ multipart request sent
// with OFPSF_REQ_MORE and returns the whole request once its last part
// (same xid, no REQ_MORE) arrives; m itself when it is not part of one;
// nil while parts are missing or after an error has been sent.
func (c *Conn) assemble(b []byte, m *ofp.Msg) *ofp.Msg {
	more := ofp.IsMultipartRequestMore(b)
	c.mpMu.Lock()
	p := c.mp[m.XID]
	if p == nil && !more {
		c.mpMu.Unlock()
		return m
	}
	if p == nil {
		if c.mp == nil {
			c.mp = map[uint32]*partialRequest{}
		}
		p = &partialRequest{}
		c.mp[m.XID] = p
		xid := m.XID
		p.timer = time.AfterFunc(multipartTimeout, func() { c.expireParts(xid, p) })
	}
	p.parts = append(p.parts, append([]byte(nil), b...))
	p.bytes += len(b)
	c.mpBytes += len(b)
	overflow := c.mpBytes > maxMultipartBytes
	if overflow || !more {
		c.dropPartsLocked(m.XID)
	}
	c.mpMu.Unlock()
	switch {
	case overflow:
		c.sendError(b[0], m.XID, ofp.OFPBRC_MULTIPART_BUFFER_OVERFLOW, b)
		return nil
	case more:
		return nil
	}
	whole, err := ofp.MergeMultipartRequest(p.parts)
	if err != nil {
		c.sendError(b[0], m.XID, ofp.CodeOf(err), b)
		return nil
	}
	return whole
}

// expireParts fails request xid if p is still waiting for parts.
func (c *Conn) expireParts(xid uint32, p *partialRequest) {
	c.mpMu.Lock()
	if c.mp[xid] != p {
		c.mpMu.Unlock()
		return
	}
	c.dropPartsLocked(xid)
	c.mpMu.Unlock()
	first := p.parts[0]
	c.sendError(first[0], xid, ofp.OFPBRC_MULTIPART_REQUEST_TIMEOUT, first)
}

// dropPartsLocked forgets the buffered parts of request xid.
//
// Preconditions: c.mpMu is held.
func (c *Conn) dropPartsLocked(xid uint32) {
	if p := c.mp[xid]; p != nil {
		p.timer.Stop()
		c.mpBytes -= p.bytes
		delete(c.mp, xid)
	}
}
