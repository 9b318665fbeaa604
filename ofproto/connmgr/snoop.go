package connmgr

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/internal/unixsock"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// Snooping, as Open vSwitch's <bridge>.snoop: a connection to the snoop
// socket is attached to one controller (the primary connection with the
// best role: master, then equal, then slave) and receives a copy of
// every OpenFlow message exchanged with it, in both directions, until
// the snooper leaves or the controller goes away (an active controller's
// reconnections keep it). With no controller the snoop connection is
// closed at once.
//
// The copies come from the connection's tap (ofconn.Conn.SetTap), set
// only while someone snoops: without snoopers the cost is one atomic
// load per message and nothing is copied. A snooper that falls behind
// loses copies instead of slowing the controller down.

const (
	snoopQueueLen         = 256
	snoopHandshakeTimeout = 10 * time.Second
)

// snooper is one connection to the snoop socket.
type snooper struct {
	nc   net.Conn
	q    chan []byte
	done chan struct{}
	once sync.Once
}

// offer queues a copy of b without blocking.
func (sn *snooper) offer(b []byte) {
	if len(sn.q) == cap(sn.q) {
		return
	}
	select {
	case sn.q <- append([]byte(nil), b...):
	default:
	}
}

func (sn *snooper) close() {
	sn.once.Do(func() {
		close(sn.done)
		sn.nc.Close()
	})
}

// run exchanges hellos (every version: the copies keep the versions of
// the snooped connection, which snoopers accept in any version), then
// writes the copies and discards what the snooper sends.
func (sn *snooper) run(onClose func()) {
	defer onClose()
	defer sn.close()
	sn.nc.SetDeadline(time.Now().Add(snoopHandshakeTimeout))
	hello, err := ofp.Encode(nil, 6, 0, ofp.NewHello(1, 2, 3, 4, 5, 6))
	if err != nil {
		return
	}
	if _, err := sn.nc.Write(hello); err != nil {
		return
	}
	r := bufio.NewReader(sn.nc)
	var hdr [8]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil || hdr[1] != 0 {
		return // OFPT_HELLO is type 0 in every version
	}
	n := int(binary.BigEndian.Uint16(hdr[2:]))
	if n < len(hdr) {
		return
	}
	if _, err := r.Discard(n - len(hdr)); err != nil {
		return
	}
	sn.nc.SetDeadline(time.Time{})
	go func() {
		io.Copy(io.Discard, r)
		sn.close()
	}()
	w := bufio.NewWriter(sn.nc)
	for {
		select {
		case b := <-sn.q:
			if _, err := w.Write(b); err != nil {
				return
			}
			if len(sn.q) == 0 {
				if err := w.Flush(); err != nil {
					return
				}
			}
		case <-sn.done:
			return
		}
	}
}

// snoopSet is a hub's snoopers; replaced, never modified, so the tap
// reads it without a lock.
type snoopSet []*snooper

// tapper is the part of *ofconn.Conn snooping needs.
type tapper interface{ SetTap(f func(b []byte)) }

// snoopHub is what snoopers attach to: an active controller target,
// whose connection may come and go (the snoopers stay, as Open vSwitch's
// rconn monitors do), or one accepted passive connection. The current
// connection's tap is set exactly while the hub has snoopers.
type snoopHub struct {
	mu   sync.Mutex
	conn tapper // nil while disconnected
	set  snoopSet
	pub  atomic.Pointer[snoopSet]
	// gone reports that the target no longer exists: checked when its
	// connection closes (nil: never).
	gone func() bool
}

// tap copies a message to the hub's snoopers.
func (h *snoopHub) tap(b []byte) {
	if ss := h.pub.Load(); ss != nil {
		for _, sn := range *ss {
			sn.offer(b)
		}
	}
}

func (h *snoopHub) publishLocked() {
	if len(h.set) == 0 {
		h.pub.Store(nil)
		return
	}
	ss := append(snoopSet(nil), h.set...)
	h.pub.Store(&ss)
}

func (h *snoopHub) add(sn *snooper) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.set = append(h.set, sn)
	h.publishLocked()
	if len(h.set) == 1 && h.conn != nil {
		h.conn.SetTap(h.tap)
	}
}

func (h *snoopHub) drop(sn *snooper) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, o := range h.set {
		if o == sn {
			h.set = append(h.set[:i:i], h.set[i+1:]...)
			break
		}
	}
	h.publishLocked()
	if len(h.set) == 0 && h.conn != nil {
		h.conn.SetTap(nil)
	}
}

