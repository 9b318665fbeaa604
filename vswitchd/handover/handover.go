package handover

import (
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gvs-project/gvs/datapath/netdev"
	"github.com/gvs-project/gvs/internal/fdpass"
)

// ProtocolVersion is the version of the messages this build speaks; a
// peer with another is refused.
const ProtocolVersion = 1

// Limits on what a successor accepts.
const (
	maxPorts     = 4096
	maxListeners = 1024
	maxFds       = 16384
)

// Port is one port handed over: its datapath and port number there (the
// successor numbers it the same, which MAC tables and megaflows rely on)
// and the device's handoff.
type Port struct {
	DPType  string
	DPPort  uint32
	Handoff netdev.Handoff
}

// Listener is a listening socket handed over, by the name the daemon
// knows it by (for example "db.sock", "br-int.mgmt", "ptcp:6653").
type Listener struct {
	Name string
	Fd   int
}

// Bundle is everything handed over.
type Bundle struct {
	// Build is the running daemon's version string.
	Build     string
	Ports     []Port
	Listeners []Listener
	// State is a statefile encoding.
	State []byte
}

// Fds returns every descriptor of b, ports' first, in the order they
// travel.
func (b *Bundle) Fds() []int {
	var fds []int
	for _, p := range b.Ports {
		fds = append(fds, p.Handoff.Fds...)
	}
	for _, l := range b.Listeners {
		fds = append(fds, l.Fd)
	}
	return fds
}

// Close closes every descriptor of a received bundle.
func (b *Bundle) Close() {
	for _, fd := range b.Fds() {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// Source is the running daemon.
type Source interface {
	// Freeze stops forwarding and every change to what is handed over,
	// and returns it. On error nothing is frozen.
	Freeze() (*Bundle, error)
	// Thaw undoes Freeze after a failed handover.
	Thaw()
}

// PeerCheck decides whether a connecting process may take over.
type PeerCheck func(cred *unix.Ucred) error

// SameFamily admits root or this process's own user, running an
// executable built from the same main package as this one (another
// version of it is fine).
func SameFamily() PeerCheck {
	self := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		self = bi.Path
	}
	return func(cred *unix.Ucred) error {
		if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
			return fmt.Errorf("process %d runs as user %d, not root or %d", cred.Pid, cred.Uid, os.Geteuid())
		}
		exe, err := os.Readlink("/proc/" + strconv.Itoa(int(cred.Pid)) + "/exe")
		if err != nil {
			return fmt.Errorf("process %d: %w", cred.Pid, err)
		}
		bi, err := buildinfo.ReadFile(exe)
		if err != nil {
			return fmt.Errorf("process %d runs %s, which is not a gvs build: %w", cred.Pid, exe, err)
		}
		if self == "" || bi.Path != self {
			return fmt.Errorf("process %d runs %s (%s), not %s", cred.Pid, exe, bi.Path, self)
		}
		return nil
	}
}

// The messages' JSON.
type (
	hello struct {
		Type    string `json:"type"` // "hello"
		Version int    `json:"version"`
		Build   string `json:"build"`
	}
	portMsg struct {
		DPType string       `json:"dp_type"`
		DPPort uint32       `json:"dp_port"`
		Type   string       `json:"type"`
		Name   string       `json:"name"`
		NFds   int          `json:"n_fds"`
		State  []byte       `json:"state"`
		Stats  netdev.Stats `json:"stats"`
	}
	bundleMsg struct {
		Type      string    `json:"type"` // "bundle" or "refused"
		Reason    string    `json:"reason,omitempty"`
		Version   int       `json:"version"`
		Build     string    `json:"build"`
		Ports     []portMsg `json:"ports"`
		Listeners []string  `json:"listeners"`
		NFds      int       `json:"n_fds"`
	}
	verdict struct {
		Type   string `json:"type"` // "done" or "failed"
		Reason string `json:"reason,omitempty"`
	}
)

// Give hands src over to the successor on c after checking it with
// check. It returns nil once the successor has taken over: the caller
// then exits without closing its ports. Any other outcome thaws src (if
// it was frozen) and returns why, with src forwarding again.
func Give(c *fdpass.Conn, src Source, check PeerCheck, build string, timeout time.Duration) error {
	c.SetDeadline(time.Now().Add(timeout))
	cred, err := c.Peer()
	if err != nil {
		return fmt.Errorf("handover: %w", err)
	}
	refuse := func(err error) error {
		b, _ := json.Marshal(bundleMsg{Type: "refused", Reason: err.Error(), Version: ProtocolVersion, Build: build})
		c.Send(b, nil)
		return fmt.Errorf("handover refused: %w", err)
	}
	if err := check(cred); err != nil {
		return refuse(err)
	}
	var h hello
	if err := recvJSON(c, &h); err != nil {
		return fmt.Errorf("handover: %w", err)
	}
	if h.Type != "hello" || h.Version != ProtocolVersion {
		return refuse(fmt.Errorf("successor speaks %q version %d, this daemon version %d", h.Type, h.Version, ProtocolVersion))
	}
	bd, err := src.Freeze()
	if err != nil {
		return refuse(fmt.Errorf("freezing: %w", err))
	}
	if err := send(c, bd, build); err != nil {
		src.Thaw()
		return fmt.Errorf("handover to %s failed, forwarding again: %w", h.Build, err)
	}
	var v verdict
	if err := recvJSON(c, &v); err != nil {
		src.Thaw()
		return fmt.Errorf("handover to %s failed, forwarding again: %w", h.Build, err)
	}
	if v.Type != "done" {
		src.Thaw()
		return fmt.Errorf("handover to %s failed, forwarding again: successor: %s", h.Build, v.Reason)
	}
	return nil
}

