package xlate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/stp"
	"github.com/gvs-project/gvs/ofproto/xlate"
)

// stpPorts is a bridge running STP whose ports 1, 2 and 3 are in the
// tree, forwarding, learning and listening (each enabled 15 s after the
// one before, on a bridge alone), and port 4 is not.
func stpPorts(t *testing.T) []*xlate.Port {
	t.Helper()
	tree := stp.New("br0", 0xaa66aa660000, stp.Env{Send: func(int, []byte) {}})
	for i := 0; i < 3; i++ {
		if i > 0 {
			tree.Tick(15000)
		}
		tree.Port(i).Enable()
	}
	want := []stp.State{stp.Forwarding, stp.Learning, stp.Listening}
	var ports []*xlate.Port
	for i := 0; i < 3; i++ {
		if got := tree.Port(i).State(); got != want[i] {
			t.Fatalf("port %d: %s, want %s", i+1, got, want[i])
		}
		ports = append(ports, &xlate.Port{OFPort: uint16(i + 1), ODP: uint32(i + 1), Name: fmt.Sprintf("p%d", i+1), Tag: -1, STP: tree.Port(i)})
	}
	return append(ports, &xlate.Port{OFPort: 4, ODP: 4, Name: "p4", Tag: -1})
}

// macLearnPorts lists the ports of the translation's mac_learn action.
func macLearnPorts(out *xlate.Out) string {
	var s []string
	for _, a := range out.Actions {
		if a.Kind != odp.KindMACLearn {
			return "not only mac_learn: " + out.Actions.String()
		}
		for _, p := range a.MACLearn.Ports {
			s = append(s, fmt.Sprint(p.Port))
		}
	}
	return strings.Join(s, ",")
}

// TestSTPStateGatesNormalAsOpenVSwitch: NORMAL floods only to ports
// that forward; a packet from a learning port is learned and goes
// nowhere, one from a listening port is dropped before the pipeline (as
// Open vSwitch's may_receive and xlate_actions cancel forwarding).
func TestSTPStateGatesNormalAsOpenVSwitch(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL")
	e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, stpPorts(t)))
	e.x.SetSpanningTree(true)
	for _, tc := range []struct {
		in   uint16
		want string
	}{
		{1, "1,4"}, // p2 learning and p3 listening get nothing
		{4, "1,4"},
		{2, "2"}, // learned only
		{3, ""},  // dropped
	} {
		out := e.translate(vlanKey(t, tc.in, 0))
		if got := macLearnPorts(out); got != tc.want {
			t.Errorf("from p%d: mac_learn ports %q, want %q (%s)", tc.in, got, tc.want, out.Actions)
		}
	}
}

// TestSTPStateGatesOutputAsOpenVSwitch: output to a port that does not
// forward is skipped, with Open vSwitch's trace words.
func TestSTPStateGatesOutputAsOpenVSwitch(t *testing.T) {
	e := newEnv(t, mf.OF10, "in_port=4 actions=output:1,output:2,output:3")
	e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, stpPorts(t)))
	e.x.SetSpanningTree(true)
	var notes []string
	in := xlate.In{Key: vlanKey(t, 4, 0), Trace: func(ev *xlate.TraceEvent) {
		if strings.Contains(ev.Text, "STP") {
			notes = append(notes, ev.Text)
		}
	}}
	var out xlate.Out
	e.x.Translate(&in, &out)
	if got := out.Actions.String(); got != "1" {
		t.Errorf("actions %s, want 1", got)
	}
	want := "STP not in forwarding state, skipping output|STP not in forwarding state, skipping output"
	if got := strings.Join(notes, "|"); got != want {
		t.Errorf("trace notes %q, want %q", got, want)
	}
}

// TestBPDUsAreTheSwitchsOnAnSTPBridge: with STP on, a BPDU never enters
// the pipeline: one on a port of the tree goes to its stp.Port, one on a
// port outside it is sunk; both take the slow path. Without STP it is an
// ordinary frame.
func TestBPDUsAreTheSwitchsOnAnSTPBridge(t *testing.T) {
	e := newEnv(t, mf.OF10, "actions=NORMAL")
	ports := stpPorts(t)
	e.x.SetSnapshot(xlate.NewSnapshot("br0", 7, ports))
	bpdu := vlanKey(t, 1, 0)
	bpdu.EthDst, bpdu.EthType = stp.Addr, 0x05ff
	for _, sw := range []bool{true, false} {
		e.x.SetSpanningTree(sw)
		for _, in := range []uint16{1, 4} {
			bpdu.InPort = uint32(in)
			out := e.translate(bpdu)
			slow := out.SlowReason&odp.SlowSTP != 0
			if slow != sw {
				t.Errorf("STP %v, BPDU on p%d: slow path %v (%s)", sw, in, slow, out.Actions)
			}
			wantSTP := sw && in == 1
			if (len(out.STP) == 1 && out.STP[0] == ports[0].STP) != wantSTP {
				t.Errorf("STP %v, BPDU on p%d: handed to %v", sw, in, out.STP)
			}
		}
	}
}
