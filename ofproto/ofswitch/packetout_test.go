package ofswitch

import (
	"sync"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif/dpiftest"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// newTestExecutor is an executor over a fake datapath, with ports 1 and 2
// (datapath ports 11 and 12) and no groups or meters.
func newTestExecutor(t *testing.T) (*executor, *dpiftest.Datapath) {
	t.Helper()
	n := newTestNotifier(t)
	var mu sync.Mutex
	meters := &meterTable{mu: &mu, m: map[uint32]*meterEntry{}, xl: n.xl}
	groups := &groupTable{mu: &mu, m: map[uint32]*groupEntry{}, xl: n.xl, meters: meters}
	n.xl.SetSnapshot(xlate.NewSnapshot("br0", 0, []*xlate.Port{
		{OFPort: 1, Name: "p1", ODP: 11}, {OFPort: 2, Name: "p2", ODP: 12}}))
	dp := dpiftest.New("dummy@ovs-dummy")
	return &executor{name: "br0", dp: dp, xl: n.xl, up: n.up, groups: groups, notify: n}, dp
}

// testFrame is a small Ethernet frame (an IPv4 ethertype, no payload
// worth parsing).
var testFrame = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1, 0x88, 0xb5, 1, 2, 3, 4}

func packetOutMsg(t *testing.T, inPort uint32, acts ...ofp.Action) (*ofp.Msg, *ofp.PacketOut) {
	t.Helper()
	raw, err := ofp.AppendOfpacts(nil, acts, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	po := &ofp.PacketOut{BufferID: ofp.BufferNone, InPort: inPort, Actions: raw, Data: testFrame}
	return &ofp.Msg{Version: 4, XID: 3, Body: po}, po
}

// TestExecutorRunsPacketOutOnceThroughTranslation checks that a
// packet-out's actions are translated and executed once on the datapath,
// with the packet as sent.
func TestExecutorRunsPacketOutOnceThroughTranslation(t *testing.T) {
	e, dp := newTestExecutor(t)
	m, po := packetOutMsg(t, ofp.PortController, ofp.Action{Type: ofp.ActOutput, Port: 2})
	if err := e.packetOut(m, po); err != nil {
		t.Fatal(err)
	}
	ex := dp.Executes()
	if len(ex) != 1 || string(ex[0].Data) != string(testFrame) {
		t.Fatalf("executes: %+v", ex)
	}
	if want := (odp.Actions{odp.Output(12)}); ex[0].Actions.String() != want.String() {
		t.Fatalf("actions %s, want %s", ex[0].Actions, want)
	}
}

// TestExecutorRefusesBufferedAndDanglingPacketOuts checks the packet-out
// checks: no buffering, no output to a missing group; nothing executes.
func TestExecutorRefusesBufferedAndDanglingPacketOuts(t *testing.T) {
	e, dp := newTestExecutor(t)
	m, po := packetOutMsg(t, ofp.PortController, ofp.Action{Type: ofp.ActOutput, Port: 2})
	po.BufferID = 7
	if err := e.packetOut(m, po); ofp.CodeOf(err) != ofp.OFPBRC_BUFFER_UNKNOWN {
		t.Errorf("buffered packet-out: %v", err)
	}
	m, po = packetOutMsg(t, 1, ofp.Action{Type: ofp.ActGroup, Arg: 5})
	if err := e.packetOut(m, po); ofp.CodeOf(err) != ofp.OFPBAC_BAD_OUT_GROUP {
		t.Errorf("packet-out to a missing group: %v", err)
	}
	if ex := dp.Executes(); len(ex) != 0 {
		t.Fatalf("executes: %+v", ex)
	}
}

// TestExecutorSendsPacketInsButNotTheirUpcalls checks that a packet-out's
// output to the controller makes its packet-in once, from the translation: the
// executed actions leave out its userspace upcall.
func TestExecutorSendsPacketInsButNotTheirUpcalls(t *testing.T) {
	e, dp := newTestExecutor(t)
	s := newFMSender(4)
	e.notify.conns.Get(s, true)
	m, po := packetOutMsg(t, 1, ofp.Action{Type: ofp.ActOutput, Port: ofp.PortController, MaxLen: 0xffff}, ofp.Action{Type: ofp.ActOutput, Port: 2})
	if err := e.packetOut(m, po); err != nil {
		t.Fatal(err)
	}
	msg := s.next(t)
	if pi, ok := msg.Body.(*ofp.PacketIn); !ok || string(pi.Data) != string(testFrame) {
		t.Fatalf("got %s %+v, want the packet-in", msg.Raw, msg.Body)
	}
	ex := dp.Executes()
	if len(ex) != 1 || ex[0].Actions.String() != (odp.Actions{odp.Output(12)}).String() {
		t.Fatalf("executes: %+v", ex)
	}
}
