package ofswitch

// Flow monitors (NXST_FLOW_MONITOR, ONFST13_FLOW_MONITOR, OFPMP_FLOW_MONITOR)
// as Open vSwitch's connmgr.c ofmonitor_* and ofproto.c implement them:
// every committed table change (flow_mods of any connection, bundles,
// learn, expiry, group and meter deletes) reaches monitorCommit through the
// tables' OnCommit hook, under the tables' writer lock, so updates are
// reported in commit order. Each monitoring connection has its own
// unbounded queue drained by a goroutine, so a slow monitor never blocks a
// commit; when more than 128 KiB are queued the connection is paused
// (PAUSED is sent; only deletions of flows that existed before the pause
// are reported) and resumed once the queue drains (the flows added or
// modified meanwhile, then RESUMED), as ofmonitor_flush/ofmonitor_resume.

import (
	"reflect"
	"sort"
	"sync"
	"unsafe"

	"github.com/gvs-project/gvs/ofproto/connmgr"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// monitorPauseBytes is Open vSwitch's pause threshold (ofmonitor_flush).
const monitorPauseBytes = 128 * 1024

// monitorReq names the connection and the xids of the flow_mods of a
// transaction (in Apply order), for abbreviated updates.
type monitorReq struct {
	s    ofconn.Sender
	xids []uint32
}

// monitorTag is the oftable.Txn tag of a connection's flow_mods.
func monitorTag(s ofconn.Sender, xids ...uint32) any { return &monitorReq{s: s, xids: xids} }

// bundleMonitorTag is the tag of a bundle commit: the inner flow_mods'
// xids in the order the commit applies them.
func bundleMonitorTag(s ofconn.Sender, bd *bundle) any {
	r := &monitorReq{s: s}
	for bm := range bd.msgs.all() {
		if bm.fm != nil {
			r.xids = append(r.xids, bm.xid)
		}
	}
	return r
}

// applyFlowModsFrom is applyFlowMods for flow_mods a connection sent: the
// change is tagged so that the connection's own monitors can abbreviate it.
func (b *Bridge) applyFlowModsFrom(s ofconn.Sender, xid uint32, fms []*oftable.FlowMod) error {
	x := b.tables.Begin()
	x.Tag = monitorTag(s, xid)
	for _, fm := range fms {
		if err := x.Apply(fm); err != nil {
			x.Abort()
			return err
		}
	}
	b.notify.sendFlowRemoved(x.Commit())
	return nil
}

// flowMonitor is one monitor, its match laid out for the bridge's TLVs and
// its ports converted for outputsTo.
type flowMonitor struct {
	ofp.FlowMonitor
	port, group uint32
}

// monitorState is a connection's monitors and its update queue.
type monitorState struct {
	s ofconn.Sender
	v uint8

	mu sync.Mutex
	// guarded by mu
	mons map[uint32]*flowMonitor
	// guarded by mu
	queue [][]byte
	// queued counts the bytes queued or being sent.
	// guarded by mu
	queued int
	// guarded by mu
	sending bool
	// guarded by mu
	closed bool
	// paused: updates other than deletions of old flows are withheld;
	// changed records the rules added (FMFAdd) or modified (FMFModify)
	// since, keyed by the rule now in the table.
	// guarded by mu
	paused bool
	// guarded by mu
	changed map[*oftable.Rule]uint16
	idle    *sync.Cond
}

// monitorSet is the bridge's flow monitors: each connection's monitors
// live in its connExt (fm); the set has what they need of the bridge.
type monitorSet struct {
	tables *oftable.Tables
	xl     *xlate.Xlator
	conns  *connmgr.Manager[connExt]
	hooks  *commitHooks
}

// monitors returns the connection's monitor state, creating it.
func (mset *monitorSet) monitors(s ofconn.Sender, st *connState, v uint8) *monitorState {
	if ms := st.X.fm.Load(); ms != nil {
		return ms
	}
	ms := &monitorState{s: s, v: v, mons: map[uint32]*flowMonitor{}}
	ms.idle = sync.NewCond(&ms.mu)
	st.X.fm.Store(ms)
	mset.hooks.enableMonitors()
	return ms
}

// monitorPorts converts a monitor's out_port and out_group for outputsTo.
func monitorPorts(m *ofp.FlowMonitor) (port, group uint32) {
	port = statsPort(uint32(m.OutPort), ofp.FormatNXM)
	group = m.OutGroup
	if group == ofp.GroupAny {
		group = oftable.GroupAny
	}
	return port, group
}

// hasOut is ofproto_rule_has_out_port && ofproto_rule_has_out_group.
func hasOut(acts []ofp.Action, port, group uint32) bool {
	if port != oftable.PortAny && !outputsTo(acts, port, oftable.GroupAny) {
		return false
	}
	return group == oftable.GroupAny || outputsTo(acts, oftable.PortAny, group)
}

// flowBytes views a flow's memory (mf.Flow is fixed-size and
// pointer-free).
func flowBytes(f *mf.Flow) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(f)), unsafe.Sizeof(*f))
}

