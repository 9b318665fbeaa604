// Package fdpass carries messages with file descriptors between two
// processes on one host: a unix seqpacket connection whose messages may
// hold SCM_RIGHTS descriptors, payloads larger than one packet split into
// chunks, and the peer's credentials for the caller to check. A planned
// restart uses it to hand sockets from the running daemon to its
// successor.
//
// It imports nothing of gvs: what the messages mean is the caller's.
package fdpass

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

const (
	// chunk is the payload one packet carries, well under the default
	// socket buffer so a message never needs a larger one.
	chunk = 32 << 10
	// MaxFds is the most descriptors one message carries (the kernel's
	// SCM_MAX_FD is 253).
	MaxFds = 250
	// MaxMessage bounds a message's payload on receive: a peer cannot
	// make Recv allocate without limit.
	MaxMessage = 1 << 30
	// header: flags (1 byte: more follows), then the message's total
	// payload length (4 bytes, the same in every chunk).
	header   = 5
	flagMore = 1
)

// Conn is one end of a connection.
type Conn struct {
	c *net.UnixConn
}

// Listen listens on path (which must not exist) with mode 0600.
func Listen(path string) (*net.UnixListener, error) {
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("fdpass: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("fdpass: %w", err)
	}
	return l, nil
}

// Accept waits for the next connection on l.
func Accept(l *net.UnixListener) (*Conn, error) {
	c, err := l.AcceptUnix()
	if err != nil {
		return nil, fmt.Errorf("fdpass: accept: %w", err)
	}
	return &Conn{c: c}, nil
}

// Dial connects to a listener at path.
func Dial(path string) (*Conn, error) {
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, fmt.Errorf("fdpass: %w", err)
	}
	return &Conn{c: c}, nil
}

// Pair returns two connected ends (for a child process or a test).
func Pair() (*Conn, *Conn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("fdpass: socketpair: %w", err)
	}
	var cs [2]*Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "fdpass")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			if i == 1 {
				cs[0].Close()
			}
			unix.Close(fds[1])
			return nil, nil, fmt.Errorf("fdpass: %w", err)
		}
		cs[i] = &Conn{c: c.(*net.UnixConn)}
	}
	return cs[0], cs[1], nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// SetDeadline bounds every following Send and Recv.
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// Peer returns the credentials the peer had when it connected.
func (c *Conn) Peer() (*unix.Ucred, error) {
	raw, err := c.c.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("fdpass: %w", err)
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, fmt.Errorf("fdpass: %w", err)
	}
	if cerr != nil {
		return nil, fmt.Errorf("fdpass: SO_PEERCRED: %w", cerr)
	}
	return cred, nil
}

// Send sends payload with fds (at most MaxFds), which stay the caller's:
// the peer receives duplicates.
func (c *Conn) Send(payload []byte, fds []int) error {
	if len(fds) > MaxFds {
		return fmt.Errorf("fdpass: %d descriptors in one message, at most %d", len(fds), MaxFds)
	}
	if len(payload) > MaxMessage {
		return fmt.Errorf("fdpass: message of %d bytes, at most %d", len(payload), MaxMessage)
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	buf := make([]byte, header+min(len(payload), chunk))
	total := uint32(len(payload))
	for first := true; first || len(payload) > 0; first = false {
		n := min(len(payload), chunk)
		buf[0] = 0
		if n < len(payload) {
			buf[0] = flagMore
		}
		binary.BigEndian.PutUint32(buf[1:], total)
		copy(buf[header:], payload[:n])
		if _, _, err := c.c.WriteMsgUnix(buf[:header+n], oob, nil); err != nil {
			return fmt.Errorf("fdpass: send: %w", err)
		}
		payload, oob = payload[n:], nil
	}
	return nil
}

// Recv receives one message and the descriptors it carried, which are
// the caller's to close. A message that claims more than MaxMessage
// bytes, more descriptors than MaxFds, or chunks that do not add up is
// refused (its descriptors closed).
func (c *Conn) Recv() (payload []byte, fds []int, err error) {
	buf := make([]byte, header+chunk)
	oob := make([]byte, unix.CmsgSpace(4*MaxFds))
	var total int
	for first := true; ; first = false {
		n, oobn, flags, _, err := c.c.ReadMsgUnix(buf, oob)
		if errors.Is(err, io.EOF) && first {
			err = errEOF
		}
		if err != nil {
			closeAll(fds)
			return nil, nil, fmt.Errorf("fdpass: receive: %w", err)
		}
		if oobn > 0 {
			got, perr := parseRights(oob[:oobn])
			fds = append(fds, got...)
			if perr == nil && !first {
				perr = errors.New("fdpass: descriptors after a message's first chunk")
			}
			if perr != nil {
				closeAll(fds)
				return nil, nil, perr
			}
		}
		if flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0 {
			closeAll(fds)
			return nil, nil, errors.New("fdpass: message truncated")
		}
		if n == 0 && first {
			return nil, nil, fmt.Errorf("fdpass: receive: %w", errEOF)
		}
		if n < header {
			closeAll(fds)
			return nil, nil, fmt.Errorf("fdpass: chunk of %d bytes has no header", n)
		}
		t := int(binary.BigEndian.Uint32(buf[1:]))
		if first {
			if t > MaxMessage {
				closeAll(fds)
				return nil, nil, fmt.Errorf("fdpass: message of %d bytes, at most %d", t, MaxMessage)
			}
			total, payload = t, make([]byte, 0, t)
		}
		if t != total || len(payload)+n-header > total {
			closeAll(fds)
			return nil, nil, errors.New("fdpass: chunks do not add up to the message length")
		}
		payload = append(payload, buf[header:n]...)
		if buf[0]&flagMore == 0 {
			if len(payload) != total {
				closeAll(fds)
				return nil, nil, errors.New("fdpass: message ends before its length")
			}
			return payload, fds, nil
		}
	}
}

var errEOF = errors.New("connection closed")

// IsEOF reports whether err is Recv's report of a closed connection.
func IsEOF(err error) bool { return errors.Is(err, errEOF) }

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("fdpass: control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("fdpass: control message: %w", err)
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
