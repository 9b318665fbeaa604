package upcall

import (
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// revalidateCoalesce is the shortest time between two revalidation
// rounds triggered by changes; it bounds how stale a megaflow can be after
// a change (plus the round itself).
const revalidateCoalesce = 5 * time.Millisecond

// revalidator runs revalidation rounds: at once after a change, else every
// RevalidateInterval.
func (h *Handler) revalidator() {
	defer h.wg.Done()
	t := time.NewTicker(h.cfg.RevalidateInterval)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		case <-h.wake:
			// A burst of flow_mods (one per message without a bundle)
			// makes one round, not one each: wait out the rest of a
			// short interval since the last round.
			if d := revalidateCoalesce - time.Since(last); d > 0 && !h.ukeys.urgent.Swap(false) {
				select {
				case <-h.ctx.Done():
					return
				case <-time.After(d):
				}
			}
		}
		h.Revalidate()
		last = time.Now()
	}
}

// Revalidate runs one revalidation round now: push megaflow statistics to
// rules, re-translate megaflows made before the last change and delete
// those whose actions or mask differ, and forget ukeys whose megaflow is
// gone.
func (h *Handler) Revalidate() {
	if h.cfg.DP == nil || h.restoreWait.Load() || h.revPaused.Load() {
		return
	}
	h.ukeys.reval.Lock()
	defer h.ukeys.reval.Unlock()
	if h.xl.MACTableChanged() {
		// Entries aged, flushed or moved since the last round.
		h.changes.bump()
	}
	seq := h.changes.seq.Load()
	defer h.revalidated(seq)
	now := time.Now()
	nflows := h.cfg.DP.FlowCount()
	pol := h.flowLimit.policy(nflows)
	defer func() {
		// The round's duration adjusts the dynamic flow limit.
		d := time.Since(now)
		h.flowLimit.roundIfDue(time.Now(), h.cfg.RevalidateInterval/2, nflows, d)
		if d > 2*time.Second {
			h.cfg.Logf("%s: spent an unreasonably long %dms revalidating %d flows", h.cfg.Name, d.Milliseconds(), nflows)
		}
	}()
	if c := h.cfg.DP.ConfiguredFlowLimit(); c > 0 {
		h.flowLimit.SetCeiling(c)
	}
	seen := map[dpif.UFID]dpif.FlowStats{}
	dump := h.cfg.DP.FlowDump
	if td, ok := h.cfg.DP.(dpif.TerseDumper); ok && !h.fullDumps.Load() {
		// The ukeys hold the keys: the dump needs only UFIDs.
		dump = td.FlowDumpTerse
	}
	dump(func(f *dpif.Flow) bool {
		seen[f.UFID] = f.Stats
		return true
	})
	var del []dpif.UFID
	h.ukeys.mu.Lock()
	keys := make([]dpif.UFID, 0, len(h.ukeys.m))
	for id := range h.ukeys.m {
		keys = append(keys, id)
	}
	h.ukeys.mu.Unlock()
	for _, id := range keys {
		h.ukeys.mu.Lock()
		uk := h.ukeys.m[id]
		h.ukeys.mu.Unlock()
		if uk == nil {
			continue
		}
		st, ok := seen[id]
		if !ok {
			uk.missed++
			if uk.missed > 1 {
				h.ukeys.mu.Lock()
				delete(h.ukeys.m, id)
				h.ukeys.mu.Unlock()
				h.cfg.Switch.NetFlowExpire(&uk.key)
			}
			continue
		}
		uk.missed = 0
		h.pushStats(uk, st, now)
		if pol.over && (pol.killAll || idleSince(st.Used, uk.created, now) > overLimitMaxIdle) {
			// More megaflows than the limit: idle ones go now, all of
			// them over twice the limit.
			h.flowLimit.kills.Add(1)
			del = append(del, id)
			continue
		}
		if uk.seq == seq {
			continue
		}
		in := xlate.In{Key: uk.key}
		var out xlate.Out
		h.xl.Translate(&in, &out)
		if h.megaflowsOff.Load() {
			out.Mask = flow.PacketMask(&uk.key)
		}
		h.stats.revalidated.Add(1)
		if !h.limitedLearnsInstalled(out.Learned) {
			// A learn with a limit whose flow is not in its table (it
			// was refused, or has gone since): the megaflow is not kept,
			// so that its next packet learns again at once, in arrival
			// order (Open vSwitch's avoid_caching).
			del = append(del, id)
			continue
		}
		// The datapath's mask: the translation's plus the VLAN-tag
		// presence bits the datapath always matches.
		inst := uk.mask
		inst.MatchVLANPresence()
		if out.Err == nil && !out.Transient && maskWithin(&out.Mask, &inst) {
			// The installed megaflow is at least as specific as the new
			// translation needs: keep it, changing its actions in place
			// if they differ (as Open vSwitch's UKEY_MODIFY).
			if !slicesEqualActions(out.Actions, uk.actions) {
				// The packet's key as installed (the put logs it; the
				// datapath normalizes).
				m := flow.Match{Key: uk.key, Mask: uk.mask}
				err := h.cfg.DP.FlowPut(&dpif.FlowPut{UFID: id, Match: m, Actions: out.Actions, Flags: dpif.PutModify})
				if err != nil {
					del = append(del, id)
					continue
				}
				uk.actions = out.Actions
			}
			uk.seq = seq
			uk.take(&out)
			continue
		}
		del = append(del, id)
	}
	for _, id := range del {
		st, err := h.cfg.DP.FlowDel(id)
		h.ukeys.mu.Lock()
		uk := h.ukeys.m[id]
		delete(h.ukeys.m, id)
		h.ukeys.mu.Unlock()
		if err == nil && uk != nil {
			h.pushStats(uk, st, now)
		}
		if uk != nil {
			h.cfg.Switch.NetFlowExpire(&uk.key)
		}
		h.stats.deleted.Add(1)
	}
	h.tables.Sweep()
}

