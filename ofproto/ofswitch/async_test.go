package ofswitch

import (
	"testing"

	"github.com/gvs-project/gvs/ofproto/connmgr"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/oftable"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// newTestNotifier is a notifier over its own tables and connection set,
// without a bridge.
func newTestNotifier(t *testing.T) *notifier {
	t.Helper()
	tables, err := oftable.New(oftable.Config{OutputsTo: outputsTo})
	if err != nil {
		t.Fatal(err)
	}
	rt := xlate.NewRecircTable()
	xl := xlate.New(tables, rt)
	up := upcall.New(upcall.Config{Name: "br0", Xlator: xl, Recirc: rt})
	conns := connmgr.New(connmgr.Config[connExt]{Name: "br0"})
	t.Cleanup(func() { conns.Close(); up.Close() })
	n := &notifier{name: "br0", conns: conns, xl: xl, recirc: rt, tables: tables, up: up,
		logf: t.Logf, debugf: t.Logf}
	return n
}

// TestNotifierForwardsGroupModInEachConnectionsVersion checks request
// forwarding: only to connections that asked for it, never back to the
// sender, and an OpenFlow 1.3 connection gets a bucket insert as the
// modify with the group's new buckets.
func TestNotifierForwardsGroupModInEachConnectionsVersion(t *testing.T) {
	n := newTestNotifier(t)
	src, of13, of15, quiet := newFMSender(4), newFMSender(4), newFMSender(6), newFMSender(4)
	for _, s := range []*fmSender{src, of13, of15} {
		st := n.conns.Get(s, true)
		ac := defaultAsync(s.v)
		ac.Master[ofp.AsyncRequestForward] = 1<<ofp.RequestForwardGroupMod | 1<<ofp.RequestForwardMeterMod
		st.Async.Store(&ac)
	}
	n.conns.Get(quiet, true)
	buckets := []ofp.Bucket{{ID: 1, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny}, {ID: 2, WatchPort: ofp.PortAny, WatchGroup: ofp.GroupAny}}
	gm := &ofp.GroupMod{Command: ofp.GroupInsertBucket, GroupID: 7, Buckets: buckets[1:]}
	n.forwardGroupMod(src, 99, gm, true, buckets)

	m := of13.next(t)
	rf, ok := m.Body.(*ofp.RequestForward)
	if !ok {
		t.Fatalf("OpenFlow 1.3 got %s, want a request forward", m.Raw)
	}
	inner, ok := rf.Inner.(*ofp.GroupMod)
	if !ok || rf.XID != 99 || inner.Command != ofp.GroupModify || len(inner.Buckets) != 2 {
		t.Fatalf("OpenFlow 1.3 forward %+v inner %+v", rf, rf.Inner)
	}
	m = of15.next(t)
	rf, ok = m.Body.(*ofp.RequestForward)
	if !ok {
		t.Fatalf("OpenFlow 1.5 got %s, want a request forward", m.Raw)
	}
	if inner, ok := rf.Inner.(*ofp.GroupMod); !ok || inner.Command != ofp.GroupInsertBucket || len(inner.Buckets) != 1 {
		t.Fatalf("OpenFlow 1.5 inner %+v", rf.Inner)
	}
	if len(src.msgs) != 0 || len(quiet.msgs) != 0 {
		t.Fatalf("sender got %d messages, unasked connection %d", len(src.msgs), len(quiet.msgs))
	}
}

// TestNotifierMissPacketInFollowsOF10Connections checks that table misses
// make packet-ins only while an OpenFlow 1.0-1.2 connection with
// controller id 0 is open.
func TestNotifierMissPacketInFollowsOF10Connections(t *testing.T) {
	n := newTestNotifier(t)
	of13 := newFMSender(4)
	n.conns.Get(of13, true)
	n.updateMissPacketIn()
	// missOn reads the translator's setting without changing it.
	missOn := func() bool {
		if n.xl.SetMissPacketIn(false) {
			n.xl.SetMissPacketIn(true)
			return true
		}
		return false
	}
	if missOn() {
		t.Fatal("an OpenFlow 1.3 connection turned miss packet-ins on")
	}
	of10 := newFMSender(1)
	st := n.conns.Get(of10, true)
	n.updateMissPacketIn()
	if !missOn() {
		t.Fatal("an OpenFlow 1.0 connection did not turn miss packet-ins on")
	}
	st.ControllerID.Store(5)
	n.updateMissPacketIn()
	if missOn() {
		t.Fatal("a connection with controller id 5 kept miss packet-ins on")
	}
}

// TestNotifierSendsFlowRemovedOnlyWhenAsked checks flow_removed: for a
// rule with send_flow_rem, to a connection whose configuration wants the
// reason, in its flow format.
func TestNotifierSendsFlowRemovedOnlyWhenAsked(t *testing.T) {
	n := newTestNotifier(t)
	of10, of13 := newFMSender(1), newFMSender(4)
	n.conns.Get(of10, true)
	n.conns.Get(of13, true)
	x := n.tables.Begin()
	keep := addFlow(1, 10, output(2))
	keep.Flags = oftable.FlagSendFlowRem
	silent := addFlow(2, 10, output(1))
	for _, fm := range []*oftable.FlowMod{keep, silent} {
		if err := x.Apply(fm); err != nil {
			t.Fatal(err)
		}
	}
	x.Commit()
	x = n.tables.Begin()
	if err := x.Apply(delFlows(0)); err != nil {
		t.Fatal(err)
	}
	n.sendFlowRemoved(x.Commit())
	for _, s := range []*fmSender{of10, of13} {
		m := s.next(t)
		fr, ok := m.Body.(*ofp.FlowRemoved)
		if !ok || fr.Match.Flow.InPort != 1 || fr.Reason != oftable.RemovedDelete {
			t.Fatalf("version %d got %s %+v", s.v, m.Raw, m.Body)
		}
		if len(s.msgs) != 0 {
			t.Fatalf("version %d got %d more messages", s.v, len(s.msgs))
		}
	}
}
