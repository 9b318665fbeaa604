package xlate

import (
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// The OpenFlow action set (OpenFlow 1.1+ write_actions/clear_actions, and
// every group bucket), executed as Open vSwitch does
// (ofpacts_execute_action_set): at most one of each "slot" action in the
// spec's order, then every set/move action in the order written, then
// the one final action of highest priority (group over output over
// resubmit over ct_clear over ct); without a final action nothing runs.
// Other actions have no place in an action set and are ignored.

// PortUnset is OFPP_UNSET: actset_output while the action set has no
// output action (or has a group).
const PortUnset = 0xfff7

// Which kinds an action set keeps one of (and in which order), runs
// every one of, or ends with is each kind's slot, setOrMove and final
// property (kindProps, registered by the family files).

// actionSetList turns an action set into the action list it executes.
func actionSetList(set []ofp.Action) []ofp.Action {
	var slots [8]*ofp.Action
	var final *ofp.Action
	finalRank := 0
	var moves []ofp.Action
	for i := range set {
		a := &set[i]
		p := propsOf(a.Type)
		if p.slot != 0 {
			slots[p.slot] = a
		} else if p.final != 0 && p.final >= finalRank {
			final, finalRank = a, p.final
		} else if p.setOrMove {
			moves = append(moves, *a)
		}
	}
	if final == nil {
		return nil
	}
	var out []ofp.Action
	for _, a := range slots {
		if a != nil {
			out = append(out, *a)
		}
	}
	out = append(out, moves...)
	return append(out, *final)
}

// writeActions adds actions to the action set and keeps actset_output:
// the last output's port, until a group is written (then unset).
func (c *ctx) writeActions(acts []ofp.Action) {
	if !c.actsetGroup {
		for i := range acts {
			if acts[i].Type == ofp.ActOutput {
				c.flow.ActsetOutput = uint32(Port16(acts[i].Port))
			} else if acts[i].Type == ofp.ActGroup {
				c.flow.ActsetOutput, c.actsetGroup = PortUnset, true
				break
			}
		}
	}
	c.actset = append(c.actset, acts...)
	c.traceActionSet("is")
}

// traceActionSet reports what the action set would run.
func (c *ctx) traceActionSet(verb string) {
	if c.in.Trace != nil {
		c.in.Trace(&TraceEvent{Kind: TraceActionSetIs, Indent: c.ind + 1, Text: verb, Actions: actionSetList(c.actset)})
	}
}

// clearActions empties the action set.
func (c *ctx) clearActions() {
	c.traceActionSet("was")
	c.actset, c.actsetGroup = nil, false
	c.flow.ActsetOutput = PortUnset
}

// runActionSet executes the action set at the end of a pipeline, then
// empties it.
func (c *ctx) runActionSet() {
	list := actionSetList(c.actset)
	c.actset, c.actsetGroup = nil, false
	if len(list) == 0 || c.exit || c.err != nil {
		return
	}
	if c.in.Trace != nil {
		c.in.Trace(&TraceEvent{Kind: TraceActionSet, Indent: c.ind - 4, ActIndent: c.ind})
	}
	c.inActionSet = true
	c.doActions(list)
	c.inActionSet = false
}

// encodeActionSet is the action set as frozen state keeps it (OpenFlow
// 1.5 actions, so that equal states compare equal).
func (c *ctx) encodeActionSet() (string, error) {
	if len(c.actset) == 0 {
		return "", nil
	}
	b, err := ofp.AppendActions(nil, c.actset, mf.OF15)
	return string(b), err
}

// restoreActionSet is encodeActionSet's inverse, on thawing.
func (c *ctx) restoreActionSet(s string) error {
	if s == "" {
		return nil
	}
	acts, err := ofp.DecodeActions([]byte(s), mf.OF15)
	if err != nil {
		return err
	}
	c.actset = acts
	for i := range acts {
		if acts[i].Type == ofp.ActGroup {
			c.actsetGroup = true
		}
	}
	return nil
}
