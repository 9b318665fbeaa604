package xlate

import (
	"math"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The remaining family's translation (see package ofp's actions_misc.go):
// note and conjunction (no effect here; conjunction is a match), sample
// (sample.go), clone, check_pkt_larger, debug_slow and debug_recirc.

func init() {
	registerHooks(map[ofp.ActionType]actionHook{
		ofp.ActNote:        noEffect,
		ofp.ActConjunction: noEffect,
		ofp.ActSample:      func(c *ctx, a *ofp.Action) { c.smp.flowSample(a.Sample()) },
		ofp.ActClone:       clone,
		ofp.ActCheckPktLen: checkPktLen,
		// debug_slow: the megaflow sends every packet to userspace,
		// userspace(slow_path(action)), as Open vSwitch's SLOW_ACTION.
		ofp.ActDebugSlow:   func(c *ctx, _ *ofp.Action) { c.out.SlowReason |= odp.SlowAction },
		ofp.ActDebugRecirc: debugRecirc,
	})
}

// clone translates nested actions on a copy of the pipeline state: what
// they change is not seen after the clone. As in Open vSwitch, a clone
// that is the last action, or whose own actions can all be undone by
// later set actions, is translated in place; only the others become a
// datapath clone, after committing pending changes so that they are not
// emitted both inside and after it.
func clone(c *ctx, a *ofp.Action) {
	acts := a.Nested
	saveFlow, saveStack, saveDeep := c.flow, len(c.stack), c.mpls.deep
	// The clone runs a copy of the action set at its end; the original
	// stays for the rest of the pipeline (Open vSwitch's clone).
	saveSet, saveSetGroup := c.aset.acts, c.aset.hasGroup
	c.aset.acts = append([]ofp.Action(nil), saveSet...)
	restore := func() {
		c.aset.acts, c.aset.hasGroup = saveSet, saveSetGroup
		c.flow, c.mpls.deep = saveFlow, saveDeep
		c.stack = c.stack[:min(saveStack, len(c.stack))]
		if c.err == nil {
			c.exit = false
		}
	}
	if c.last || reversible(acts) {
		c.noTail = !c.last
		c.doActions(acts)
		c.aset.run()
		restore()
		return
	}
	c.dpClone(acts)
	restore()
}

// dpClone translates acts, and the action set they leave, into a
// datapath clone(), after committing pending changes so that they are
// not emitted both inside and after it. Conntrack state and a pop_mpls
// inside do not affect what follows (an in-place clone's do, as in Open
// vSwitch); the caller restores the flow.
func (c *ctx) dpClone(acts []ofp.Action) {
	useSample := false
	switch {
	case c.x.Recirc.cloneSupported():
	case c.x.Recirc.sampleNestingLevel() > 3:
		useSample = true
	default:
		// Neither clone nor deep enough sample: the actions are left
		// out (Open vSwitch's compose_clone).
		c.tr.notef("Failed to compose clone action")
		return
	}
	c.commit()
	saveBase, saveBaseDeep, saveOut, saveCT, saveWasMPLS := c.base, c.mpls.baseDeep, c.out.Actions, c.conntracked, c.mpls.was
	c.out.Actions = nil
	c.doActions(acts)
	c.aset.run()
	sub := c.out.Actions
	c.out.Actions = saveOut
	c.base, c.mpls.baseDeep, c.conntracked, c.mpls.was = saveBase, saveBaseDeep, saveCT, saveWasMPLS
	switch {
	case len(sub) == 0:
	case useSample:
		// A 100% sample is the datapath clone.
		c.emit(odp.Sample(math.MaxUint32, sub))
	default:
		c.emit(odp.Clone(sub))
	}
}

// reversible reports whether later set actions can undo the datapath
// effect of every action in acts (no kind in it is irreversible).
func reversible(acts []ofp.Action) bool {
	for i := range acts {
		if propsOf(acts[i].Type).irreversible {
			return false
		}
	}
	return true
}

// checkPktLen translates check_pkt_larger(N)->dst: the datapath compares
// the packet's length, so everything after this action is translated
// twice, once with the result bit 1 (longer than N) and once with 0, into
// the two branches of check_pkt_len, as Open vSwitch does.
func checkPktLen(c *ctx, a *ofp.Action) {
	f := a.Dst.Field
	if f == nil {
		return
	}
	if c.x.Recirc.noCheckPktLen.Load() {
		// Without the datapath action: this packet's length decides,
		// and every packet of the megaflow comes to userspace.
		v := make([]byte, f.Bytes)
		if c.in.Packet != nil && uint64(c.in.Packet.Len()) > a.Arg {
			v = subfieldMask(f.Bytes, a.Dst.Ofs, 1)
		}
		c.snap.setMasked(f, &c.flow, v, subfieldMask(f.Bytes, a.Dst.Ofs, 1))
		c.out.SlowReason |= odp.SlowAction
		return
	}
	rest := c.continuation()
	c.commit()
	saveFlow, saveBase, saveOut, saveStack, saveFrames := c.flow, c.base, c.out.Actions, c.stack, c.frames
	saveDeep, saveBaseDeep, saveWasMPLS := c.mpls.deep, c.mpls.baseDeep, c.mpls.was
	var branch [2]odp.Actions
	for bit := 1; bit >= 0; bit-- {
		c.flow, c.base, c.stack, c.exit = saveFlow, saveBase, append([][]byte(nil), saveStack...), false
		c.mpls.deep, c.mpls.baseDeep, c.mpls.was = saveDeep, saveBaseDeep, saveWasMPLS
		v := make([]byte, f.Bytes)
		if bit == 1 {
			v = subfieldMask(f.Bytes, a.Dst.Ofs, 1)
		}
		c.snap.setMasked(f, &c.flow, v, subfieldMask(f.Bytes, a.Dst.Ofs, 1))
		c.out.Actions = nil
		c.frames = c.frames[:0:0]
		c.noTail = bit == 1
		c.resume(rest)
		branch[bit] = c.out.Actions
	}
	c.flow, c.base, c.out.Actions, c.frames = saveFlow, saveBase, saveOut, saveFrames
	c.mpls.deep, c.mpls.baseDeep, c.mpls.was = saveDeep, saveBaseDeep, saveWasMPLS
	c.emit(odp.CheckPktLen(uint32(a.Arg), branch[1], branch[0]))
	c.exit = true
}

// debugRecirc recirculates for no reason (debug_recirc): the datapath
// passes the packet back with the pipeline state frozen, and the rest of
// the current action list runs in the next pass.
func debugRecirc(c *ctx, _ *ofp.Action) {
	c.commit()
	fz, ok := c.freezeRest()
	if !ok {
		return
	}
	c.emit(odp.Recirc(c.x.Recirc.ID(fz)))
	c.exit = true
}
