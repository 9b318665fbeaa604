package ofswitch

import (
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/ofp"
)

// newTestBundler is a bundler over its own tables, groups and executor,
// with one OpenFlow 1.4 connection.
func newTestBundler(t *testing.T) (*bundler, *fmSender, *connState) {
	t.Helper()
	e, _ := newTestExecutor(t)
	n := e.notify
	d := &fmDecoder{xl: n.xl, groups: e.groups}
	bu := &bundler{name: "br0", conns: n.conns, groups: e.groups, tables: n.tables, xl: n.xl, up: n.up, fmd: d,
		exec: e, notify: n, debugf: t.Logf}
	s := newFMSender(5)
	st := n.conns.Get(s, true)
	st.X.bundles = map[uint32]*bundle{}
	return bu, s, st
}

func bundleCtrlMsg(id uint32, typ uint16) (*ofp.Msg, *ofp.BundleCtrl) {
	bc := &ofp.BundleCtrl{BundleID: id, Type: typ, Flags: ofp.BundleAtomic}
	return &ofp.Msg{Version: 5, XID: 10 + uint32(typ), Body: bc}, bc
}

func bundleAddFlow(t *testing.T, id uint32, xid uint32, group uint32) (*ofp.Msg, *ofp.BundleAdd) {
	t.Helper()
	acts := ofp.Action{Type: ofp.ActOutput, Port: 2}
	if group != 0 {
		acts = ofp.Action{Type: ofp.ActGroup, Arg: uint64(group)}
	}
	fm := &ofp.FlowMod{Format: ofp.FormatOXM, Command: ofp.FlowAdd, Priority: uint16(xid), OutPort: ofp.PortAny, OutGroup: ofp.GroupAny,
		BufferID: ofp.BufferNone, Instructions: wireActions(t, 5, true, acts)}
	inner := &ofp.Msg{Version: 5, XID: xid, Body: fm}
	ba := &ofp.BundleAdd{BundleID: id, Flags: ofp.BundleAtomic, Inner: inner}
	return &ofp.Msg{Version: 5, XID: xid, Body: ba}, ba
}

// TestBundlerCommitsAllOrNothing checks a bundle's life: open, adds,
// close, commit; a commit whose second flow_mod uses a missing group
// applies nothing, answers that flow_mod with its error and fails with
// OFPBFC_MSG_FAILED; a good bundle's flows all appear.
func TestBundlerCommitsAllOrNothing(t *testing.T) {
	bu, s, st := newTestBundler(t)
	m, bc := bundleCtrlMsg(1, ofp.BundleOpenRequest)
	if err := bu.ctrl(s, st, m, bc); err != nil {
		t.Fatal(err)
	}
	if r, ok := s.next(t).Body.(*ofp.BundleCtrl); !ok || r.Type != ofp.BundleOpenReply {
		t.Fatalf("open reply %+v", r)
	}
	for i, g := range []uint32{0, 7} {
		m, ba := bundleAddFlow(t, 1, uint32(100+i), g)
		if err := bu.add(s, st, m, ba); err != nil {
			t.Fatal(err)
		}
	}
	m, bc = bundleCtrlMsg(1, ofp.BundleCommitRequest)
	if err := bu.ctrl(s, st, m, bc); ofp.CodeOf(err) != ofp.OFPBFC_MSG_FAILED {
		t.Fatalf("commit: %v, want OFPBFC_MSG_FAILED", err)
	}
	if r := s.next(t); r.XID != 101 || r.Raw != ofp.RawOFPT_ERROR {
		t.Fatalf("got %s xid %d, want the second flow_mod's error", r.Raw, r.XID)
	}
	if n := bu.tables.Count(); n != 0 {
		t.Fatalf("a failed commit left %d flows", n)
	}
	if err := bu.ctrl(s, st, m, bc); ofp.CodeOf(err) != ofp.OFPBFC_BAD_ID {
		t.Fatalf("a failed bundle was kept: %v", err)
	}

	for i := range 2 {
		m, ba := bundleAddFlow(t, 2, uint32(200+i), 0)
		if err := bu.add(s, st, m, ba); err != nil {
			t.Fatal(err)
		}
	}
	m, bc = bundleCtrlMsg(2, ofp.BundleCommitRequest)
	if err := bu.ctrl(s, st, m, bc); err != nil {
		t.Fatal(err)
	}
	if r, ok := s.next(t).Body.(*ofp.BundleCtrl); !ok || r.Type != ofp.BundleCommitReply {
		t.Fatalf("commit reply %+v", r)
	}
	if n := bu.tables.Count(); n != 2 {
		t.Fatalf("%d flows after the commit, want 2", n)
	}
}

// TestBundlerRefusesAddsToClosedBundlesAndExpiresIdleOnes checks that an
// add to a closed bundle discards it with OFPBFC_BUNDLE_CLOSED and that a
// bundle idle for longer than the timeout is discarded with
// OFPBFC_TIMEOUT, answering the message that opened it.
func TestBundlerRefusesAddsToClosedBundlesAndExpiresIdleOnes(t *testing.T) {
	bu, s, st := newTestBundler(t)
	m, bc := bundleCtrlMsg(1, ofp.BundleOpenRequest)
	if err := bu.ctrl(s, st, m, bc); err != nil {
		t.Fatal(err)
	}
	s.next(t)
	m, bc = bundleCtrlMsg(1, ofp.BundleCloseRequest)
	if err := bu.ctrl(s, st, m, bc); err != nil {
		t.Fatal(err)
	}
	s.next(t)
	am, ba := bundleAddFlow(t, 1, 5, 0)
	if err := bu.add(s, st, am, ba); ofp.CodeOf(err) != ofp.OFPBFC_BUNDLE_CLOSED {
		t.Fatalf("add to a closed bundle: %v", err)
	}

	var mu sync.Mutex
	idle := time.Hour
	bu.idleTimeout = func() time.Duration { mu.Lock(); defer mu.Unlock(); return idle }
	am, ba = bundleAddFlow(t, 2, 6, 0)
	if err := bu.add(s, st, am, ba); err != nil {
		t.Fatal(err)
	}
	bu.expire(time.Now().Add(time.Minute))
	if len(s.msgs) != 0 {
		t.Fatal("a bundle idle for a minute expired with a timeout of an hour")
	}
	bu.expire(time.Now().Add(2 * time.Hour))
	r := s.next(t)
	if r.Raw != ofp.RawOFPT_ERROR || r.XID != 6 {
		t.Fatalf("got %s xid %d, want the timeout error for the opening add", r.Raw, r.XID)
	}
	want := ofp.NewErrorMsg(5, ofp.OFPBFC_TIMEOUT, nil)
	if e, ok := r.Body.(*ofp.ErrorMsg); !ok || e.Type != want.Type || e.Code != want.Code || e.ExpType != want.ExpType {
		t.Fatalf("error %+v, want %+v", r.Body, want)
	}
}
