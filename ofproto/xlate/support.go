package xlate

// The datapath features translation follows at run time, as Open
// vSwitch's rt_support: dpif/set-dp-features can switch a feature the
// datapath has off, and translation then does without it.

// SetTnlPushPop switches native tunnelling (tnl_push/tnl_pop) on or off
// for the datapath's bridges. Off, output to a tunnel port is Open
// vSwitch's "kernel tunnel" output (set(tunnel(...)) then output to the
// tunnel vport) and tunnel packets arriving for a bridge's address are
// not popped.
func (t *RecircTable) SetTnlPushPop(on bool) { t.noTnlPushPop.Store(!on) }

// TnlPushPop reports whether native tunnelling is on.
func (t *RecircTable) TnlPushPop() bool { return !t.noTnlPushPop.Load() }
