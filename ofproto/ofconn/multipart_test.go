package ofconn_test

import (
	"testing"
	"time"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofconn/ofconntest"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// flowMonitor is a monitor of every flow in every table for id.
func flowMonitor(id uint32) ofp.FlowMonitor {
	return ofp.FlowMonitor{ID: id, Command: ofp.FMCAdd, Flags: ofp.FMFInitial | ofp.FMFAdd,
		OutPort: ofp.PortAny16, OutGroup: ofp.GroupAny, TableID: 0xff}
}

// A flow monitor request split over parts sent with OFPSF_REQ_MORE reaches
// the handler once, with the monitors of every part in order, as Open
// vSwitch's multipart assembler delivers it; messages with other xids in
// between pass through at once.
func TestMultipartFlowMonitorRequestPartsReachHandlerAsOne(t *testing.T) {
	b := &ofconntest.Basic{}
	target := startServer(t, &ofconn.Server{Handler: b})
	p := dialRaw(t, target)
	p.hello(mf.OF14)

	p.send(mf.OF14, 20, &ofp.FlowMonitorRequest{Flags: ofp.StatsReqMore, Monitors: []ofp.FlowMonitor{flowMonitor(1), flowMonitor(2)}})
	p.send(mf.OF14, 21, &ofp.BarrierRequest{})
	if m := p.readMsg(); m.XID != 21 {
		t.Fatalf("got %v xid %d, want the barrier reply (xid 21)", m.Raw, m.XID)
	}
	p.send(mf.OF14, 20, &ofp.FlowMonitorRequest{Flags: ofp.StatsReqMore, Monitors: []ofp.FlowMonitor{flowMonitor(3)}})
	p.send(mf.OF14, 20, &ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{flowMonitor(4)}})
	p.send(mf.OF14, 22, &ofp.BarrierRequest{})
	if m := p.readMsg(); m.XID != 22 {
		t.Fatalf("got %v xid %d, want the barrier reply (xid 22)", m.Raw, m.XID)
	}

	var reqs []*ofp.FlowMonitorRequest
	for _, m := range b.Seen() {
		if r, ok := m.Body.(*ofp.FlowMonitorRequest); ok {
			if m.XID != 20 {
				t.Errorf("flow monitor request delivered with xid %d, want 20", m.XID)
			}
			reqs = append(reqs, r)
		}
	}
	if len(reqs) != 1 {
		t.Fatalf("handler saw %d flow monitor requests, want 1 (the assembled one)", len(reqs))
	}
	var ids []uint32
	for _, fm := range reqs[0].Monitors {
		ids = append(ids, fm.ID)
	}
	if len(ids) != 4 || ids[0] != 1 || ids[1] != 2 || ids[2] != 3 || ids[3] != 4 {
		t.Fatalf("assembled monitors %v, want [1 2 3 4]", ids)
	}
	if reqs[0].Flags&ofp.StatsReqMore != 0 {
		t.Errorf("assembled request still has OFPSF_REQ_MORE")
	}
}

// Parts of different request types get OFPBRC_BAD_STAT (carrying the part
// that differs), as from Open vSwitch, and neither reaches the handler;
// parts of another request type are joined body after body.
func TestMultipartRequestPartsOfDifferentTypesGetBadStat(t *testing.T) {
	b := &ofconntest.Basic{}
	target := startServer(t, &ofconn.Server{Handler: b})
	p := dialRaw(t, target)
	p.hello(mf.OF13)

	p.send(mf.OF13, 31, &ofp.FlowMonitorRequest{Flags: ofp.StatsReqMore, Monitors: []ofp.FlowMonitor{flowMonitor(1)}})
	last := p.send(mf.OF13, 31, &ofp.PortDescRequest{PortNo: ofp.PortAny})
	wantError(t, p.readMsg(), mf.OF13, 31, ofp.OFPBRC_BAD_STAT, last)

	p.send(mf.OF13, 32, &ofp.PortDescRequest{Flags: ofp.StatsReqMore, PortNo: ofp.PortAny})
	p.send(mf.OF13, 32, &ofp.PortDescRequest{Flags: ofp.StatsReqMore, PortNo: ofp.PortAny})
	p.send(mf.OF13, 32, &ofp.PortDescRequest{PortNo: ofp.PortAny})
	p.send(mf.OF13, 33, &ofp.BarrierRequest{})
	if m := p.readMsg(); m.XID != 33 {
		t.Fatalf("got %v xid %d, want the barrier reply (xid 33)", m.Raw, m.XID)
	}
	var got []uint32
	for _, m := range b.Seen() {
		switch m.Body.(type) {
		case *ofp.PortDescRequest, *ofp.FlowMonitorRequest:
			got = append(got, m.XID)
		}
	}
	if len(got) != 1 || got[0] != 32 {
		t.Fatalf("handler saw multipart requests with xids %v, want [32] (one port desc request)", got)
	}
}

// A request whose last part does not come within a second fails with
// OFPBRC_MULTIPART_REQUEST_TIMEOUT carrying its first part, as from Open
// vSwitch; a later part with the same xid then starts afresh.
func TestMultipartRequestWithoutLastPartTimesOut(t *testing.T) {
	b := &ofconntest.Basic{}
	target := startServer(t, &ofconn.Server{Handler: b})
	p := dialRaw(t, target)
	p.hello(mf.OF15)

	first := p.send(mf.OF15, 40, &ofp.FlowMonitorRequest{Flags: ofp.StatsReqMore, Monitors: []ofp.FlowMonitor{flowMonitor(1)}})
	start := time.Now()
	wantError(t, p.readMsg(), mf.OF15, 40, ofp.OFPBRC_MULTIPART_REQUEST_TIMEOUT, first)
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("timed out after %v, want about 1s", d)
	}
	p.send(mf.OF15, 40, &ofp.FlowMonitorRequest{Monitors: []ofp.FlowMonitor{flowMonitor(2)}})
	p.send(mf.OF15, 41, &ofp.BarrierRequest{})
	if m := p.readMsg(); m.XID != 41 {
		t.Fatalf("got %v xid %d, want the barrier reply (xid 41)", m.Raw, m.XID)
	}
	var ids []uint32
	for _, m := range b.Seen() {
		if r, ok := m.Body.(*ofp.FlowMonitorRequest); ok {
			for _, fm := range r.Monitors {
				ids = append(ids, fm.ID)
			}
		}
	}
	if len(ids) != 1 || ids[0] != 2 {
		t.Fatalf("handler saw monitors %v, want [2]", ids)
	}
}

// OpenFlow 1.0-1.2 requests are passed on part by part, as Open vSwitch
// does: it assembles OpenFlow 1.3+ requests only.
func TestMultipartRequestPartsBeforeOpenFlow13PassThrough(t *testing.T) {
	b := &ofconntest.Basic{}
	target := startServer(t, &ofconn.Server{Handler: b})
	p := dialRaw(t, target)
	p.hello(mf.OF10)

	p.send(mf.OF10, 50, &ofp.FlowMonitorRequest{Flags: ofp.StatsReqMore, Monitors: []ofp.FlowMonitor{flowMonitor(1)}})
	p.send(mf.OF10, 51, &ofp.BarrierRequest{})
	if m := p.readMsg(); m.XID != 51 {
		t.Fatalf("got %v xid %d, want the barrier reply (xid 51)", m.Raw, m.XID)
	}
	n := 0
	for _, m := range b.Seen() {
		if _, ok := m.Body.(*ofp.FlowMonitorRequest); ok {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("handler saw %d flow monitor requests, want 1", n)
	}
}
