package ofswitch

import (
	"errors"

	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
)

// bundle is an open or closed bundle of a connection: the messages added
// to it, decoded, in order.
type bundle struct {
	flags  uint16
	closed bool
	msgs   []bundleMsg
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

func bundleReply(m *ofp.Msg, bc *ofp.BundleCtrl, typ uint16) *ofp.BundleCtrl {
	// Open vSwitch replies with no flags, whatever the request had.
	return &ofp.BundleCtrl{BundleID: bc.BundleID, Type: typ}
}

// bundleCtrl implements bundle open, close, commit and discard, as Open
// vSwitch's ofp-bundle.c and ofproto.c.
func (b *Bridge) bundleCtrl(s ofconn.Sender, st *connState, m *ofp.Msg, bc *ofp.BundleCtrl) error {
	bd := st.bundles[bc.BundleID]
	switch bc.Type {
	case ofp.BundleOpenRequest:
		if bd != nil {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID, Err: errors.New("bundle exists")}
		}
		if bc.Flags&^bundleFlagsValid != 0 {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		st.bundles[bc.BundleID] = &bundle{flags: bc.Flags}
		return s.Reply(m, bundleReply(m, bc, ofp.BundleOpenReply))
	case ofp.BundleCloseRequest:
		switch {
		case bd == nil:
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID}
		case bd.closed:
			delete(st.bundles, bc.BundleID)
			return &ofp.Error{Code: ofp.OFPBFC_BUNDLE_CLOSED}
		case bd.flags != bc.Flags:
			delete(st.bundles, bc.BundleID)
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		bd.closed = true
		return s.Reply(m, bundleReply(m, bc, ofp.BundleCloseReply))
	case ofp.BundleCommitRequest:
		if bd == nil {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID}
		}
		delete(st.bundles, bc.BundleID)
		if bd.flags != bc.Flags {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		if err := b.commitBundle(s, bd); err != nil {
			return err
		}
		return s.Reply(m, bundleReply(m, bc, ofp.BundleCommitReply))
	case ofp.BundleDiscardRequest:
		if bd == nil {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_ID}
		}
		delete(st.bundles, bc.BundleID)
		return s.Reply(m, bundleReply(m, bc, ofp.BundleDiscardReply))
	}
	return &ofp.Error{Code: ofp.OFPBFC_BAD_TYPE}
}

// bundleAdd decodes and stages a message in a bundle (opening it
// implicitly, as Open vSwitch does).
func (b *Bridge) bundleAdd(s ofconn.Sender, st *connState, m *ofp.Msg, ba *ofp.BundleAdd) error {
	bd := st.bundles[ba.BundleID]
	if bd == nil {
		if ba.Flags&^bundleFlagsValid != 0 {
			return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
		}
		bd = &bundle{flags: ba.Flags}
		st.bundles[ba.BundleID] = bd
	}
	switch {
	case bd.closed:
		delete(st.bundles, ba.BundleID)
		return &ofp.Error{Code: ofp.OFPBFC_BUNDLE_CLOSED}
	case bd.flags != ba.Flags:
		delete(st.bundles, ba.BundleID)
		return &ofp.Error{Code: ofp.OFPBFC_BAD_FLAGS}
	case ba.InnerErr != nil:
		return ba.InnerErr
	case ba.Inner == nil:
		return &ofp.Error{Code: ofp.OFPBFC_MSG_UNSUP}
	}
	if err := b.checkWrite(s); err != nil {
		return err
	}
	switch inner := ba.Inner.Body.(type) {
	case *ofp.FlowMod:
		fm := new(oftable.FlowMod)
		err := b.decodeFlowModNoGroups(fm, inner, ba.Inner.Version, st)
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

// commitBundle applies a bundle's flow_mods in one transaction (atomic for
// packets); a failing message aborts them all, gets its own error reply,
// and the commit fails with OFPBFC_MSG_FAILED. Packet-outs run after the
// commit.
func (b *Bridge) commitBundle(s ofconn.Sender, bd *bundle) error {
	// Group mods first: the bundle's flows may refer to its groups.
	// (They are applied one by one, not atomically with the flows.)
	for _, bm := range bd.msgs {
		if bm.gm == nil {
			continue
		}
		if err := b.groupMod(bm.gm); err != nil {
			code := ofp.CodeOf(err)
			s.ReplyError(bm.req, code)
			return &ofp.Error{Code: ofp.OFPBFC_MSG_FAILED, Err: err}
		}
	}
	x := b.tables.Begin()
	x.Tag = bundleMonitorTag(s, bd)
	for _, bm := range bd.msgs {
		if bm.fm == nil {
			continue
		}
		err := b.checkFlowGroups(bm.fm)
		if err == nil {
			err = x.Apply(bm.fm)
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
	b.sendFlowRemoved(x.Commit())
	for _, bm := range bd.msgs {
		if bm.po != nil {
			if err := b.packetOut(s, bm.req, bm.po); err != nil {
				s.ReplyError(bm.req, ofp.CodeOf(err))
			}
		}
	}
	return nil
}
