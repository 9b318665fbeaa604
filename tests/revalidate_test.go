package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/internal/nstest"
)

// waitTx waits until a dummy port has sent want packets (the datapath
// forwards injected packets asynchronously) and returns what it sent.
func waitTx(t *testing.T, env []string, port, want string) string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := txPackets(t, env, port)
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// txPackets returns a dummy port's transmitted packet count as
// ovs-ofctl dump-ports prints it.
func txPackets(t *testing.T, env []string, port string) string {
	out := run(t, env, "ovs-ofctl", "dump-ports", "br0", port)
	if m := txPktsRE.FindString(out); m != "" {
		return strings.TrimPrefix(m, "tx pkts=")
	}
	t.Fatalf("no tx counter in %q", out)
	return ""
}

// TestNoPacketTakesTheOldPathAfterRevalidation sends traffic under a
// megaflow, changes the path with a flow_mod, and checks that after the
// next revalidation round (ovs-appctl revalidator/wait) every packet takes
// the new path and none the old one, and that the rule counters include
// every packet.
func TestNoPacketTakesTheOldPathAfterRevalidation(t *testing.T) {
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	setUpOfctlBridge(t, env)
	appctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-appctl", "-t", "gvs-vswitchd"}, args...)...)
	}
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=output:2")
	for i := 0; i < 3; i++ {
		appctl("netdev-dummy/receive", "p1", pktFrom1)
	}
	if got := waitTx(t, env, "2", "3"); got != "3" {
		t.Fatalf("p2 sent %s packets before the change, want 3", got)
	}
	run(t, env, "ovs-ofctl", "mod-flows", "br0", "in_port=1,actions=output:3")
	appctl("revalidator/wait")
	if flows := appctl("dpctl/dump-flows"); !strings.Contains(flows, "in_port(1),") || !strings.Contains(flows, "actions:3") {
		t.Fatalf("megaflow not updated in place after revalidation:\n%s", flows)
	}
	for i := 0; i < 5; i++ {
		appctl("netdev-dummy/receive", "p1", pktFrom1)
	}
	if p3, p2 := waitTx(t, env, "3", "5"), txPackets(t, env, "2"); p2 != "3" || p3 != "5" {
		t.Fatalf("after the change p2 sent %s (want 3, no new packets) and p3 %s (want 5)", p2, p3)
	}
	appctl("revalidator/wait")
	if out := run(t, env, "ovs-ofctl", "dump-flows", "br0", "in_port=1"); !strings.Contains(out, "n_packets=8,") {
		t.Fatalf("rule counters do not include every packet:\n%s", out)
	}
}

// BenchmarkRevalidationStaleness measures how long a megaflow keeps its
// old actions after a flow_mod: from ovs-ofctl's barrier reply to the
// datapath megaflow carrying the new actions (metric "staleness-µs").
func BenchmarkRevalidationStaleness(b *testing.B) {
	d, env := startDaemon(b)
	setUpOfctlBridge(b, env)
	run(b, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,actions=output:2")
	run(b, env, "ovs-appctl", "-t", "gvs-vswitchd", "netdev-dummy/receive", "p1", pktFrom1)
	time.Sleep(100 * time.Millisecond)
	b.ResetTimer()
	dp := d.Datapath("dummy")
	var total time.Duration
	ports := []string{"2", "3"}
	for i := 0; i < b.N; i++ {
		want := "actions:" + ports[(i+1)%2]
		run(b, env, "ovs-ofctl", "mod-flows", "br0", "in_port=1,actions=output:"+ports[(i+1)%2])
		start := time.Now()
		for {
			found := false
			dp.FlowDump(func(f *dpif.Flow) bool {
				found = found || strings.Contains("actions:"+f.Actions.String(), want)
				return !found
			})
			if found || time.Since(start) > 5*time.Second {
				break
			}
			time.Sleep(20 * time.Microsecond)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "staleness-µs")
}
