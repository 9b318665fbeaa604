package tests

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// zoneFlushHarness fills zone 1 with `others` UDP connections and zone 2
// (a router's zone about to be flushed) with `mine`, through ct(commit)
// rules fed by netdev-dummy/receive, then times NXT_CT_FLUSH_ZONE of zone
// 2 as ovs-ofctl ct-flush-zone sees it (process start included) and of
// the empty zone 3 for reference; rounds refill zone 2 each time. It
// returns the median times and the connection counts it saw.
func zoneFlushHarness(t *testing.T, env []string, target string, others, mine, rounds int) (full, empty time.Duration, counts string) {
	t.Helper()
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,udp,actions=ct(commit,zone=1)")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=2,udp,actions=ct(commit,zone=2)")
	inject := func(port string, n, base int) {
		const batch = 500
		for i := 0; i < n; i += batch {
			args := []string{"ovs-appctl", "-t", target, "netdev-dummy/receive", port}
			for j := i; j < min(n, i+batch); j++ {
				k := base + j
				args = append(args, fmt.Sprintf("in_port(%s),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.%d.%d.%d,dst=10.255.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=%d,dst=53)",
					strings.TrimPrefix(port, "p"), k>>16&0xff, k>>8&0xff, k&0xff, 1024+k%60000))
			}
			run(t, env, args...)
		}
	}
	inject("p1", others, 0)
	timeFlush := func(zone string) time.Duration {
		start := time.Now()
		run(t, env, "ovs-ofctl", "ct-flush-zone", "br0", zone)
		return time.Since(start)
	}
	var fulls, empties []time.Duration
	for r := 0; r < rounds; r++ {
		inject("p2", mine, r*mine)
		counts = strings.TrimSpace(run(t, env, "ovs-appctl", "-t", target, "dpctl/ct-stats-show"))
		fulls = append(fulls, timeFlush("2"))
		empties = append(empties, timeFlush("3"))
	}
	slices.Sort(fulls)
	slices.Sort(empties)
	return fulls[len(fulls)/2], empties[len(empties)/2], counts
}

// TestZoneFlushSideBySide is the zone flush harness of OVN's router
// failover: with GVS_FAILOVER_HARNESS=1 it fills Open vSwitch's and gvs's
// conntrack with 100,000 connections in one zone and 1,000 in another,
// flushes the second (NXT_CT_FLUSH_ZONE, as ovn-controller does) and
// prints the times; gvs's own log gives its flush time without the
// client's start-up (tests/perf/failover/run.sh).
func TestZoneFlushSideBySide(t *testing.T) {
	if os.Getenv("GVS_FAILOVER_HARNESS") == "" {
		t.Skip("the zone flush harness runs with GVS_FAILOVER_HARNESS=1 (tests/perf/failover/run.sh)")
	}
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	const others, mine, rounds = 100000, 1000, 5
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOneBridge(t, ovsEnv)
	ovsFull, ovsEmpty, ovsCounts := zoneFlushHarness(t, ovsEnv, "ovs-vswitchd", others, mine, rounds)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOneBridge(t, gvsEnv)
	gvsFull, gvsEmpty, gvsCounts := zoneFlushHarness(t, gvsEnv, "gvs-vswitchd", others, mine, rounds)
	logged := ""
	if out, err := exec.Command("grep", "-h", "flushed conntrack zone 2", gvsLogFile(gvsEnv)).Output(); err == nil {
		logged = string(out)
	}
	re := regexp.MustCompile(`zone 2 \((\d+) connections\) in (\S+)`)
	var inLog []string
	for _, m := range re.FindAllStringSubmatch(logged, -1) {
		inLog = append(inLog, m[1]+" in "+m[2])
	}
	t.Logf("zone flush with %d connections in another zone, %d in the flushed one, median of %d (ovs-ofctl ct-flush-zone wall time):", others, mine, rounds)
	t.Logf("  Open vSwitch: full zone %v, empty zone %v", ovsFull.Round(10*time.Microsecond), ovsEmpty.Round(10*time.Microsecond))
	t.Logf("  gvs:          full zone %v, empty zone %v; gvs's log: %s", gvsFull.Round(10*time.Microsecond), gvsEmpty.Round(10*time.Microsecond), strings.Join(inLog, ", "))
	t.Logf("  ct-stats-show before the last flush: Open vSwitch %q, gvs %q", ovsCounts, gvsCounts)
}

// gvsLogFile is gvs-vswitchd's log in its run directory.
func gvsLogFile(env []string) string {
	return strings.TrimSuffix(gvsDB(env), "db.sock") + "gvs-vswitchd.log"
}
