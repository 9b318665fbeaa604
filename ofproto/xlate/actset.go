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

// actionSet is a translation's OpenFlow action set: the actions written,
// whether one is a group (actset_output is then unset), and whether the
// set is running (an output to the controller from it has its own
// packet-in reason). c is the translation it belongs to.
type actionSet struct {
	c        *ctx
	acts     []ofp.Action
	hasGroup bool
	running  bool
}

// write adds actions to the action set and keeps actset_output:
// the last output's port, until a group is written (then unset).
func (as *actionSet) write(acts []ofp.Action) {
	c := as.c
	if !as.hasGroup {
		for i := range acts {
			if acts[i].Type == ofp.ActOutput {
				c.flow.ActsetOutput = uint32(Port16(acts[i].Port))
			} else if acts[i].Type == ofp.ActGroup {
				c.flow.ActsetOutput, as.hasGroup = PortUnset, true
				break
			}
		}
	}
	as.acts = append(as.acts, acts...)
	as.trace("is")
}

// trace reports what the action set would run.
func (as *actionSet) trace(verb string) {
	c := as.c
	if c.in.Trace != nil {
		c.in.Trace(&TraceEvent{Kind: TraceActionSetIs, Indent: c.tr.ind + 1, Text: verb, Actions: actionSetList(as.acts)})
	}
}

// clear empties the action set.
func (as *actionSet) clear() {
	c := as.c
	as.trace("was")
	as.acts, as.hasGroup = nil, false
	c.flow.ActsetOutput = PortUnset
}

// run executes the action set at the end of a pipeline, then
// empties it.
func (as *actionSet) run() {
	c := as.c
	list := actionSetList(as.acts)
	as.acts, as.hasGroup = nil, false
	if len(list) == 0 || c.exit || c.err != nil {
		return
	}
	if c.in.Trace != nil {
		c.in.Trace(&TraceEvent{Kind: TraceActionSet, Indent: c.tr.ind - 4, ActIndent: c.tr.ind})
	}
	as.running = true
	c.doActions(list)
	as.running = false
}

// encode is the action set as frozen state keeps it (OpenFlow
// 1.5 actions, so that equal states compare equal).
func (as *actionSet) encode() (string, error) {
	if len(as.acts) == 0 {
		return "", nil
	}
	b, err := ofp.AppendActions(nil, as.acts, mf.OF15)
	return string(b), err
}

// restore is encode's inverse, on thawing.
func (as *actionSet) restore(s string) error {
	if s == "" {
		return nil
	}
	acts, err := ofp.DecodeActions([]byte(s), mf.OF15)
	if err != nil {
		return err
	}
	as.acts = acts
	for i := range acts {
		if acts[i].Type == ofp.ActGroup {
			as.hasGroup = true
		}
	}
	return nil
}
