package ofswitch

import (
	"errors"
	"maps"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// bundle is an open or closed bundle of a connection: the messages added
// to it, decoded, in order.
type bundle struct {
	flags  uint16
	closed bool
	msgs   []bundleMsg
	// opener is the message that opened the bundle (an open request or
	// the first add), sent back with OFPBFC_TIMEOUT; used is when the
	// bundle last got a message.
	opener *ofp.Msg
	used   time.Time
}

// bundleMsg is one added message: a flow_mod (fm) or a packet-out (po),
// with the add's request for error replies.
type bundleMsg struct {
	req *ofp.Msg
	fm  *oftable.FlowMod
	po  *ofp.PacketOut
	gm  *ofp.GroupMod
}

const bundleFlagsValid = ofp.BundleAtomic | ofp.BundleOrdered

// defaultBundleIdleTimeout is Open vSwitch's bundle-idle-timeout default.
const defaultBundleIdleTimeout = 10 * time.Second

func bundleReply(m *ofp.Msg, bc *ofp.BundleCtrl, typ uint16) *ofp.BundleCtrl {
	// Open vSwitch replies with no flags, whatever the request had.
	return &ofp.BundleCtrl{BundleID: bc.BundleID, Type: typ}
}

// bundleCtrl implements bundle open, close, commit and discard, as Open
// vSwitch's ofp-bundle.c and ofproto.c.
func (b *Bridge) bundleCtrl(s ofconn.Sender, st *connState, m *ofp.Msg, bc *ofp.BundleCtrl) error {
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
		if err := b.commitBundle(s, bd); err != nil {
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

// bundleAdd decodes and stages a message in a bundle (opening it
// implicitly, as Open vSwitch does). The message is checked as Open
// vSwitch's handle_bundle_add does (decoding, actions, table); a failing
// one is not added and the bundle stays open.
func (b *Bridge) bundleAdd(s ofconn.Sender, st *connState, m *ofp.Msg, ba *ofp.BundleAdd) error {
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
		fm := new(oftable.FlowMod)
		err := b.fmd.decodeNoGroups(fm, inner, ba.Inner.Version, st)
		if err == nil {
			err = oftable.CheckTable(fm)
		}
		if err != nil {
			return err
		}
		bd.msgs = append(bd.msgs, bundleMsg{req: ba.Inner, fm: fm})
	case *ofp.PacketOut:
		bd.msgs = append(bd.msgs, bundleMsg{req: ba.Inner, po: inner})
	case *ofp.GroupMod:
		bd.msgs = append(bd.msgs, bundleMsg{req: ba.Inner, gm: inner})
	default:
		return &ofp.Error{Code: ofp.OFPBFC_MSG_UNSUP}
	}
	return nil
}

// expireBundles discards the bundles that got no message for the idle
// timeout, telling their connection with OFPBFC_TIMEOUT and the message
// that opened them, as Open vSwitch's bundle_remove_expired.
func (b *Bridge) expireBundles(now time.Time) {
	idle := defaultBundleIdleTimeout
	if f := b.cfg.BundleIdleTimeout; f != nil {
		if d := f(); d > 0 {
			idle = d
		}
	}
	b.conns.Each(func(st *connState) {
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

// commitBundle applies a bundle's messages in order, all or nothing, as
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
func (b *Bridge) commitBundle(s ofconn.Sender, bd *bundle) error {
	b.gmu.Lock()
	locked := true
	defer func() {
		if locked {
			b.gmu.Unlock()
		}
	}()
	staged := maps.Clone(b.groups.m)
	if staged == nil {
		staged = map[uint32]*groupEntry{}
	}
	var stagedX map[uint32]*xlate.Group // translation's form, rebuilt when groups change
	groupsChanged := false
	x := b.tables.Begin()
	x.Tag = bundleMonitorTag(s, bd)
	var outs []*preparedPacketOut
	for _, bm := range bd.msgs {
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
			if err = b.fmd.checkGroupsIn(bm.fm, stagedX); err == nil {
				err = x.Apply(bm.fm)
			}
		case bm.po != nil:
			if stagedX == nil {
				stagedX = xlateGroups(staged)
			}
			var p *preparedPacketOut
			if p, err = b.exec.prepare(bm.req, bm.po, &stagedView{version: x.Version(), groups: stagedX}); err == nil {
				outs = append(outs, p)
			}
		}
		if err != nil {
			x.Abort()
			code := ofp.CodeOf(err)
			if code == 0 {
				code = ofp.OFPBRC_EPERM
			}
			s.ReplyError(bm.req, code)
			return &ofp.Error{Code: ofp.OFPBFC_MSG_FAILED, Err: err}
		}
	}
	if groupsChanged {
		// Deleted groups stay until the flows that used them are gone.
		union := maps.Clone(staged)
		for id, e := range b.groups.m {
			if union[id] == nil {
				union[id] = e
			}
		}
		b.xl.SetGroups(xlateGroups(union))
	}
	removed := x.Commit()
	if groupsChanged {
		b.groups.m = staged
		b.groups.publishGroups()
		b.up.Changed()
	}
	b.gmu.Unlock()
	locked = false
	b.notify.sendFlowRemoved(removed)
	for _, p := range outs {
		if err := b.exec.finish(p); err != nil {
			b.cfg.Debugf("%s: bundled packet-out: %v", b.cfg.Name, err)
		}
	}
	return nil
}