// attach makes c the hub's connection.
func (h *snoopHub) attach(c ofconn.Sender) {
	tp, ok := c.(tapper)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.conn = tp
	if len(h.set) > 0 {
		tp.SetTap(h.tap)
	}
}

// detach forgets a connection that closed; if the target is gone too,
// its snoopers are closed.
func (h *snoopHub) detach(c ofconn.Sender) {
	h.mu.Lock()
	if tp, ok := c.(tapper); ok && h.conn == tp {
		h.conn = nil
	}
	gone := h.gone
	h.mu.Unlock()
	if gone != nil && gone() {
		h.closeAll()
	}
}

// closeAll ends every snoop connection of the hub.
func (h *snoopHub) closeAll() {
	h.mu.Lock()
	set := h.set
	h.set = nil
	h.publishLocked()
	h.mu.Unlock()
	for _, sn := range set {
		sn.close()
	}
}

// snoopRank orders connections for snooping as Open vSwitch does; an
// active target that is not connected ranks last.
func snoopRank(r ofconn.Role) int {
	switch r {
	case ofconn.RoleMaster:
		return 3
	case ofconn.RoleEqual:
		return 2
	case ofconn.RoleSlave:
		return 1
	}
	return 0
}

// snoopTarget picks the hub to attach a snooper to (nil: no controller):
// the controller connection with the best role among the active
// targets (connected or not) and the accepted passive connections.
func (m *Manager[X]) snoopTarget() *snoopHub {
	var best *snoopHub
	bestRank := -1
	consider := func(h *snoopHub, rank int) {
		if rank > bestRank {
			best, bestRank = h, rank
		}
	}
	m.mu.Lock()
	for target, cs := range m.ctlStates {
		cs.mu.Lock()
		if cs.hub == nil {
			cs.hub = &snoopHub{}
			cs.hub.gone = func() bool {
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.ctlStates[target] != cs
			}
			if cs.conn != nil {
				cs.hub.attach(cs.conn)
			}
		}
		rank := 0
		if cs.conn != nil {
			rank = snoopRank(cs.conn.State().Role())
		}
		consider(cs.hub, rank)
		cs.mu.Unlock()
	}
	m.mu.Unlock()
	for _, c := range m.ctl.Conns() {
		st := m.Get(c, true)
		m.cmu.Lock()
		if st.hub == nil {
			st.hub = &snoopHub{}
			st.hub.attach(c)
		}
		h := st.hub
		m.cmu.Unlock()
		consider(h, snoopRank(c.State().Role()))
	}
	return best
}

// ListenSnoop opens the bridge's snoop socket at path (by convention
// <rundir>/<bridge>.snoop, a stale socket file is replaced) and serves
// it until the bridge is closed.
func (m *Manager[X]) ListenSnoop(path string) error {
	l, err := unixsock.Listen(path, m.cfg.SocketPerm)
	if err != nil {
		return fmt.Errorf("bridge %s: %w", m.cfg.Name, err)
	}
	stop := context.AfterFunc(m.ctx, func() { l.Close() })
	go func() {
		defer stop()
		for {
			nc, err := l.Accept()
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				return
			}
			m.addSnoop(nc)
		}
	}()
	return nil
}

// addSnoop attaches a new snoop connection, or closes it when there is
// no controller connection to snoop on.
func (m *Manager[X]) addSnoop(nc net.Conn) {
	h := m.snoopTarget()
	if h == nil {
		m.cfg.Debugf("%s: no controller connection to snoop", m.cfg.Name)
		nc.Close()
		return
	}
	sn := &snooper{nc: nc, q: make(chan []byte, snoopQueueLen), done: make(chan struct{})}
	h.add(sn)
	// Snoop connections end with the bridge.
	stop := context.AfterFunc(m.ctx, sn.close)
	go sn.run(func() {
		stop()
		h.drop(sn)
	})
}

// Snooped reports whether active controller target has snoopers attached
// (the hub's tap is published): for tests and status.
func (m *Manager[X]) Snooped(target string) bool {
	m.mu.Lock()
	cs := m.ctlStates[target]
	m.mu.Unlock()
	if cs == nil {
		return false
	}
	cs.mu.Lock()
	h := cs.hub
	cs.mu.Unlock()
	return h != nil && h.pub.Load() != nil
}
