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

// actionSetSlots orders the actions an action set keeps one of.
var actionSetSlots = map[ofp.ActionType]int{
	ofp.ActStripVLAN: 1, ofp.ActPopMPLS: 2, ofp.ActPushMPLS: 3, ofp.ActPushVLAN: 4,
	ofp.ActDecTTL: 5, ofp.ActDecMPLSTTL: 6, ofp.ActDecNSHTTL: 7,
}

// actionSetFinal ranks the final actions: the highest present runs.
var actionSetFinal = map[ofp.ActionType]int{
	ofp.ActCT: 1, ofp.ActCTClear: 2, ofp.ActResubmit: 3, ofp.ActOutput: 4, ofp.ActGroup: 5,
}

// actionSetSetOrMove are the actions an action set runs every one of, in
// order (Open vSwitch's ofpact_is_set_or_move_action).
var actionSetSetOrMove = map[ofp.ActionType]bool{
	ofp.ActSetField: true, ofp.ActLoad: true, ofp.ActMove: true, ofp.ActSetDLSrc: true, ofp.ActSetDLDst: true,
	ofp.ActSetNWTos: true, ofp.ActSetNWECN: true, ofp.ActSetNWTTL: true, ofp.ActSetNWSrc: true, ofp.ActSetNWDst: true,
	ofp.ActSetTPSrc: true, ofp.ActSetTPDst: true, ofp.ActSetMPLSLabel: true, ofp.ActSetMPLSTC: true,
	ofp.ActSetMPLSTTL: true, ofp.ActSetQueue: true, ofp.ActSetTunnel: true, ofp.ActSetVLANPCP: true, ofp.ActSetVLANVID: true,
}

// actionSetList turns an action set into the action list it executes.
func actionSetList(set []ofp.Action) []ofp.Action {
	var slots [8]*ofp.Action
	var final *ofp.Action
	finalRank := 0
	var moves []ofp.Action
	for i := range set {
		a := &set[i]
		if s, ok := actionSetSlots[a.Type]; ok {
			slots[s] = a
		} else if r, ok := actionSetFinal[a.Type]; ok && r >= finalRank {
			final, finalRank = a, r
		} else if actionSetSetOrMove[a.Type] {
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
