package ofswitch

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/bfd"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// ukey is what the switch remembers of an installed megaflow.
type ukey struct {
	key     flow.Key // the key it was translated from
	mask    flow.Mask
	actions odp.Actions
	rules   []*oftable.Rule
	tables  []xlate.TableLookup
	// learned are the flows the megaflow's learn actions install; they
	// are (re)applied whenever packets hit it.
	learned []xlate.LearnedFlow
	// fins are the megaflow's fin_timeout actions.
	fins []xlate.FinTimeout
	// groups are the groups (and buckets) its packets go through.
	groups []xlate.GroupUse
	// patches are the patch ports its packets cross.
	patches []xlate.PatchCrossing
	// mirrors are the port mirrors its packets are sent to.
	mirrors []xlate.MirrorUse
	// bfdRx are the BFD sessions whose interfaces receive its packets.
	bfdRx []*bfd.Session
	seq   uint64 // change sequence at translation
	// pushed are the megaflow counters already credited to rules.
	pushedPackets, pushedBytes uint64
	// missed counts revalidation rounds that did not find the megaflow.
	missed int
	// nfOut is the NetFlow output port of the translation.
	nfOut uint16
	// created is when the miss made it (idle time of a megaflow never
	// used since).
	created time.Time
}

type ukeyMap struct {
	mu sync.Mutex
	m  map[dpif.UFID]*ukey
	// reval serializes revalidation rounds (the revalidator and
	// `revalidator/wait`): two at once would push the same statistics
	// twice.
	reval sync.Mutex
	// inflight counts misses being translated: their ukeys are not in m
	// yet, and may come from tables older than a change.
	inflight atomic.Int64
	// urgent makes the next round skip the coalescing delay (a barrier
	// is waiting for it).
	urgent atomic.Bool
}

// idle reports whether no megaflow exists or is being made, so that no
// megaflow can be stale.
func (u *ukeyMap) idle() bool {
	if u.inflight.Load() != 0 {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.m) == 0
}

func (u *ukeyMap) init() { u.m = map[dpif.UFID]*ukey{} }

// Miss handles a datapath miss (dpif.UpcallHandler): translate, reply with
// the megaflow, send the packet-ins the translation produced.
func (b *Bridge) Miss(u *dpif.Upcall, r *dpif.MissReply) error {
	b.stats.upcalls.Add(1)
	b.ukeys.inflight.Add(1)
	defer b.ukeys.inflight.Add(-1)
	seq := b.seq.Load()
	in := xlate.In{Key: *u.Key, Packet: u.Packet, SideEffects: true}
	var out xlate.Out
	b.xl.Translate(&in, &out)
	if b.megaflowsOff.Load() {
		out.Mask = flow.PacketMask(u.Key)
	}
	if out.Err != nil {
		// At most one warning a second: a bad pipeline fails every
		// packet.
		now := time.Now().UnixNano()
		if last := b.lastXlateWarn.Load(); now-last > int64(time.Second) && b.lastXlateWarn.CompareAndSwap(last, now) {
			b.cfg.Logf("%s: translation: %v", b.cfg.Name, out.Err)
		}
	}
	r.Actions = out.Actions
	r.Mask = out.Mask
	r.Install = true
	m := flow.Match{Key: *u.Key, Mask: out.Mask}
	m.Normalize()
	r.UFID = dpif.UFIDFromMatch(&m)
	if out.Transient || (b.flowLimit != nil && !b.flowLimit.Admit(b.nflows())) {
		// A tunnel neighbour being resolved, or over the dynamic flow
		// limit: the datapath executes the actions on this packet
		// without installing a megaflow.
		r.Install = false
	} else {
		b.ukeys.mu.Lock()
		uk := b.ukeys.m[r.UFID]
		if uk == nil {
			uk = &ukey{key: *u.Key, mask: out.Mask, actions: out.Actions, rules: out.Rules, tables: out.Tables, learned: out.Learned, fins: out.FinTimeouts, groups: out.Groups, patches: out.Patches, mirrors: out.Mirrors, bfdRx: out.BFDRx, seq: seq, nfOut: out.NetFlowOutput, created: time.Now()}
			b.ukeys.m[r.UFID] = uk
		}
		b.ukeys.mu.Unlock()
		if u.Packet != nil {
			b.netflowAccount(uk, 1, uint64(u.Packet.Len()), u.Key.TCPFlags, time.Now())
		}
	}
	// The datapath executes this packet without counting it in the
	// megaflow (as Open vSwitch's): its rules are credited here.
	b.creditUpcall(&out, u)
	xlate.ApplyFinTimeouts(out.FinTimeouts, u.Key.TCPFlags)
	// A megaflow with controller actions sends its packets to userspace
	// (Userspace makes their packet-ins), this one included: the
	// datapath runs the installed actions on it.
	if !out.Slow {
		b.sendPacketIns(out.PacketIns)
	}
	b.applyLearned(out.Learned)
	b.injectPackets(out.Injects)
	return nil
}

