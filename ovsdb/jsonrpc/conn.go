package jsonrpc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxDepth is the deepest JSON nesting accepted, as in Open vSwitch's parser.
const MaxDepth = 1000

// DefaultMaxMessageSize bounds one message unless Conn.MaxMessageSize says
// otherwise. Large OVSDB transactions and snapshots fit comfortably.
const DefaultMaxMessageSize = 64 << 20

// Errors returned by Recv for streams that cannot be framed.
var (
	ErrTooDeep   = errors.New("jsonrpc: message nested too deeply")
	ErrTooLarge  = errors.New("jsonrpc: message too large")
	ErrNotObject = errors.New("jsonrpc: message is not a JSON object")
)

// Conn sends and receives messages on a byte stream.
type Conn struct {
	// MaxMessageSize bounds each received message; 0 means
	// DefaultMaxMessageSize. Set it before the first Recv.
	MaxMessageSize int

	rwc  io.ReadWriteCloser
	r    *bufio.Reader
	buf  []byte  // the message being framed; reused
	scan scanner // checks the message's syntax as it is framed

	mu   sync.Mutex // serialises writers
	wbuf []byte     // guarded by mu
}

// NewConn wraps a stream.
func NewConn(rwc io.ReadWriteCloser) *Conn {
	return &Conn{rwc: rwc, r: bufio.NewReaderSize(rwc, 64<<10)}
}

// Close closes the stream; a blocked Recv returns an error.
func (c *Conn) Close() error { return c.rwc.Close() }

// Send writes one message.
func (c *Conn) Send(m *Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := m.Encode(c.wbuf[:0])
	if err != nil {
		return err
	}
	c.wbuf = b
	if _, err := c.rwc.Write(b); err != nil {
		return fmt.Errorf("jsonrpc: send: %w", err)
	}
	return nil
}

// Recv reads the next message. Framing errors (too deep, too large, not an
// object, bad JSON) are fatal to the stream; ErrInvalid errors are not, but
// Open vSwitch closes the connection on them too.
func (c *Conn) Recv() (*Message, error) {
	raw, err := c.frame()
	if err != nil {
		return nil, err
	}
	return Decode(raw)
}

// frame returns the bytes of the next top-level JSON object, checking its
// syntax as it reads (scan.go) so that a malformed message ends the
// stream at the first byte that cannot be JSON instead of leaving the
// framer waiting for brackets that never balance. The returned slice is
// valid until the next call.
func (c *Conn) frame() ([]byte, error) {
	limit := c.MaxMessageSize
	if limit <= 0 {
		limit = DefaultMaxMessageSize
	}
	c.buf = c.buf[:0]
	c.scan.reset()
	for {
		if c.scan.state == scString && c.r.Buffered() > 0 {
			// Inside a string only '"', '\\' and control characters
			// matter: take the run of other bytes at once.
			peek, _ := c.r.Peek(c.r.Buffered())
			if n := stringRun(peek); n > 0 {
				if len(c.buf)+n > limit {
					return nil, ErrTooLarge
				}
				c.buf = append(c.buf, peek[:n]...)
				c.r.Discard(n)
				continue
			}
		}
		b, err := c.r.ReadByte()
		if err != nil {
			if err == io.EOF && len(c.buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(c.buf) == 0 {
			switch b {
			case ' ', '\t', '\n', '\r':
				continue
			case '{':
			default:
				return nil, ErrNotObject
			}
		}
		if len(c.buf) >= limit {
			return nil, ErrTooLarge
		}
		c.buf = append(c.buf, b)
		if err := c.scan.step(b); err != nil {
			return nil, err
		}
		if c.scan.complete {
			return c.buf, nil
		}
	}
}
