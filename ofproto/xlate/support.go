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

// SetClone switches the datapath clone action on or off; off, a clone
// that needs one is a 100% sample(), or is not translated when sample
// nesting is 3 or less (compose_clone).
func (t *RecircTable) SetClone(on bool) { t.noClone.Store(!on) }

// SetSampleNesting sets the nesting of sample actions the datapath
// takes (dpif/set-dp-features sample_nesting).
func (t *RecircTable) SetSampleNesting(n int) { t.sampleNesting.Store(int32(n)) }

// defaultSampleNesting is the userspace datapath's sample nesting.
const defaultSampleNesting = 10

func (t *RecircTable) cloneSupported() bool { return !t.noClone.Load() }

// SetCheckPktLen switches the datapath check_pkt_len action on or off;
// off, check_pkt_larger is decided on the packet in hand and the
// megaflow is a slow-path one.
func (t *RecircTable) SetCheckPktLen(on bool) { t.noCheckPktLen.Store(!on) }

func (t *RecircTable) sampleNestingLevel() int {
	if n := t.sampleNesting.Load(); n != 0 {
		return int(n)
	}
	return defaultSampleNesting
}