// applyLearned installs the flows learn actions produced, remembering
// which learning rule made them (for delete_learned and limit).
func (b *Bridge) applyLearned(lfs []xlate.LearnedFlow) {
	if len(lfs) == 0 {
		return
	}
	fms := make([]*oftable.FlowMod, 0, len(lfs))
	now := time.Now()
	for i := range lfs {
		lf := &lfs[i]
		// A flow learned before with the same actions is only marked
		// used (its idle timeout restarts); no table change.
		if r := b.tables.FindStrict(lf.Table, &lf.Match, lf.Priority); r != nil && sameActions(r.Actions, lf.Actions) {
			r.Stats.Touch(now)
			continue
		}
		if !b.learned.admit(lf) {
			continue
		}
		fms = append(fms, &oftable.FlowMod{Command: ofp.FlowAdd, Table: lf.Table, Match: lf.Match, Priority: lf.Priority,
			NewCookie: lf.Cookie, IdleTimeout: lf.IdleTimeout, HardTimeout: lf.HardTimeout, Flags: lf.Flags,
			OutPort: oftable.PortAny, OutGroup: oftable.GroupAny, Actions: lf.Actions})
	}
	if len(fms) == 0 {
		return
	}
	if err := b.applyFlowMods(fms); err != nil {
		b.cfg.Logf("%s: learn: %v", b.cfg.Name, err)
	}
}

// Userspace handles a userspace() action's upcall: a controller action in
// an installed megaflow. The packet is translated again, with side
// effects, to produce its packet-ins (the datapath already ran the
// megaflow's other actions).
func (b *Bridge) Userspace(u *dpif.Upcall) {
	if u.Action != nil && u.Action.Userspace != nil && xlate.IsSlowPathCookie(u.Action.Userspace.Userdata) {
		b.slowPathUpcall(u)
		return
	}
	if u.Action != nil && u.Action.Userspace != nil && b.sampleUpcall(u) {
		return
	}
	if u.Action == nil || u.Action.Userspace == nil || !xlate.IsControllerCookie(u.Action.Userspace.Userdata) {
		return
	}
	if b.frozenPacketIn(u) {
		return
	}
	in := xlate.In{Key: *u.Key, Packet: u.Packet, SideEffects: true}
	var out xlate.Out
	b.xl.Translate(&in, &out)
	b.sendPacketIns(out.PacketIns)
	b.applyLearned(out.Learned)
}

// revalidateCoalesce is the shortest time between two revalidation
// rounds triggered by changes; it bounds how stale a megaflow can be after
// a change (plus the round itself).
const revalidateCoalesce = 5 * time.Millisecond

// revalidator runs revalidation rounds: at once after a change, else every
// RevalidateInterval.
func (b *Bridge) revalidator() {
	defer b.wg.Done()
	t := time.NewTicker(b.cfg.RevalidateInterval)
	defer t.Stop()
	var last time.Time
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-t.C:
		case <-b.wake:
			// A burst of flow_mods (one per message without a bundle)
			// makes one round, not one each: wait out the rest of a
			// short interval since the last round.
			if d := revalidateCoalesce - time.Since(last); d > 0 && !b.ukeys.urgent.Swap(false) {
				select {
				case <-b.ctx.Done():
					return
				case <-time.After(d):
				}
			}
		}
		b.Revalidate()
		last = time.Now()
	}
}

