package oftable

import (
	"github.com/gvs-project/gvs/ofproto/classifier"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// HeldFlowMod is a FlowMod kept for later (a bundle's, until it commits)
// in the memory it needs: the match packed to the fields it uses instead
// of a whole mf.Match. Hold makes one, Unpack gives the FlowMod back.
type HeldFlowMod struct {
	match              mf.PackedMatch
	actions            []ofp.Action
	conjunctions       []classifier.Conjunction
	cookie, cookieMask uint64
	newCookie          uint64
	outPort, outGroup  uint32
	removeReason       int32
	priority           uint16
	idleTimeout        uint16
	hardTimeout        uint16
	importance         uint16
	flags              uint16
	command, table     uint8
	modifyMayAdd       bool
	addOnlyCookie      bool
}

// Hold returns fm packed. The actions and conjunctions are shared, not
// copied.
func Hold(fm *FlowMod) HeldFlowMod {
	return HeldFlowMod{
		match: fm.Match.Pack(), actions: fm.Actions, conjunctions: fm.Conjunctions,
		cookie: fm.Cookie, cookieMask: fm.CookieMask, newCookie: fm.NewCookie,
		outPort: fm.OutPort, outGroup: fm.OutGroup, removeReason: int32(fm.RemoveReason),
		priority: fm.Priority, idleTimeout: fm.IdleTimeout, hardTimeout: fm.HardTimeout,
		importance: fm.Importance, flags: fm.Flags, command: fm.Command, table: fm.Table,
		modifyMayAdd: fm.ModifyMayAdd, addOnlyCookie: fm.AddOnlyCookie,
	}
}

// Unpack sets *fm (overwritten whole) to the held flow_mod.
func (h *HeldFlowMod) Unpack(fm *FlowMod) {
	*fm = FlowMod{
		Command: h.command, Table: h.table, Priority: h.priority,
		Cookie: h.cookie, CookieMask: h.cookieMask, NewCookie: h.newCookie,
		IdleTimeout: h.idleTimeout, HardTimeout: h.hardTimeout, Importance: h.importance,
		Flags: h.flags, OutPort: h.outPort, OutGroup: h.outGroup,
		ModifyMayAdd: h.modifyMayAdd, AddOnlyCookie: h.addOnlyCookie,
		Actions: h.actions, Conjunctions: h.conjunctions, RemoveReason: int(h.removeReason),
	}
	h.match.Unpack(&fm.Match)
}
