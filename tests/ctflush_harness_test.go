package tests

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/mf"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// zoneFlushHarness fills zone 1 with `others` UDP connections and zone 2
// (a router's zone about to be flushed) with `mine`, through ct(commit)
// rules fed by netdev-dummy/receive (50 packets a call: Open vSwitch's
// dummy ports queue no more), then times NXT_CT_FLUSH_ZONE of zone 2 as
// ovn-controller sends it: on one OpenFlow connection, the flush and a
// barrier, until the barrier reply, less a lone barrier's round trip.
// Each round refills zone 2. It returns the median of the full and of
// the empty (zone 3) flushes and the connection count it saw.
func zoneFlushHarness(t *testing.T, env []string, target string, others, mine, rounds int) (full, empty time.Duration, counts string) {
	t.Helper()
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=1,udp,actions=ct(commit,zone=1)")
	run(t, env, "ovs-ofctl", "add-flow", "br0", "in_port=2,udp,actions=ct(commit,zone=2)")
	inject := func(port string, n, base int) {
		const batch = 50
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
	nc, err := net.Dial("unix", strings.TrimSuffix(gvsDB(env), "db.sock")+"br0.mgmt")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	xid := uint32(0)
	send := func(m ofp.Message) {
		xid++
		b, err := ofp.Encode(nil, mf.OF13, xid, m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	waitBarrier := func() {
		hdr := make([]byte, 8)
		for {
			if _, err := io.ReadFull(nc, hdr); err != nil {
				t.Fatal(err)
			}
			body := make([]byte, int(binary.BigEndian.Uint16(hdr[2:]))-8)
			if _, err := io.ReadFull(nc, body); err != nil {
				t.Fatal(err)
			}
			if hdr[1] == 21 && binary.BigEndian.Uint32(hdr[4:]) == xid { // OFPT_BARRIER_REPLY (1.3)
				return
			}
		}
	}
	send(&ofp.Hello{})
	roundTrip := func(flush bool, zone uint16) time.Duration {
		start := time.Now()
		if flush {
			send(&ofp.CTFlushZone{Zone: zone})
		}
		send(&ofp.BarrierRequest{})
		waitBarrier()
		return time.Since(start)
	}
	var fulls, empties, bare []time.Duration
	for r := 0; r < rounds; r++ {
		inject("p2", mine, r*mine)
		counts = strings.TrimSpace(run(t, env, "ovs-appctl", "-t", target, "dpctl/ct-stats-show"))
		for i := 0; i < 5; i++ {
			bare = append(bare, roundTrip(false, 0))
		}
		fulls = append(fulls, roundTrip(true, 2))
		empties = append(empties, roundTrip(true, 3))
	}
	med := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	b := med(bare)
	return max(med(fulls)-b, 0), max(med(empties)-b, 0), counts
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
	t.Logf("zone flush with %d connections in another zone, %d in the flushed one, median of %d (flush+barrier less a barrier's round trip):", others, mine, rounds)
	t.Logf("  Open vSwitch: full zone %v, empty zone %v", ovsFull.Round(10*time.Microsecond), ovsEmpty.Round(10*time.Microsecond))
	t.Logf("  gvs:          full zone %v, empty zone %v; gvs's log: %s", gvsFull.Round(10*time.Microsecond), gvsEmpty.Round(10*time.Microsecond), strings.Join(inLog, ", "))
	t.Logf("  ct-stats-show before the last flush: Open vSwitch %q, gvs %q", ovsCounts, gvsCounts)
}

// gvsLogFile is gvs-vswitchd's log in its run directory.
func gvsLogFile(env []string) string {
	return strings.TrimSuffix(gvsDB(env), "db.sock") + "gvs-vswitchd.log"
}
