package ofswitch

import (
	"time"

	"github.com/gvs-project/gvs/ofproto/connmgr"
)

// RateLimit is a controller target's packet-in rate limit
// (controller_rate_limit, controller_burst_limit).
type RateLimit = connmgr.RateLimit

// ControllerStatus is a controller connection's state for the Controller
// table.
type ControllerStatus = connmgr.ControllerStatus

// ControllerStatus reports an active controller target's state (passive
// targets report nothing, as in Open vSwitch).
func (b *Bridge) ControllerStatus(target string) (ControllerStatus, bool) {
	return b.conns.ControllerStatus(target)
}

// ListenSnoop opens the bridge's snoop socket at path (by convention
// <rundir>/<bridge>.snoop, a stale socket file is replaced) and serves
// it until the bridge is closed: its connections get a copy of the
// traffic of the controller connection with the best role.
func (b *Bridge) ListenSnoop(path string) error { return b.conns.ListenSnoop(path) }

// failOpenDelay is how long a standalone bridge's controllers must all
// be unreachable before it fails open: three inactivity probe intervals
// of 5 s, as Open vSwitch's default.
const failOpenDelay = 15 * time.Second

// checkFailOpen enters or leaves fail-open mode: a standalone bridge
// whose active controllers have all been unreachable for failOpenDelay
// forwards every packet with NORMAL until one connects.
func (b *Bridge) checkFailOpen(now time.Time) {
	b.mu.Lock()
	standalone := b.standalone
	b.mu.Unlock()
	open := standalone && b.conns.ControllersDown(now, failOpenDelay)
	if open == b.xl.FailOpen() {
		return
	}
	b.xl.SetFailOpen(open)
	if open {
		b.cfg.Logf("%s: could not connect to controller for %v, failing open", b.cfg.Name, failOpenDelay)
	}
	b.up.Changed()
}