// Revalidate runs one revalidation round now: push megaflow statistics to
// rules, re-translate megaflows made before the last change and delete
// those whose actions or mask differ, and forget ukeys whose megaflow is
// gone.
func (b *Bridge) Revalidate() {
	if b.cfg.DP == nil || b.restoreWait.Load() || b.revPaused.Load() {
		return
	}
	b.ukeys.reval.Lock()
	defer b.ukeys.reval.Unlock()
	seq := b.seq.Load()
	defer b.revalidated(seq)
	now := time.Now()
	nflows := b.nflows()
	pol := b.flowLimit.policy(nflows)
	defer func() {
		// The round's duration adjusts the dynamic flow limit.
		d := time.Since(now)
		b.flowLimit.roundIfDue(time.Now(), b.cfg.RevalidateInterval/2, nflows, d)
		if d > 2*time.Second {
			b.cfg.Logf("%s: spent an unreasonably long %dms revalidating %d flows", b.cfg.Name, d.Milliseconds(), nflows)
		}
	}()
	if c := ceilingOf(b.cfg.DP); c > 0 {
		b.flowLimit.SetCeiling(c)
	}
	seen := map[dpif.UFID]dpif.FlowStats{}
	b.cfg.DP.FlowDump(func(f *dpif.Flow) bool {
		seen[f.UFID] = f.Stats
		return true
	})
	var del []dpif.UFID
	b.ukeys.mu.Lock()
	keys := make([]dpif.UFID, 0, len(b.ukeys.m))
	for id := range b.ukeys.m {
		keys = append(keys, id)
	}
	b.ukeys.mu.Unlock()
	for _, id := range keys {
		b.ukeys.mu.Lock()
		uk := b.ukeys.m[id]
		b.ukeys.mu.Unlock()
		if uk == nil {
			continue
		}
		st, ok := seen[id]
		if !ok {
			uk.missed++
			if uk.missed > 1 {
				b.ukeys.mu.Lock()
				delete(b.ukeys.m, id)
				b.ukeys.mu.Unlock()
				b.netflowExpire(uk)
			}
			continue
		}
		uk.missed = 0
		b.pushStats(uk, st, now)
		if pol.over && (pol.killAll || idleSince(st.Used, uk.created, now) > overLimitMaxIdle) {
			// More megaflows than the limit: idle ones go now, all of
			// them over twice the limit.
			b.flowLimit.kills.Add(1)
			del = append(del, id)
			continue
		}
		if uk.seq == seq {
			continue
		}
		in := xlate.In{Key: uk.key}
		var out xlate.Out
		b.xl.Translate(&in, &out)
		if b.megaflowsOff.Load() {
			out.Mask = flow.PacketMask(&uk.key)
		}
		b.stats.revalidated.Add(1)
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
				err := b.cfg.DP.FlowPut(&dpif.FlowPut{UFID: id, Match: m, Actions: out.Actions, Flags: dpif.PutModify})
				if err != nil {
					del = append(del, id)
					continue
				}
				uk.actions = out.Actions
			}
			uk.seq = seq
			uk.rules, uk.tables, uk.learned, uk.fins, uk.nfOut, uk.patches = out.Rules, out.Tables, out.Learned, out.FinTimeouts, out.NetFlowOutput, out.Patches
			uk.mirrors, uk.groups, uk.bfdRx = out.Mirrors, out.Groups, out.BFDRx
			continue
		}
		del = append(del, id)
	}
	for _, id := range del {
		st, err := b.cfg.DP.FlowDel(id)
		b.ukeys.mu.Lock()
		uk := b.ukeys.m[id]
		delete(b.ukeys.m, id)
		b.ukeys.mu.Unlock()
		if err == nil && uk != nil {
			b.pushStats(uk, st, now)
		}
		if uk != nil {
			b.netflowExpire(uk)
		}
		b.stats.deleted.Add(1)
	}
	b.tables.Sweep()
}

// sameActions compares two action lists by their OpenFlow 1.5 encoding.
func sameActions(a, b []ofp.Action) bool {
	ea, err1 := ofp.AppendOfpacts(nil, a, 6, true)
	eb, err2 := ofp.AppendOfpacts(nil, b, 6, true)
	return err1 == nil && err2 == nil && string(ea) == string(eb)
}

// revalidated records that every change up to seq is reflected in the
// megaflows and wakes barriers waiting for it.
func (b *Bridge) revalidated(seq uint64) {
	b.revMu.Lock()
	if seq > b.revDone {
		b.revDone = seq
	}
	b.revCond.Broadcast()
	b.revMu.Unlock()
}