// sameActions compares two action lists by their OpenFlow 1.5 encoding.
func sameActions(a, b []ofp.Action) bool {
	ea, err1 := ofp.AppendOfpacts(nil, a, 6, true)
	eb, err2 := ofp.AppendOfpacts(nil, b, 6, true)
	return err1 == nil && err2 == nil && string(ea) == string(eb)
}

// revalidated records that every change up to seq is reflected in the
// megaflows and wakes barriers waiting for it.
func (h *Handler) revalidated(seq uint64) {
	h.revMu.Lock()
	if seq > h.revDone {
		h.revDone = seq
	}
	h.revCond.Broadcast()
	h.revMu.Unlock()
}

// WaitRevalidated blocks until a revalidation round of every bridge of
// the datapath has covered every change made so far (or a second
// passes), so that when a barrier reply goes out the datapath no longer
// uses megaflows the acknowledged flow_mods made stale, whichever bridge
// keeps them.
func (h *Handler) WaitRevalidated() {
	h.changes.waitRevalidated(time.Now().Add(time.Second))
}

// waitRound blocks until this handler's revalidation has covered change
// want, or until deadline.
func (h *Handler) waitRound(want uint64, deadline time.Time) {
	// With no megaflow in the datapath (nor one being made) nothing can
	// be stale: a barrier after each of many flow_mods loading an idle
	// switch (ovs-ofctl add-flows) must not wait for rounds.
	if h.cfg.DP == nil || h.ukeys.idle() || h.restoreWait.Load() || h.revPaused.Load() {
		return
	}
	h.revMu.Lock()
	defer h.revMu.Unlock()
	d := time.Until(deadline)
	if h.revDone >= want || d <= 0 {
		return
	}
	// A round without the coalescing delay (one running now may have
	// started before want: the wake queues the next).
	h.ukeys.urgent.Store(true)
	select {
	case h.wake <- struct{}{}:
	default:
	}
	timer := time.AfterFunc(d, func() {
		h.revMu.Lock()
		h.revCond.Broadcast()
		h.revMu.Unlock()
	})
	defer timer.Stop()
	for h.revDone < want && time.Now().Before(deadline) && h.ctx.Err() == nil {
		h.revCond.Wait()
	}
}

// DisableMegaflows makes new megaflows exact-match (flow.PacketMask), as
// Open vSwitch's upcall/disable-megaflows; false restores wildcarding.
// The caller flushes the datapath's megaflows.
func (h *Handler) DisableMegaflows(off bool) {
	if h.megaflowsOff.Swap(off) != off {
		h.Changed()
	}
}

// SetTerseDumps says whether the revalidator dumps flows by UFID only
// (Open vSwitch's upcall/enable-ufid, the default) or with their keys
// (upcall/disable-ufid).
func (h *Handler) SetTerseDumps(on bool) { h.fullDumps.Store(!on) }

// PauseRevalidator stops (true) or restarts revalidation rounds, as Open
// vSwitch's revalidator/pause and revalidator/resume: while paused,
// megaflows are neither re-translated nor expired and their statistics
// reach the rules only after the resume.
func (h *Handler) PauseRevalidator(pause bool) {
	if h.revPaused.Swap(pause) && !pause {
		h.Changed()
	}
}

// maskWithin reports whether every bit of a is also in b.
func maskWithin(a, b *flow.Mask) bool {
	aw, bw := a.W(), b.W()
	for i := range aw {
		if aw[i]&^bw[i] != 0 {
			return false
		}
	}
	return true
}

// pushStats credits a megaflow's new packets and bytes to its rules.
func (h *Handler) pushStats(uk *ukey, st dpif.FlowStats, now time.Time) {
	if st.Packets < uk.pushedPackets {
		uk.pushedPackets, uk.pushedBytes = 0, 0
	}
	dp, db := st.Packets-uk.pushedPackets, st.Bytes-uk.pushedBytes
	if dp == 0 {
		return
	}
	uk.pushedPackets, uk.pushedBytes = st.Packets, st.Bytes
	used := now
	if !st.Used.IsZero() {
		used = st.Used
	}
	for _, r := range uk.rules {
		r.Stats.Add(dp, db, used)
	}
	xlate.ApplyFinTimeouts(uk.fins, st.TCPFlags)
	for _, g := range uk.groups {
		g.Credit(dp, db)
	}
	h.cfg.Switch.NetFlowAccount(&uk.key, uk.nfOut, dp, db, st.TCPFlags, used)
	h.creditPatches(uk.patches, dp, db)
	creditMirrors(uk.mirrors, dp, db)
	creditBonds(uk.bonds, db)
	for _, s := range uk.bfdRx {
		s.AccountRx(dp)
	}
	h.countLookups(uk.tables, dp)
	h.ApplyLearned(uk.learned)
	xlate.RefreshMACs(uk.macs)
}

// slicesEqualActions compares datapath action lists by their text, which
// is canonical.
func slicesEqualActions(a, b odp.Actions) bool {
	if len(a) != len(b) {
		return false
	}
	return a.String() == b.String()
}
