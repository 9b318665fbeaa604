package ofswitch

import (
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// forwardGroupMod sends a group_mod that connection src applied to the
// other connections that asked for request forwarding (Open vSwitch's
// connmgr_send_requestforward), each in its own version. Before
// OpenFlow 1.5 a bucket insert or remove goes out as the modify (or add,
// if the group did not exist) with the group's new buckets.
func (n *notifier) forwardGroupMod(src ofconn.Sender, xid uint32, gm *ofp.GroupMod, existed bool, buckets []ofp.Bucket) {
	n.forwardRequest(src, xid, ofp.RequestForwardGroupMod, func(v uint8) ofp.Message {
		if (gm.Command != ofp.GroupInsertBucket && gm.Command != ofp.GroupRemoveBucket) || v == mf.OF10 || v >= mf.OF15 {
			return gm
		}
		c := *gm
		c.Command, c.Buckets, c.CommandBucketID = ofp.GroupModify, buckets, 0
		if !existed {
			c.Command = ofp.GroupAdd
		}
		return &c
	})
}

// forwardMeterMod forwards a meter_mod (to OpenFlow 1.3+ connections).
func (n *notifier) forwardMeterMod(src ofconn.Sender, xid uint32, mm *ofp.MeterMod) {
	n.forwardRequest(src, xid, ofp.RequestForwardMeterMod, func(v uint8) ofp.Message {
		if v < mf.OF13 {
			return nil
		}
		return mm
	})
}

func (n *notifier) forwardRequest(src ofconn.Sender, xid uint32, reason uint8, inner func(v uint8) ofp.Message) {
	n.conns.Each(func(st *connState) {
		s := st.Sender
		if s == src || !wants(s, st, ofp.AsyncRequestForward, reason) {
			return
		}
		if m := inner(s.Version()); m != nil {
			s.Send(0, &ofp.RequestForward{XID: xid, Inner: m})
		}
	})
}