// waitRevalidated blocks until a revalidation round has covered every
// change made so far (or a second passes), so that when a barrier reply
// goes out the datapath no longer uses megaflows the acknowledged
// flow_mods made stale.
func (b *Bridge) waitRevalidated() {
	want := b.seq.Load()
	// With no megaflow in the datapath (nor one being made) nothing can
	// be stale: a barrier after each of many flow_mods loading an idle
	// switch (ovs-ofctl add-flows) must not wait for rounds.
	if b.cfg.DP == nil || b.ukeys.idle() || b.restoreWait.Load() || b.revPaused.Load() {
		return
	}
	b.revMu.Lock()
	defer b.revMu.Unlock()
	if b.revDone >= want {
		return
	}
	b.ukeys.urgent.Store(true)
	b.changed() // make sure a round runs, without the coalescing delay
	deadline := time.Now().Add(time.Second)
	timer := time.AfterFunc(time.Second, func() {
		b.revMu.Lock()
		b.revCond.Broadcast()
		b.revMu.Unlock()
	})
	defer timer.Stop()
	for b.revDone < want && time.Now().Before(deadline) && b.ctx.Err() == nil {
		b.revCond.Wait()
	}
}

// DisableMegaflows makes new megaflows exact-match (flow.PacketMask), as
// Open vSwitch's upcall/disable-megaflows; false restores wildcarding.
// The caller flushes the datapath's megaflows.
func (b *Bridge) DisableMegaflows(off bool) {
	if b.megaflowsOff.Swap(off) != off {
		b.changed()
	}
}

// PauseRevalidator stops (true) or restarts revalidation rounds, as Open
// vSwitch's revalidator/pause and revalidator/resume: while paused,
// megaflows are neither re-translated nor expired and their statistics
// reach the rules only after the resume.
func (b *Bridge) PauseRevalidator(pause bool) {
	if b.revPaused.Swap(pause) && !pause {
		b.changed()
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
func (b *Bridge) pushStats(uk *ukey, st dpif.FlowStats, now time.Time) {
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
	b.netflowAccount(uk, dp, db, st.TCPFlags, used)
	b.creditPatches(uk.patches, dp, db)
	creditMirrors(uk.mirrors, dp, db)
	for _, s := range uk.bfdRx {
		s.AccountRx(dp)
	}
	b.countLookups(uk.tables, dp)
	b.applyLearned(uk.learned)
}

// slicesEqualActions compares datapath action lists by their text, which
// is canonical.
func slicesEqualActions(a, b odp.Actions) bool {
	if len(a) != len(b) {
		return false
	}
	return a.String() == b.String()
}

// expirer removes rules whose idle or hard timeout passed, once a second.
func (b *Bridge) expirer() {
	defer b.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case now := <-t.C:
			b.sendFlowRemoved(b.tables.Expire(now))
			b.checkFailOpen(now)
			b.expireBundles(now)
		}
	}
}

// frozenPacketIn makes the packet-in of a datapath controller action
// from the state its cookie froze, as Open vSwitch's CONTROLLER_UPCALL:
// the packet as the datapath actions before it left it, the pipeline
// fields and userdata of the moment of the controller action. (Translating
// the packet again would start from its modified headers.) It reports
// false when the cookie needs a translation (a continuation). A freeze in
// a patch peer's pipeline sends the packet-in to that bridge's
// controllers.
func (b *Bridge) frozenPacketIn(u *dpif.Upcall) bool {
	ck, ok := odp.ParseCookie(u.Action.Userspace.Userdata)
	if !ok || ck.Continuation {
		return false
	}
	if ck.DontSend {
		return true
	}
	fz, ok := b.cfg.Recirc.Get(ck.RecircID)
	if !ok {
		return false
	}
	pi := xlate.PacketIn{Bridge: fz.Bridge, Reason: uint8(ck.Reason), TableID: fz.Table, Cookie: ck.RuleCookie, MaxLen: ck.MaxLen,
		ControllerID: ck.ControllerID}
	if fz.Userdata != "" {
		pi.Userdata = []byte(fz.Userdata)
	}
	pi.Flow.Key = *u.Key
	if !fz.Conntracked {
		k := &pi.Flow.Key
		k.CtState, k.CtZone, k.CtMark, k.CtLabel = 0, 0, 0, [16]byte{}
		clearCtTuple(k)
	}
	fz.Restore(&pi.Flow)
	if u.Packet != nil {
		pi.Data = append([]byte(nil), u.Packet.Data()...)
	}
	b.sendPacketIns([]xlate.PacketIn{pi})
	return true
}