func send(c *fdpass.Conn, bd *Bundle, build string) error {
	m := bundleMsg{Type: "bundle", Version: ProtocolVersion, Build: build}
	for _, p := range bd.Ports {
		h := p.Handoff
		m.Ports = append(m.Ports, portMsg{DPType: p.DPType, DPPort: p.DPPort, Type: h.Type, Name: h.Name,
			NFds: len(h.Fds), State: h.State, Stats: h.Stats})
	}
	for _, l := range bd.Listeners {
		m.Listeners = append(m.Listeners, l.Name)
	}
	fds := bd.Fds()
	m.NFds = len(fds)
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := c.Send(b, nil); err != nil {
		return err
	}
	for len(fds) > 0 {
		n := min(len(fds), fdpass.MaxFds)
		if err := c.Send([]byte("fds"), fds[:n]); err != nil {
			return err
		}
		fds = fds[n:]
	}
	return c.Send(bd.State, nil)
}

func recvJSON(c *fdpass.Conn, v any) error {
	b, fds, err := c.Recv()
	if err != nil {
		return err
	}
	if len(fds) != 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return errors.New("descriptors where none were expected")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding message: %w", err)
	}
	return nil
}

// ErrRefused is wrapped by Take when the running daemon refuses.
var ErrRefused = errors.New("handover refused by the running daemon")

// Take is the successor's side: it connects to the running daemon's
// handover socket at path, receives the bundle and calls apply, which
// owns every descriptor in it whatever it returns, and must have the
// successor forwarding when it returns nil. The verdict goes back to the
// running daemon, which exits on success and goes on otherwise.
func Take(path, build string, apply func(*Bundle) error, timeout time.Duration) error {
	c, err := fdpass.Dial(path)
	if err != nil {
		return fmt.Errorf("handover: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	b, _ := json.Marshal(hello{Type: "hello", Version: ProtocolVersion, Build: build})
	if err := c.Send(b, nil); err != nil {
		return fmt.Errorf("handover: %w", err)
	}
	bd, err := receive(c)
	if err != nil {
		return err
	}
	if err := apply(bd); err != nil {
		v, _ := json.Marshal(verdict{Type: "failed", Reason: err.Error()})
		c.Send(v, nil)
		return fmt.Errorf("handover: applying what %s handed over: %w", bd.Build, err)
	}
	v, _ := json.Marshal(verdict{Type: "done"})
	if err := c.Send(v, nil); err != nil {
		return fmt.Errorf("handover: reporting success: %w", err)
	}
	return nil
}

// receive reads and checks the bundle; on error every descriptor
// received is closed.
func receive(c *fdpass.Conn) (*Bundle, error) {
	var m bundleMsg
	if err := recvJSON(c, &m); err != nil {
		return nil, fmt.Errorf("handover: %w", err)
	}
	if m.Type == "refused" {
		return nil, fmt.Errorf("%w: %s", ErrRefused, m.Reason)
	}
	if m.Type != "bundle" || m.Version != ProtocolVersion {
		return nil, fmt.Errorf("handover: running daemon sent %q version %d, this build reads version %d", m.Type, m.Version, ProtocolVersion)
	}
	total := 0
	for _, p := range m.Ports {
		if p.NFds < 0 || p.NFds > fdpass.MaxFds {
			return nil, fmt.Errorf("handover: port %s with %d descriptors", p.Name, p.NFds)
		}
		total += p.NFds
	}
	if len(m.Ports) > maxPorts || len(m.Listeners) > maxListeners || m.NFds > maxFds || total+len(m.Listeners) != m.NFds {
		return nil, fmt.Errorf("handover: %d ports, %d listeners and %d descriptors do not agree", len(m.Ports), len(m.Listeners), m.NFds)
	}
	var fds []int
	fail := func(err error) (*Bundle, error) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("handover: %w", err)
	}
	for len(fds) < m.NFds {
		b, got, err := c.Recv()
		fds = append(fds, got...)
		if err != nil {
			return fail(err)
		}
		if string(b) != "fds" || len(got) == 0 || len(fds) > m.NFds {
			return fail(fmt.Errorf("descriptor message %q with %d descriptors, %d of %d received", b, len(got), len(fds), m.NFds))
		}
	}
	state, extra, err := c.Recv()
	fds = append(fds, extra...)
	if err != nil {
		return fail(err)
	}
	if len(extra) != 0 {
		return fail(errors.New("descriptors with the state"))
	}
	bd := &Bundle{Build: m.Build, State: state}
	i := 0
	for _, p := range m.Ports {
		bd.Ports = append(bd.Ports, Port{DPType: p.DPType, DPPort: p.DPPort, Handoff: netdev.Handoff{
			Type: p.Type, Name: p.Name, Fds: fds[i : i+p.NFds : i+p.NFds], State: p.State, Stats: p.Stats}})
		i += p.NFds
	}
	for _, name := range m.Listeners {
		bd.Listeners = append(bd.Listeners, Listener{Name: name, Fd: fds[i]})
		i++
	}
	return bd, nil
}
