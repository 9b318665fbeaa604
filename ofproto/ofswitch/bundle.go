package ofswitch

import (
	"errors"
	"iter"
	"maps"
	"time"

	"github.com/gvs-project/gvs/ofproto/connmgr"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// bundle is an open or closed bundle of a connection: the messages added
// to it, decoded, in order.
type bundle struct {
	flags  uint16
	closed bool
	msgs   msgList
	// opener is the message that opened the bundle (an open request or
	// the first add), sent back with OFPBFC_TIMEOUT; used is when the
	// bundle last got a message.
	opener *ofp.Msg
	used   time.Time
	// scratch is what each flow_mod added is decoded into before it is
	// held.
	scratch *oftable.FlowMod
}

// bundleMsg is one added message: a flow_mod (fm), a packet-out (po) or
// a group_mod (gm), with the add's request for error replies. A flow_mod
// is held packed, with the wire message it came in (raw), decoded again
// only for an error reply: a bundle of 100,000 flows holds no decoded
// match or message.
type bundleMsg struct {
	req *ofp.Msg
	raw []byte
	xid uint32 // of a flow_mod (req's otherwise)
	fm  *oftable.HeldFlowMod
	po  *ofp.PacketOut
	gm  *ofp.GroupMod
}

// msgList is a bundle's messages, and its flow_mods held packed, in
// chunks: adding 100,000 messages copies none of them and allocates
// a few hundred arrays, not one per flow_mod.
type msgList struct {
	msgs [][]bundleMsg
	held [][]oftable.HeldFlowMod
}

const msgChunk = 512

func (l *msgList) add(m bundleMsg) {
	if n := len(l.msgs); n == 0 || len(l.msgs[n-1]) == msgChunk {
		l.msgs = append(l.msgs, make([]bundleMsg, 0, msgChunk))
	}
	last := &l.msgs[len(l.msgs)-1]
	*last = append(*last, m)
}

// hold returns a slot for a held flow_mod, valid while the list is.
func (l *msgList) hold() *oftable.HeldFlowMod {
	if n := len(l.held); n == 0 || len(l.held[n-1]) == msgChunk {
		l.held = append(l.held, make([]oftable.HeldFlowMod, 0, msgChunk))
	}
	last := &l.held[len(l.held)-1]
	*last = append(*last, oftable.HeldFlowMod{})
	return &(*last)[len(*last)-1]
}

// all yields the messages in the order they were added.
func (l *msgList) all() iter.Seq[*bundleMsg] {
	return func(yield func(*bundleMsg) bool) {
		for _, c := range l.msgs {
			for i := range c {
				if !yield(&c[i]) {
					return
				}
			}
		}
	}
}

// request returns the message as added, for an error reply.
func (bm *bundleMsg) request() *ofp.Msg {
	if bm.req != nil {
		return bm.req
	}
	m, err := ofp.Decode(bm.raw)
	if err != nil {
		// It decoded when it was added; answer with what the header says.
		h, _ := ofp.ParseHeader(bm.raw)
		return &ofp.Msg{Version: h.Version, XID: h.XID}
	}
	return m
}

const bundleFlagsValid = ofp.BundleAtomic | ofp.BundleOrdered

// defaultBundleIdleTimeout is Open vSwitch's bundle-idle-timeout default.
const defaultBundleIdleTimeout = 10 * time.Second

// bundler implements OpenFlow bundles (Open vSwitch's ofp-bundle.c and
// the bundle parts of ofproto.c): open, add, close, discard, the idle
// timeout, and the all-or-nothing commit of flow_mods, group_mods and
// packet-outs. Each connection's bundles are in its connExt; the bundler
// holds what a commit needs of the bridge.
type bundler struct {
	name  string
	conns *connmgr.Manager[connExt]
	// idleTimeout is Config.BundleIdleTimeout.
	idleTimeout func() time.Duration
	// groups is the group table a commit stages group mods on (under
	// its mu, the bridge's gmu); tables the flow tables it stages
	// flow_mods in.
	groups *groupTable
	tables *oftable.Tables
	xl     *xlate.Xlator
	up     *upcall.Handler
	fmd    *fmDecoder
	exec   *executor
	notify *notifier
	debugf func(format string, args ...any)
}

func bundleReply(m *ofp.Msg, bc *ofp.BundleCtrl, typ uint16) *ofp.BundleCtrl {
	// Open vSwitch replies with no flags, whatever the request had.
	return &ofp.BundleCtrl{BundleID: bc.BundleID, Type: typ}
}

// ctrl implements bundle open, close, commit and discard, as Open
// vSwitch's ofp-bundle.c and ofproto.c.
func (bu *bundler) ctrl(s ofconn.Sender, st *connState, m *ofp.Msg, bc *ofp.BundleCtrl) error {
	st.X.bundleMu.Lock()
	bd := st.X.bundles[bc.BundleID]
	switch bc.Type {
	case ofp.BundleOpenRequest:
		defer st.X.bundleMu.Unlock()
		if bd != nil {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID, Err: errors.New("bundle exists")}
		}
		if bc.Flags&^bundleFlagsValid != 0 {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		st.X.bundles[bc.BundleID] = &bundle{flags: bc.Flags, opener: m, used: time.Now()}
		return s.Reply(m, bundleReply(m, bc, ofp.BundleOpenReply))
	case ofp.BundleCloseRequest:
		defer st.X.bundleMu.Unlock()
		switch {
		case bd == nil:
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID}
		case bd.closed:
			delete(st.X.bundles, bc.BundleID)
			return &ofp.Error{Code: ofp.OFPBFC_BUNDLE_CLOSED}
		case bd.flags != bc.Flags:
			delete(st.X.bundles, bc.BundleID)
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		bd.closed, bd.used = true, time.Now()
		return s.Reply(m, bundleReply(m, bc, ofp.BundleCloseReply))
	case ofp.BundleCommitRequest:
		if bd != nil {
			delete(st.X.bundles, bc.BundleID)
		}
		st.X.bundleMu.Unlock()
		if bd == nil {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID}
		}
		if bd.flags != bc.Flags {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		if err := bu.commit(s, bd); err != nil {
			return err
		}
		return s.Reply(m, bundleReply(m, bc, ofp.BundleCommitReply))
	case ofp.BundleDiscardRequest:
		defer st.X.bundleMu.Unlock()
		if bd == nil {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID}
		}
		delete(st.X.bundles, bc.BundleID)
		return s.Reply(m, bundleReply(m, bc, ofp.BundleDiscardReply))
	}
	st.X.bundleMu.Unlock()
	return &ofp.Error{Code: ofp.OFPBFC_BAD_TYPE}
}