// looseMatch reports whether rule match r is at least as specific as
// target and agrees with it (cls_rule_is_loose_match), as non-strict
// flow stats select.
func looseMatch(r, target *mf.Match) bool {
	rk, rm := flowBytes(&r.Flow), flowBytes(&r.Mask)
	tk, tm := flowBytes(&target.Flow), flowBytes(&target.Mask)
	for i := range tm {
		if m := tm[i]; m != 0 && (rm[i]&m != m || rk[i]&m != tk[i]&m) {
			return false
		}
	}
	return true
}

// matches reports whether rule r is within monitor m's table, match and
// out_port/out_group (or, for the port, old actions).
func (m *flowMonitor) matches(r *oftable.Rule, oldActs []ofp.Action) bool {
	if m.TableID != 0xff && m.TableID != r.Table {
		return false
	}
	portOK := m.port == oftable.PortAny || outputsTo(r.Actions, m.port, oftable.GroupAny) ||
		(oldActs != nil && outputsTo(oldActs, m.port, oftable.GroupAny))
	if !portOK || (m.group != oftable.GroupAny && !outputsTo(r.Actions, oftable.PortAny, m.group)) {
		return false
	}
	rm := r.Match()
	return looseMatch(&rm, &m.Match)
}

// flowMonitorRequest creates, modifies or deletes monitors and replies
// with the initial flows of those that ask for them.
func (mset *monitorSet) flowMonitorRequest(s ofconn.Sender, st *connState, req *ofp.Msg, body *ofp.FlowMonitorRequest) error {
	tm := mset.xl.Snapshot().TunMap
	// The tables' writer lock orders this against commits: a flow is
	// either in the initial reply or reported as an update, never both.
	ms := mset.monitors(s, st, req.Version)
	x := mset.tables.Begin()
	defer x.Commit()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	var created []*flowMonitor
	fail := func(err error) error {
		for _, m := range created {
			delete(ms.mons, m.ID)
		}
		return err
	}
	for i := range body.Monitors {
		fm := body.Monitors[i]
		if fm.TableID != 0xff && int(fm.TableID) >= oftable.NumTables {
			return fail(&ofp.Error{Code: ofp.OFPBRC_BAD_TABLE_ID})
		}
		switch fm.Command {
		case ofp.FMCAdd, ofp.FMCModify:
			if fm.Command == ofp.FMCModify {
				if ms.mons[fm.ID] == nil {
					return fail(&ofp.Error{Code: ofp.OFPMOFC_UNKNOWN_MONITOR})
				}
				delete(ms.mons, fm.ID)
			} else if ms.mons[fm.ID] != nil {
				return fail(&ofp.Error{Code: ofp.OFPMOFC_MONITOR_EXISTS})
			}
			if err := fm.Match.Relayout(tm); err != nil {
				return fail(&ofp.Error{Code: ofp.NXFMFC_INVALID_TLV_FIELD, Err: err})
			}
			m := &flowMonitor{FlowMonitor: fm}
			m.port, m.group = monitorPorts(&fm)
			ms.mons[fm.ID] = m
			created = append(created, m)
		case ofp.FMCDelete:
			if ms.mons[fm.ID] == nil {
				return fail(&ofp.Error{Code: ofp.OFPMOFC_UNKNOWN_MONITOR})
			}
			delete(ms.mons, fm.ID)
		default:
			// Open vSwitch ignores a monitor with an unknown command.
		}
	}
	// Initial flows, each once, in the order the monitors find them.
	var order []*oftable.Rule
	flags := map[*oftable.Rule]uint16{}
	for _, m := range created {
		if m.Flags&ofp.FMFInitial == 0 {
			continue
		}
		for r := range mset.tables.Rules(m.TableID, &m.Match) {
			if !hasOut(r.Actions, m.port, m.group) {
				continue
			}
			if _, seen := flags[r]; !seen {
				order = append(order, r)
			}
			flags[r] |= ofp.FMFInitial | m.Flags&ofp.FMFInstructions
		}
	}
	rep := &ofp.FlowMonitorReply{}
	for _, r := range order {
		u, err := ms.update(r, ofp.FMEInitial, 0, flags[r])
		if err != nil {
			return fail(err)
		}
		rep.Updates = append(rep.Updates, u)
	}
	msgs, err := ofp.EncodeReplies(req.Version, req.XID, rep)
	if err != nil {
		return fail(err)
	}
	for _, m := range msgs {
		ms.enqueueLocked(m)
	}
	return nil
}

