package ofctl

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/internal/syserr"
	"github.com/gvs-project/gvs/ofproto/ofconn"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// vconn is one synchronous OpenFlow connection to a switch, as
// ovs-ofctl's vconn: hello exchange, then requests and their replies in
// order, echo requests answered while waiting.
type vconn struct {
	e       *env
	nc      net.Conn
	r       *bufio.Reader
	version uint8
	name    string // the vconn name ovs-ofctl prints: "unix:PATH" or as given
}

// nextXID returns the next transaction ID of the process: ovs-ofctl
// numbers every message it sends (hellos included) from 1 across all its
// connections, and replies echo the ID, so dumps print it.
func (e *env) nextXID() uint32 {
	e.xid++
	return e.xid
}

// rundir is $OVS_RUNDIR or Open vSwitch's default.
func rundir() string {
	if d := os.Getenv("OVS_RUNDIR"); d != "" {
		return d
	}
	return "/var/run/openvswitch"
}

// open connects to name as ovs-ofctl's open_vconn does: "unix:PATH" or
// "tcp:IP[:PORT]" as given, else a socket file NAME, else the bridge's
// management socket $OVS_RUNDIR/NAME.mgmt.
func (e *env) open(name string) (*vconn, error) { return e.openAt(name, ".mgmt") }

// openAt is open with the bridge socket's suffix (".mgmt", or ".snoop"
// for snoop).
func (e *env) openAt(name, suffix string) (*vconn, error) {
	var nc net.Conn
	var err error
	vname := name
	if strings.Contains(name, ":") {
		kind, rest, _ := strings.Cut(name, ":")
		switch kind {
		case "unix":
			nc, err = net.DialTimeout("unix", rest, e.timeout)
		case "tcp", "ssl":
			host, port := rest, "6653"
			if i := strings.LastIndex(rest, ":"); i >= 0 && !strings.HasSuffix(rest, "]") {
				host, port = rest[:i], rest[i+1:]
			}
			addr := net.JoinHostPort(strings.Trim(host, "[]"), port)
			if kind == "tcp" {
				nc, err = net.DialTimeout("tcp", addr, e.timeout)
				break
			}
			// As ovs-ofctl: the key, certificate and CA certificate are
			// required, the peer is checked against the CA, not its name.
			if e.tls.PrivateKey == "" || e.tls.Certificate == "" || e.tls.CACert == "" {
				return nil, fmt.Errorf("%s: Private key, certificate and CA certificate must be specified (use -p, -c, -C)", name)
			}
			var ts ofconn.TLSSettings
			ts.Set(e.tls)
			cfg, cerr := ts.ClientConfig()
			if cerr != nil {
				return nil, fmt.Errorf("connecting to %s (%v)", name, cerr)
			}
			nc, err = tls.DialWithDialer(&net.Dialer{Timeout: e.timeout}, "tcp", addr, cfg)
		default:
			return nil, fmt.Errorf("connecting to %s (Address family not supported by protocol)", name)
		}
		if err != nil {
			return nil, fmt.Errorf("connecting to %s (%s)", name, syserr.ClientText(err))
		}
	} else {
		for _, path := range []string{name, filepath.Join(rundir(), name+suffix)} {
			nc, err = net.DialTimeout("unix", path, e.timeout)
			if err == nil {
				vname = "unix:" + path
				break
			}
			if !errors.Is(err, syscall.ENOENT) {
				return nil, fmt.Errorf("%s: failed to open socket (%s)", path, syserr.ClientText(err))
			}
		}
		if nc == nil {
			return nil, fmt.Errorf("%s is not a bridge or a socket", name)
		}
	}
	c := &vconn{e: e, nc: nc, r: bufio.NewReader(nc), name: vname}
	if err := c.hello(); err != nil {
		nc.Close()
		var se *helloSendError
		if errors.As(err, &se) {
			if path, ok := strings.CutPrefix(vname, "unix:"); ok && vname != name {
				// A socket that closes at once (a snoop socket without
				// a controller) fails ovs-ofctl's vconn_open.
				return nil, fmt.Errorf("%s: failed to open socket (%s)", path, syserr.ClientText(se.err))
			}
			err = errors.New(syserr.ClientText(se.err))
		}
		return nil, fmt.Errorf("%s: failed to connect to socket (%s)", name, err)
	}
	return c, nil
}

// helloSendError is a failure to send our hello.
type helloSendError struct{ err error }

func (e *helloSendError) Error() string { return e.err.Error() }

func (e *env) allowedVersions() []uint8 {
	if len(e.versions) == 0 {
		return []uint8{mf.OF10}
	}
	return e.versions
}

// hello sends our hello (a plain one for a single version, else with a
// version bitmap) and negotiates the highest common version.
func (c *vconn) hello() error {
	vs := c.e.allowedVersions()
	var mine uint32
	high := uint8(0)
	for _, v := range vs {
		mine |= 1 << v
		high = max(high, v)
	}
	h := &ofp.Hello{}
	if len(vs) > 1 {
		h = ofp.NewHello(vs...)
	}
	if err := c.send(high, c.e.nextXID(), h); err != nil {
		return &helloSendError{err}
	}
	m, b, err := c.recvRaw()
	if err != nil {
		return err
	}
	if m.Raw != ofp.RawOFPT_HELLO {
		return fmt.Errorf("Protocol error")
	}
	var peer uint32
	if pv := m.Body.(*ofp.Hello).Versions(); pv != nil {
		for _, v := range pv {
			if v < 32 {
				peer |= 1 << v
			}
		}
	} else {
		peer = 1<<(b[0]+1) - 2
	}
	common := mine & peer
	if common == 0 {
		return fmt.Errorf("Protocol error")
	}
	for v := uint8(31); ; v-- {
		if common&(1<<v) != 0 {
			c.version = v
			break
		}
	}
	return nil
}

