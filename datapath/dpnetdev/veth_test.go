package dpnetdev

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/netdev/afpacket"
	"github.com/gvs-project/gvs/internal/nstest"
)

// vethHost creates a namespace with address addr on a veth whose peer
// stays in the root namespace, and returns the namespace and the peer.
func vethHost(t *testing.T, addr string) (ns, peer string) {
	t.Helper()
	ns = nstest.Netns(t)
	inner, peer := nstest.Veth(t)
	nstest.Run(t, "ip", "link", "set", inner, "netns", ns)
	nstest.InNetns(t, ns, "ip", "addr", "add", addr, "dev", inner)
	nstest.InNetns(t, ns, "ip", "link", "set", inner, "up")
	nstest.InNetns(t, ns, "ip", "link", "set", "lo", "up")
	return ns, peer
}

func ping(ns, dst string) error {
	out, err := exec.Command("ip", "netns", "exec", ns, "ping", "-c", "3", "-i", "0.2", "-W", "1", dst).CombinedOutput()
	if err != nil {
		return &pingError{strings.TrimSpace(string(out))}
	}
	return nil
}

type pingError struct{ out string }

func (e *pingError) Error() string { return "ping failed: " + e.out }

// TestVethPingThroughAFPacketPortsAndFlowDeleteStopsIt joins two network
// namespaces through two gvs system ports with flows installed through
// the Go API: ping works both ways; deleting one direction's flow stops
// it.
func TestVethPingThroughAFPacketPortsAndFlowDeleteStopsIt(t *testing.T) {
	nstest.Require(t, "iproute2")
	nstest.RequireBinary(t, "ping", "iputils-ping")
	nsA, portA := vethHost(t, "10.251.0.1/24")
	nsB, portB := vethHost(t, "10.251.0.2/24")
	dp := New("veth", dpif.DefaultConfig())
	t.Cleanup(func() { dp.Close() })
	for i, name := range []string{portA, portB} {
		d, err := afpacket.Open(afpacket.Config{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		if _, err := dp.AddPort(d, uint32(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	putFlow(t, dp, inPortMatch(1), "2")
	back := putFlow(t, dp, inPortMatch(2), "1")
	if err := dp.Start(); err != nil {
		t.Fatal(err)
	}
	if err := ping(nsA, "10.251.0.2"); err != nil {
		t.Fatalf("A -> B: %v", err)
	}
	if err := ping(nsB, "10.251.0.1"); err != nil {
		t.Fatalf("B -> A: %v", err)
	}
	before, err := dp.FlowGet(back)
	if err != nil {
		t.Fatal(err)
	}
	if before.Stats.Packets < 6 {
		t.Fatalf("B->A flow saw %d packets, want at least 6 (3 requests and 3 replies)", before.Stats.Packets)
	}
	if _, err := dp.FlowDel(back); err != nil {
		t.Fatal(err)
	}
	if err := ping(nsA, "10.251.0.2"); err == nil {
		t.Fatal("A -> B ping still works after the B -> A flow was deleted")
	}
	if st := dp.Stats(); st.Missed == 0 || st.Lost != st.Missed {
		t.Fatalf("stats %+v: want the replies to miss and be lost (no upcall handler)", st)
	}
}
