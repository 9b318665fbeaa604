package upcall

import (
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// underLimit reports whether lf may be added: its learn has no limit, or
// its table holds fewer than Limit flows with its cookie (Open vSwitch
// counts a learn's flows by their table and cookie, whichever rule learned
// them).
func (h *Handler) underLimit(lf *xlate.LearnedFlow) bool {
	if lf.Limit == 0 {
		return true
	}
	n := uint32(0)
	for r := range h.tables.Rules(lf.Table, nil) {
		if r.Cookie == lf.Cookie {
			if n++; n >= lf.Limit {
				return false
			}
		}
	}
	return true
}

// refresh marks lf's flow used when its table has it with the same
// actions (its idle and hard timeouts restart: Open vSwitch's learn
// refresh; no table change) and reports whether it did.
func (h *Handler) refresh(lf *xlate.LearnedFlow, now time.Time) bool {
	r := h.tables.FindStrict(lf.Table, &lf.Match, lf.Priority)
	if r == nil || !sameActions(r.Actions, lf.Actions) {
		return false
	}
	r.Stats.Touch(now)
	r.RefreshHard(now)
	return true
}

// flowMod is the add of lf.
func flowMod(lf *xlate.LearnedFlow) *oftable.FlowMod {
	return &oftable.FlowMod{Command: ofp.FlowAdd, Table: lf.Table, Match: lf.Match, Priority: lf.Priority,
		NewCookie: lf.Cookie, IdleTimeout: lf.IdleTimeout, HardTimeout: lf.HardTimeout, Flags: lf.Flags,
		OutPort: oftable.PortAny, OutGroup: oftable.GroupAny, Actions: lf.Actions}
}

// LearnNow installs a learned flow during its packet's translation
// (xlate.ImmediateLearner), for a learn with a limit or a result_dst.
func (h *Handler) LearnNow(lf *xlate.LearnedFlow) bool {
	if h.refresh(lf, time.Now()) {
		return true
	}
	if !h.underLimit(lf) {
		return false
	}
	if err := h.cfg.Switch.ApplyFlowMods([]*oftable.FlowMod{flowMod(lf)}); err != nil {
		h.cfg.Logf("%s: learn: %v", h.cfg.Name, err)
		return false
	}
	return true
}

// limitedLearnsInstalled reports whether every learned flow of a learn
// with a limit is in its table.
func (h *Handler) limitedLearnsInstalled(lfs []xlate.LearnedFlow) bool {
	for i := range lfs {
		lf := &lfs[i]
		if lf.Limit != 0 && h.tables.FindStrict(lf.Table, &lf.Match, lf.Priority) == nil {
			return false
		}
	}
	return true
}
