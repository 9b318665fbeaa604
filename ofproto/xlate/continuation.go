package xlate

import (
	"errors"
	"slices"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// A continuation is what a paused translation (controller(...,pause))
// leaves for NXT_RESUME: the bridge, the action stack and the actions
// still to run, innermost action list first, each with the table and
// cookie of its rule. The switch encodes it in Open vSwitch's continuation
// properties inside NXT_PACKET_IN2; the controller sends it back with the
// packet and pipeline fields, which it may have changed.

// ErrBadContinuation is returned for a continuation that does not apply
// to this datapath (NXR_STALE).
var ErrBadContinuation = errors.New("xlate: bad or stale continuation")

// frame is an action list being translated and the index of the action
// running in it.
type frame struct {
	acts   []ofp.Action
	i      int
	table  uint8
	cookie uint64
}

// Continuation is a paused translation.
type Continuation struct {
	Bridge string
	// ODPPort is the packet's datapath input port.
	ODPPort uint32
	Frames  []ContinuationFrame // innermost first
	Stack   [][]byte
	// ActionSet is the action set at the pause; it runs at the end of
	// the resumed pipeline.
	ActionSet []ofp.Action
	// Mirrors are the bridge's mirrors the packet went to before the
	// pause: the resumed outputs do not mirror to them again.
	Mirrors uint32
}

// ContinuationFrame is the rest of one action list.
type ContinuationFrame struct {
	Table   uint8
	Cookie  uint64
	Actions []ofp.Action
}

// continuation captures the rest of every action list after the current
// action.
func (c *ctx) continuation() *Continuation {
	ct := &Continuation{Bridge: c.snap.Bridge}
	if c.inODP != NoODP {
		ct.ODPPort = c.inODP
	}
	for j := len(c.frames) - 1; j >= c.patchBase; j-- {
		f := &c.frames[j]
		ct.Frames = append(ct.Frames, ContinuationFrame{Table: f.table, Cookie: f.cookie, Actions: slices.Clone(f.acts[f.i+1:])})
	}
	// A pause while resuming: the outer lists of the continuation being
	// resumed still follow (unless the pause is in a patch peer, whose
	// continuation ends with its own pipeline).
	if c.patchBase == 0 {
		ct.Frames = append(ct.Frames, c.resumeFrames...)
	}
	for _, e := range c.stack {
		ct.Stack = append(ct.Stack, slices.Clone(e))
	}
	ct.ActionSet = slices.Clone(c.aset.acts)
	ct.Mirrors = c.mir.used
	return ct
}

// resume runs a continuation's frames, innermost first.
func (c *ctx) resume(ct *Continuation) {
	c.stack = ct.Stack
	c.mir.used = ct.Mirrors
	c.aset.acts = slices.Clone(ct.ActionSet)
	for i := range c.aset.acts {
		if c.aset.acts[i].Type == ofp.ActGroup {
			c.aset.hasGroup = true
		}
	}
	for i, f := range ct.Frames {
		if c.exit {
			return
		}
		c.table = f.Table
		c.resumeFrames = ct.Frames[i+1:]
		c.doActions(f.Actions)
	}
	c.resumeFrames = nil
}
