package ofswitch

import "github.com/gvs-project/gvs/ofproto/ofconn"

// Open vSwitch's other_config:flow-restore-wait, as a bridge sees it.
// While it is set the datapath makes no upcalls (the daemon tells it),
// controllers are held (Settings.HoldControllers) so that none changes
// the tables half-way through a restore, and revalidation rounds do not
// run: the megaflows installed before keep their actions, and barriers do
// not wait for rounds. OpenFlow service connections (<bridge>.mgmt) work
// as usual, which is how the tables are restored.

// SetFlowRestoreWait turns flow-restore-wait on or off. Turning it off
// revalidates every megaflow at once against the restored tables.
func (b *Bridge) SetFlowRestoreWait(on bool) {
	if b.restoreWait.Swap(on) == on || on {
		return
	}
	b.ukeys.urgent.Store(true)
	b.changed()
}

// FlowRestoreWait reports whether flow-restore-wait is on.
func (b *Bridge) FlowRestoreWait() bool { return b.restoreWait.Load() }

// hold records a held controller target; only active targets report a
// status, as in Open vSwitch.
//
// Preconditions: b.mu is held.
func (b *Bridge) hold(target string) {
	if ofconn.IsPassive(target) {
		return
	}
	if b.held == nil {
		b.held = map[string]bool{}
	}
	b.held[target] = true
}
