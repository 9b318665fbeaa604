package connmgr

import (
	"strconv"
	"sync"
	"time"

	"github.com/gvs-project/gvs/internal/syserr"
	"github.com/gvs-project/gvs/ofproto/ofconn"
)

// ctlState is the connection state of one active controller target, as
// Open vSwitch's rconn reports it in the Controller table.
type ctlState struct {
	mu             sync.Mutex
	created        time.Time
	conn           ofconn.Sender
	since          time.Time // of the last connect or disconnect
	everConnected  bool
	lastError      string
	disconnectedAt time.Time
	// hub holds the target's snoopers across reconnections (snoop.go);
	// nil until someone snoops.
	hub *snoopHub
	// pins are the connection's packet-in schedulers (action, miss) when
	// the target has a rate limit (pinsched.go).
	pins     *[2]*pinsched
	pinsConn ofconn.Sender
}

func (st *ctlState) connected(c ofconn.Sender) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.conn, st.since, st.everConnected = c, time.Now(), true
	if st.hub != nil {
		st.hub.attach(c)
	}
}

func (st *ctlState) failed(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.lastError = syserr.Text(err)
}

func (st *ctlState) closed(s ofconn.Sender) {
	st.mu.Lock()
	if st.conn == s {
		st.conn, st.disconnectedAt = nil, time.Now()
	}
	hub := st.hub
	st.mu.Unlock()
	if hub != nil {
		hub.detach(s)
	}
}

// ControllerStatus is a controller connection's state for the Controller
// table: is_connected, role and status (state, last_error, seconds since
// the last connect or disconnect).
type ControllerStatus struct {
	IsConnected bool
	Role        string
	Status      map[string]string
}

// ControllerStatus reports an active controller target's state (passive
// targets report nothing, as in Open vSwitch).
func (m *Manager[X]) ControllerStatus(target string) (ControllerStatus, bool) {
	m.mu.Lock()
	st := m.ctlStates[target]
	held := m.held[target]
	m.mu.Unlock()
	if held {
		// As Open vSwitch: not connected, no role, no status.
		return ControllerStatus{Status: map[string]string{}}, true
	}
	if st == nil {
		return ControllerStatus{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	cs := ControllerStatus{Status: map[string]string{}}
	now := time.Now()
	switch {
	case st.conn != nil:
		cs.IsConnected = true
		cs.Status["state"] = "ACTIVE"
		cs.Status["sec_since_connect"] = strconv.Itoa(int(now.Sub(st.since) / time.Second))
		switch st.conn.State().Role() {
		case ofconn.RoleMaster:
			cs.Role = "master"
		case ofconn.RoleSlave:
			cs.Role = "slave"
		default:
			cs.Role = "other"
		}
	case st.lastError != "":
		cs.Status["state"] = "BACKOFF"
	default:
		cs.Status["state"] = "CONNECTING"
	}
	if st.lastError != "" {
		cs.Status["last_error"] = st.lastError
	}
	if !st.disconnectedAt.IsZero() {
		cs.Status["sec_since_disconnect"] = strconv.Itoa(int(now.Sub(st.disconnectedAt) / time.Second))
	}
	if st.conn != nil && st.pins != nil {
		// As Open vSwitch's: the action scheduler (index 0), then the
		// miss scheduler (table misses, explicit or implicit).
		for i, kind := range [2]string{"action", "miss"} {
			ps := st.pins[i].snapshot()
			cs.Status["packet-in-"+kind+"-backlog"] = strconv.Itoa(ps.Backlog)
			cs.Status["packet-in-"+kind+"-bypassed"] = strconv.FormatUint(ps.Bypassed, 10)
			cs.Status["packet-in-"+kind+"-queued"] = strconv.FormatUint(ps.Queued, 10)
			cs.Status["packet-in-"+kind+"-dropped"] = strconv.FormatUint(ps.Dropped, 10)
		}
	}
	return cs, true
}

// down reports how long the target has been without a connection (0 while
// connected).
func (st *ctlState) down(now time.Time) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn != nil {
		return 0
	}
	since := st.created
	if st.disconnectedAt.After(since) {
		since = st.disconnectedAt
	}
	return now.Sub(since)
}

// ControllersDown reports whether the bridge has active controller
// targets and none of them has had a connection for at least d (a
// standalone bridge then fails open).
func (m *Manager[X]) ControllersDown(now time.Time, d time.Duration) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.ctlStates) == 0 {
		return false
	}
	for _, st := range m.ctlStates {
		if st.down(now) < d {
			return false
		}
	}
	return true
}

// hold records a held controller target; only active targets report a
// status, as in Open vSwitch.
//
// Preconditions: m.mu is held.
func (m *Manager[X]) hold(target string) {
	if ofconn.IsPassive(target) {
		return
	}
	if m.held == nil {
		m.held = map[string]bool{}
	}
	m.held[target] = true
}
