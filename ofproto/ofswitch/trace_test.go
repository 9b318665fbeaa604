package ofswitch

import (
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// newTestTracer is a tracer over a table with "in_port=1 actions=output:2"
// and ports 1 and 2 (datapath ports 11 and 12).
func newTestTracer(t *testing.T) *tracer {
	t.Helper()
	n := newTestNotifier(t)
	n.xl.SetSnapshot(xlate.NewSnapshot("br0", 0, []*xlate.Port{
		{OFPort: 1, Name: "p1", ODP: 11}, {OFPort: 2, Name: "p2", ODP: 12}}))
	x := n.tables.Begin()
	if err := x.Apply(addFlow(1, 10, output(2))); err != nil {
		t.Fatal(err)
	}
	x.Commit()
	return &tracer{name: "br0", xl: n.xl, recirc: n.recirc}
}

// TestTracerReportsTablesAndDatapathActions checks the report of a flow
// trace and of a packet-out trace: the bridge, the rule the flow hits and
// the datapath actions, without touching the rule's statistics.
func TestTracerReportsTablesAndDatapathActions(t *testing.T) {
	tr := newTestTracer(t)
	var fl mf.Flow
	fl.InPort = 1
	got := tr.trace(TraceInput{Flow: fl})
	for _, want := range []string{"bridge(\"br0\")\n-------------\n", " 0. in_port=1, priority 10\n", "    output:2\n", "Datapath actions: 12\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("flow trace lacks %q:\n%s", want, got)
		}
	}
	for r := range tr.xl.Tables.Rules(0xff, &mf.Match{}) {
		if n := r.Stats.Packets.Load(); n != 0 {
			t.Errorf("a trace counted %d packets on its rule", n)
		}
	}
	got = tr.trace(TraceInput{Flow: fl, Actions: []ofp.Action{{Type: ofp.ActOutput, Port: 1}, {Type: ofp.ActOutput, Port: 2}}})
	if !strings.Contains(got, ">> skipping output to input port") || !strings.Contains(got, "Datapath actions: 12\n") || strings.Contains(got, "priority 10") {
		t.Errorf("packet-out trace:\n%s", got)
	}
}
