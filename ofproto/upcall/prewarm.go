package upcall

import (
	"errors"
	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// Prewarm installs the megaflow for a key without a packet: it
// translates the key as a miss would, without side effects (no learn, no
// packet-in, no statistics), records the ukey and puts the flow. A
// handover's successor prewarms the megaflows its predecessor had, so
// that traffic does not all come up as misses at once. Keys of a
// recirculation pass are not prewarmed (their recirculation ids were the
// predecessor's); a key whose translation is transient, or that the flow
// limit refuses, is skipped. It reports whether a flow was installed.
func (h *Handler) Prewarm(k *flow.Key) (bool, error) {
	if k.RecircID != 0 {
		return false, nil
	}
	seq := h.changes.seq.Load()
	in := xlate.In{Key: *k}
	var out xlate.Out
	h.xl.Translate(&in, &out)
	if out.Err != nil || out.Transient || (h.flowLimit != nil && !h.flowLimit.Admit(h.cfg.DP.FlowCount())) {
		return false, nil
	}
	m := flow.Match{Key: *k, Mask: out.Mask}
	m.Normalize()
	ufid := dpif.UFIDFromMatch(&m)
	h.ukeys.mu.Lock()
	if h.ukeys.m[ufid] == nil {
		h.ukeys.m[ufid] = newUkey(k, &out, seq)
	}
	h.ukeys.mu.Unlock()
	err := h.cfg.DP.FlowPut(&dpif.FlowPut{UFID: ufid, Match: m, Actions: out.Actions, Flags: dpif.PutCreate})
	if errors.Is(err, dpif.ErrExists) {
		// A packet got there first (ports poll while the handed-over
		// state is applied): its megaflow is the same translation.
		return false, nil
	}
	return err == nil, err
}