// flowMonitorCancel is NXT/ONFT13_FLOW_MONITOR_CANCEL.
func (mset *monitorSet) flowMonitorCancel(st *connState, c *ofp.FlowMonitorCancel) error {
	ms := st.X.fm.Load()
	if ms != nil {
		ms.mu.Lock()
		defer ms.mu.Unlock()
		if ms.mons[c.ID] != nil {
			delete(ms.mons, c.ID)
			return nil
		}
	}
	return &ofp.Error{Code: ofp.OFPMOFC_UNKNOWN_MONITOR}
}

// update builds a full flow update of rule r.
func (ms *monitorState) update(r *oftable.Rule, event, reason uint16, flags uint16) (ofp.FlowUpdate, error) {
	idleTO, hardTO := r.Timeouts()
	u := ofp.FlowUpdate{
		Event: event, Reason: reason, TableID: r.Table, Priority: r.Priority,
		IdleTimeout: idleTO, HardTimeout: hardTO, Cookie: r.Cookie, Match: r.Match(),
	}
	if flags&ofp.FMFInstructions != 0 {
		acts, err := ofp.AppendOfpacts(nil, r.Actions, ms.v, ms.v >= mf.OF13)
		if err != nil {
			return u, err
		}
		u.Actions = acts
	}
	return u, nil
}

// monitorCommit is the tables' OnCommit hook (writer lock held).
func (mset *monitorSet) monitorCommit(tag any, changes []oftable.Change) {
	req, _ := tag.(*monitorReq)
	mset.conns.Each(func(st *connState) {
		if ms := st.X.fm.Load(); ms != nil {
			ms.report(changes, req)
		}
	})
}

// report queues the updates of one commit for this connection, as
// ofmonitor_report and ofmonitor_flush: one reply (split at 64 KiB) per
// commit, at most one abbreviated update for the connection's own changes.
func (ms *monitorState) report(changes []oftable.Change, req *monitorReq) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if ms.closed || len(ms.mons) == 0 {
		return
	}
	own := req != nil && req.s == ms.s
	rep := &ofp.FlowMonitorReply{}
	sentAbbrev := false
	for _, c := range changes {
		r := c.Rule
		var event, update uint16
		var oldActs []ofp.Action
		switch c.Kind {
		case oftable.ChangeAdded:
			event, update = ofp.FMEAdded, ofp.FMFAdd
			if c.Old != nil && !actionsEqual(c.Old.Actions, r.Actions) {
				oldActs = c.Old.Actions
			}
			if ms.paused {
				delete(ms.changed, c.Old)
				ms.changed[r] = ofp.FMFAdd
				continue
			}
		case oftable.ChangeModified:
			event, update = ofp.FMEModified, ofp.FMFModify
			// Open vSwitch reports a modify only if it changed the
			// actions or the cookie.
			changedActs := !actionsEqual(c.Old.Actions, r.Actions)
			changed := changedActs || c.Old.Cookie != r.Cookie
			if ms.paused {
				f := ms.changed[c.Old]
				delete(ms.changed, c.Old)
				if changed {
					f |= ofp.FMFModify
				}
				if f != 0 {
					ms.changed[r] = f
				}
				continue
			}
			if !changed {
				continue
			}
			if changedActs {
				oldActs = c.Old.Actions
			}
		case oftable.ChangeRemoved:
			event, update = ofp.FMERemoved, ofp.FMFRemoved
			if ms.paused {
				f := ms.changed[r]
				delete(ms.changed, r)
				if f&ofp.FMFAdd != 0 {
					continue // added since the pause: never reported
				}
			}
		default:
			continue
		}
		var flags uint16
		for _, m := range ms.mons {
			if m.Flags&update != 0 && m.matches(r, oldActs) {
				flags |= m.Flags
			}
		}
		if flags == 0 {
			continue
		}
		if flags&ofp.FMFOnlyOwn != 0 || !own || ms.paused {
			var reason uint16
			if event == ofp.FMERemoved {
				reason = uint16(c.Reason)
			}
			u, err := ms.update(r, event, reason, flags)
			if err != nil {
				continue
			}
			rep.Updates = append(rep.Updates, u)
		} else if !sentAbbrev {
			var xid uint32
			if c.Op >= 0 && c.Op < len(req.xids) {
				xid = req.xids[c.Op]
			}
			rep.Updates = append(rep.Updates, ofp.FlowUpdate{Event: ofp.FMEAbbrev, XID: xid})
			sentAbbrev = true
		}
	}
	if len(rep.Updates) > 0 {
		msgs, err := ofp.EncodeReplies(ms.v, 0, rep)
		if err == nil {
			for _, m := range msgs {
				ms.enqueueLocked(m)
			}
		}
	}
	if !ms.paused && ms.queued > monitorPauseBytes {
		ms.paused = true
		ms.changed = map[*oftable.Rule]uint16{}
		if b, err := ofp.Encode(nil, ms.v, 0, ofp.FlowMonitorPause(ms.v, false)); err == nil {
			ms.enqueueLocked(b)
		}
	}
}

