package upcall

// Open vSwitch's other_config:flow-restore-wait, as the upcall layer sees
// it. While it is set the datapath makes no upcalls (the daemon tells it),
// the switch holds its controllers (ofswitch.Settings.HoldControllers) so
// that none changes the tables half-way through a restore, and
// revalidation rounds do not run: the megaflows installed before keep
// their actions, and barriers do not wait for rounds. OpenFlow service
// connections (<bridge>.mgmt) work as usual, which is how the tables are
// restored.

// SetFlowRestoreWait turns flow-restore-wait on or off. Turning it off
// revalidates every megaflow at once against the restored tables.
func (h *Handler) SetFlowRestoreWait(on bool) {
	if h.restoreWait.Swap(on) == on || on {
		return
	}
	h.ukeys.urgent.Store(true)
	h.Changed()
}

// FlowRestoreWait reports whether flow-restore-wait is on.
func (h *Handler) FlowRestoreWait() bool { return h.restoreWait.Load() }
