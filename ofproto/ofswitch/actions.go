package ofswitch

import (
	"github.com/gvs-project/gvs/ofproto/classifier"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// ofpacts decodes a flow's actions (OpenFlow 1.0, NXM) or
// instructions (OpenFlow 1.1+) into one version-independent list; the
// testing actions only with Config.DebugActions.
func (d *fmDecoder) ofpacts(buf []byte, v uint8, instructions bool) ([]ofp.Action, error) {
	if d.debugActions {
		return ofp.DecodeOfpactsWithDebug(buf, v, instructions)
	}
	return ofp.DecodeOfpacts(buf, v, instructions)
}

// conjunctions extracts a flow's conjunction(id,k/n) actions, which make
// it a clause of a conjunctive match.
func conjunctions(acts []ofp.Action) []classifier.Conjunction {
	var out []classifier.Conjunction
	for i := range acts {
		if c := acts[i].Conj(); acts[i].Type == ofp.ActConjunction && c != nil {
			out = append(out, classifier.Conjunction{ID: c.ID, Clause: c.Clause, NClauses: c.NClauses})
		}
	}
	return out
}

// extOutputsTo extends outputsTo to the actions that output indirectly,
// as ofpacts_output_to_port and ofpacts_output_to_group.
func extOutputsTo(a *ofp.Action, port, group uint32) bool {
	switch a.Type {
	case ofp.ActEnqueue, ofp.ActOutputTrunc:
		return port != oftable.PortAny && uint32(a.Port) == port
	case ofp.ActController:
		return port == xlate.PortController
	case ofp.ActGroup:
		return group != oftable.GroupAny && uint32(a.Arg) == group
	case ofp.ActClone, ofp.ActWriteActions:
		return outputsTo(a.Nested, port, group)
	}
	return false
}