// resumeLocked reports what changed while paused and sends RESUMED
// (ofmonitor_resume).
func (ms *monitorState) resumeLocked() {
	type item struct {
		r     *oftable.Rule
		flags uint16
	}
	var items []item
	for r, f := range ms.changed {
		update := uint16(ofp.FMFModify)
		if f&ofp.FMFAdd != 0 {
			update = ofp.FMFAdd | ofp.FMFModify
		}
		var flags uint16
		for _, m := range ms.mons {
			if m.Flags&update != 0 && m.matches(r, nil) {
				flags |= update | m.Flags&ofp.FMFInstructions
			}
		}
		if flags != 0 {
			items = append(items, item{r, flags})
		}
	}
	// Open vSwitch's order is the classifier's; gvs's is deterministic.
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i].r, items[j].r
		if a.Table != b.Table {
			return a.Table < b.Table
		}
		return a.Priority > b.Priority
	})
	rep := &ofp.FlowMonitorReply{}
	for _, it := range items {
		event := uint16(ofp.FMEModified)
		if it.flags&ofp.FMFAdd != 0 {
			event = ofp.FMEAdded
		}
		if u, err := ms.update(it.r, event, 0, it.flags); err == nil {
			rep.Updates = append(rep.Updates, u)
		}
	}
	ms.paused, ms.changed = false, nil
	if len(rep.Updates) > 0 {
		if msgs, err := ofp.EncodeReplies(ms.v, 0, rep); err == nil {
			for _, m := range msgs {
				ms.enqueueLocked(m)
			}
		}
	}
	if b, err := ofp.Encode(nil, ms.v, 0, ofp.FlowMonitorPause(ms.v, true)); err == nil {
		ms.enqueueLocked(b)
	}
}

// enqueueLocked queues an encoded message and starts the sender.
func (ms *monitorState) enqueueLocked(b []byte) {
	if ms.closed {
		return
	}
	ms.queue = append(ms.queue, b)
	ms.queued += len(b)
	if !ms.sending {
		ms.sending = true
		go ms.run()
	}
}

// run sends the queue in order, resumes a paused connection once the
// queue is empty, and exits when there is nothing left.
func (ms *monitorState) run() {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for {
		if len(ms.queue) == 0 {
			if ms.paused && !ms.closed {
				ms.resumeLocked()
				continue
			}
			ms.sending = false
			ms.idle.Broadcast()
			return
		}
		b := ms.queue[0]
		ms.queue[0] = nil
		ms.queue = ms.queue[1:]
		ms.mu.Unlock()
		err := ms.send(b)
		ms.mu.Lock()
		ms.queued -= len(b)
		if err != nil {
			ms.closed, ms.queue, ms.queued = true, nil, 0
		}
	}
}

func (ms *monitorState) send(b []byte) error {
	if rs, ok := ms.s.(rawSender); ok {
		return rs.SendRaw(b)
	}
	m, err := ofp.Decode(b)
	if err != nil {
		return err
	}
	return ms.s.Send(m.XID, m.Body)
}

// drainMonitors waits until the connection's queued updates have been
// handed to the connection, so that a barrier reply follows them (as in
// Open vSwitch, where both share the connection's queue).
func drainMonitors(st *connState) {
	ms := st.X.fm.Load()
	if ms == nil {
		return
	}
	ms.mu.Lock()
	for ms.sending && !ms.closed {
		ms.idle.Wait()
	}
	ms.mu.Unlock()
}

// actionsEqual is ofpacts_equal over decoded actions.
func actionsEqual(a, b []ofp.Action) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}