// add decodes and stages a message in a bundle (opening it
// implicitly, as Open vSwitch does). The message is checked as Open
// vSwitch's handle_bundle_add does (decoding, actions, table); a failing
// one is not added and the bundle stays open.
func (bu *bundler) add(s ofconn.Sender, st *connState, m *ofp.Msg, ba *ofp.BundleAdd) error {
	st.X.bundleMu.Lock()
	defer st.X.bundleMu.Unlock()
	bd := st.X.bundles[ba.BundleID]
	if bd == nil {
		if ba.Flags&^bundleFlagsValid != 0 {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		bd = &bundle{flags: ba.Flags, opener: m, used: time.Now()}
		st.X.bundles[ba.BundleID] = bd
	}
	switch {
	case bd.closed:
		delete(st.X.bundles, ba.BundleID)
		return &ofp.Error{Code: ofp.OFPBFC_BUNDLE_CLOSED}
	case bd.flags != ba.Flags:
		delete(st.X.bundles, ba.BundleID)
		return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
	case ba.InnerErr != nil:
		return ba.InnerErr
	case ba.Inner == nil:
		return &ofp.Error{Code: ofp.OFPBFC_MSG_UNSUP}
	}
	bd.used = time.Now()
	if err := checkWrite(s); err != nil {
		return err
	}
	switch inner := ba.Inner.Body.(type) {
	case *ofp.FlowMod:
		if bd.scratch == nil {
			bd.scratch = new(oftable.FlowMod)
		}
		fm := bd.scratch
		err := bu.fmd.decodeNoGroups(fm, inner, ba.Inner.Version, st)
		if err == nil {
			err = oftable.CheckTable(fm)
		}
		if err != nil {
			return err
		}
		held := bd.msgs.hold()
		*held = oftable.Hold(fm)
		fm.Actions, fm.Conjunctions = nil, nil // now the held flow_mod's
		bm := bundleMsg{raw: ba.Msg, xid: ba.Inner.XID, fm: held}
		if len(ba.Msg) == 0 { // made by hand, not decoded
			bm.req = ba.Inner
		}
		bd.msgs.add(bm)
	case *ofp.PacketOut:
		bd.msgs.add(bundleMsg{req: ba.Inner, po: inner})
	case *ofp.GroupMod:
		bd.msgs.add(bundleMsg{req: ba.Inner, gm: inner})
	default:
		return &ofp.Error{Code: ofp.OFPBFC_MSG_UNSUP}
	}
	return nil
}

// expire discards the bundles that got no message for the idle
// timeout, telling their connection with OFPBFC_TIMEOUT and the message
// that opened them, as Open vSwitch's bundle_remove_expired.
func (bu *bundler) expire(now time.Time) {
	idle := defaultBundleIdleTimeout
	if f := bu.idleTimeout; f != nil {
		if d := f(); d > 0 {
			idle = d
		}
	}
	bu.conns.Each(func(st *connState) {
		s := st.Sender
		st.X.bundleMu.Lock()
		var expired []*bundle
		for id, bd := range st.X.bundles {
			if now.Sub(bd.used) > idle {
				expired = append(expired, bd)
				delete(st.X.bundles, id)
			}
		}
		st.X.bundleMu.Unlock()
		for _, bd := range expired {
			s.ReplyError(bd.opener, ofp.OFPBFC_TIMEOUT)
		}
	})
}

// commit applies a bundle's messages in order, all or nothing, as
// Open vSwitch's do_bundle_commit: group mods on a staged copy of the
// group table, flow_mods in one table transaction (a group delete also
// stages the deletion of the flows that use the group, at its place in
// the order), packet-outs checked and translated against what the bundle
// staged before them. A failing message aborts everything, gets its own
// error reply, and the commit fails with OFPBFC_MSG_FAILED; nothing was
// visible. On success the groups the bundle deletes stay visible until
// the flows are committed (flows added by the bundle may use its new
// groups, flows it deletes may use its deleted ones), then the
// packet-outs run.
func (bu *bundler) commit(s ofconn.Sender, bd *bundle) error {
	bu.groups.mu.Lock()
	locked := true
	defer func() {
		if locked {
			bu.groups.mu.Unlock()
		}
	}()
	staged := maps.Clone(bu.groups.m)
	if staged == nil {
		staged = map[uint32]*groupEntry{}
	}
	var stagedX map[uint32]*xlate.Group // translation's form, rebuilt when groups change
	groupsChanged := false
	x := bu.tables.Begin()
	x.Tag = bundleMonitorTag(s, bd)
	var outs []*preparedPacketOut
	fm := bd.scratch
	bd.scratch = nil
	if fm == nil {
		fm = new(oftable.FlowMod)
	}
	for bm := range bd.msgs.all() {
		var err error
		switch {
		case bm.gm != nil:
			var deleted []uint32
			if deleted, err = stageGroupMod(staged, bm.gm); err == nil {
				groupsChanged, stagedX = true, nil
				for _, id := range deleted {
					if err = x.Apply(groupDeleteFlows(id)); err != nil {
						break
					}
				}
			}
		case bm.fm != nil:
			if stagedX == nil {
				stagedX = xlateGroups(staged)
			}
			bm.fm.Unpack(fm)
			if err = bu.fmd.checkGroupsIn(fm, stagedX); err == nil {
				err = x.Apply(fm)
			}
			*bm.fm = oftable.HeldFlowMod{} // the rule holds what it needs
			bm.fm = nil
		case bm.po != nil:
			if stagedX == nil {
				stagedX = xlateGroups(staged)
			}
			var p *preparedPacketOut
			if p, err = bu.exec.prepare(bm.req, bm.po, &stagedView{version: x.Version(), groups: stagedX}); err == nil {
				outs = append(outs, p)
			}
		}
		if err != nil {
			x.Abort()
			code := ofp.CodeOf(err)
			if code == 0 {
				code = ofp.OFPBRC_EPERM
			}
			s.ReplyError(bm.request(), code)
			return &ofp.Error{Code: ofp.OFPBFC_MSG_FAILED, Err: err}
		}
	}
	if groupsChanged {
		// Deleted groups stay until the flows that used them are gone.
		union := maps.Clone(staged)
		for id, e := range bu.groups.m {
			if union[id] == nil {
				union[id] = e
			}
		}
		bu.xl.SetGroups(xlateGroups(union))
	}
	removed := x.Commit()
	if groupsChanged {
		bu.groups.m = staged
		bu.groups.publishGroups()
		bu.up.Changed()
	}
	bu.groups.mu.Unlock()
	locked = false
	bu.notify.sendFlowRemoved(removed)
	for _, p := range outs {
		if err := bu.exec.finish(p); err != nil {
			bu.debugf("%s: bundled packet-out: %v", bu.name, err)
		}
	}
	return nil
}