func (c *vconn) close() { c.nc.Close() }

func (c *vconn) send(v uint8, xid uint32, m ofp.Message) error {
	b, err := ofp.Encode(nil, v, xid, m)
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	return c.sendRaw(b)
}

func (c *vconn) sendRaw(b []byte) error {
	if c.e.timeout > 0 {
		c.nc.SetWriteDeadline(time.Now().Add(c.e.timeout))
	}
	_, err := c.nc.Write(b)
	return err
}

// recvRaw reads one message, answering echo requests.
func (c *vconn) recvRaw() (*ofp.Msg, []byte, error) {
	for {
		if c.e.timeout > 0 {
			c.nc.SetReadDeadline(time.Now().Add(c.e.timeout))
		}
		var hdr [8]byte
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, nil, errors.New("End of file")
			}
			return nil, nil, errors.New(syserr.ClientText(err))
		}
		n := int(binary.BigEndian.Uint16(hdr[2:]))
		if n < 8 {
			return nil, nil, errors.New("Protocol error")
		}
		b := make([]byte, n)
		copy(b, hdr[:])
		if _, err := io.ReadFull(c.r, b[8:]); err != nil {
			return nil, nil, errors.New("End of file")
		}
		m, err := ofp.Decode(b)
		if err != nil {
			// Undecodable replies still carry a type and xid; keep them
			// as unknown so the caller can match the xid.
			h, herr := ofp.ParseHeader(b)
			if herr != nil {
				return nil, nil, fmt.Errorf("Protocol error")
			}
			m = &ofp.Msg{Version: h.Version, XID: h.XID, Body: &ofp.Unknown{Data: b[8:]}}
		}
		if m.Raw == ofp.RawOFPT_ECHO_REQUEST {
			if err := c.send(m.Version, m.XID, &ofp.EchoReply{Data: m.Body.(*ofp.EchoRequest).Data}); err != nil {
				return nil, nil, err
			}
			continue
		}
		return m, b, nil
	}
}

// replyError is an OFPT_ERROR the switch answered a request with; its
// text is what ovs-ofctl prints (the error and the offending message).
type replyError struct{ raw []byte }

func (r *replyError) Error() string { return "switch returned an error" }

// transact sends req and returns its reply messages (all parts of a
// multipart reply), skipping unrelated messages. An OFPT_ERROR reply is
// returned as *replyError.
func (c *vconn) transact(req ofp.Message) ([]*ofp.Msg, [][]byte, error) {
	xid := c.e.nextXID()
	if err := c.send(c.version, xid, req); err != nil {
		return nil, nil, err
	}
	var out []*ofp.Msg
	var raws [][]byte
	for {
		m, b, err := c.recvRaw()
		if err != nil {
			return nil, nil, err
		}
		if m.XID != xid {
			continue
		}
		if m.Raw == ofp.RawOFPT_ERROR {
			return nil, nil, &replyError{b}
		}
		out = append(out, m)
		raws = append(raws, b)
		if !isMultipart(b) || binary.BigEndian.Uint16(b[10:])&ofp.StatsReplyMore == 0 {
			return out, raws, nil
		}
	}
}

// isMultipart reports whether b is a stats/multipart reply.
func isMultipart(b []byte) bool {
	if len(b) < 12 {
		return false
	}
	if b[0] == mf.OF10 {
		return b[1] == 17
	}
	return b[1] == 19
}

// barrier sends a barrier request and waits for its reply; OFPT_ERROR
// replies to earlier requests (xids in sent) arrive first and are
// returned as *replyError.
func (c *vconn) barrier(sent map[uint32]bool) error {
	xid := c.e.nextXID()
	if err := c.send(c.version, xid, &ofp.BarrierRequest{}); err != nil {
		return err
	}
	var first error
	for {
		m, b, err := c.recvRaw()
		if err != nil {
			return err
		}
		if m.Raw == ofp.RawOFPT_ERROR && (sent[m.XID] || m.XID == xid) && first == nil {
			first = &replyError{b}
			continue
		}
		if m.XID == xid && (m.Raw == ofp.RawOFPT10_BARRIER_REPLY || m.Raw == ofp.RawOFPT11_BARRIER_REPLY) {
			return first
		}
	}
}

// transactNoReply sends reqs and then a barrier, as ovs-ofctl's
// transact_multiple_noreply.
func (c *vconn) transactNoReply(reqs ...ofp.Message) error {
	return c.transactNoReplyProgress(nil, reqs...)
}

// transactNoReplyProgress is transactNoReply reporting each request sent
// to p (nil: none).
func (c *vconn) transactNoReplyProgress(p *progress, reqs ...ofp.Message) error {
	sent := map[uint32]bool{}
	for i, r := range reqs {
		xid := c.e.nextXID()
		sent[xid] = true
		if err := c.send(c.version, xid, r); err != nil {
			return err
		}
		p.update(i + 1)
	}
	err := c.barrier(sent)
	if err == nil {
		p.finish(len(reqs))
	}
	return err
}
