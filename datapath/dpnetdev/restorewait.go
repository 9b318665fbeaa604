package dpnetdev

// Open vSwitch's other_config:flow-restore-wait, as the datapath sees it:
// while the layer above restores its flow tables after a restart, the
// datapath makes no upcalls (a miss is dropped and counted as lost, no
// megaflow is installed) and the sweeper expires no megaflow, so the
// megaflows already installed keep forwarding exactly as before.

// SetRestoreWait turns flow-restore-wait on or off. The workers read it
// atomically on each miss; the sweeper on each pass.
func (dp *Datapath) SetRestoreWait(on bool) { dp.restoreWait.Store(on) }

// RestoreWait reports whether flow-restore-wait is on.
func (dp *Datapath) RestoreWait() bool { return dp.restoreWait.Load() }
