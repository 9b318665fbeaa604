package tests

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

// ufidRE finds a UFID (usedRE, in pmd_diff_test.go, masks ages).
var ufidRE = regexp.MustCompile(`ufid:[-0-9a-f]+`)

// dpifDumpSession installs one megaflow (a packet into a bridge without
// flows) and reads it back every way Open vSwitch's tests do: dpif/dump-flows
// with and without -m, dpctl/get-flow by its UFID, and the dpif debug
// log's flow_dump lines of the revalidator's dumps once upcall/disable-ufid
// makes them carry keys. UFIDs (each switch has its own) and ages are
// masked.
func dpifDumpSession(t *testing.T, env []string, target string) string {
	appctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-appctl", "-t", target}, args...)...)
	}
	var out strings.Builder
	out.WriteString(appctl("upcall/disable-ufid"))
	appctl("vlog/set", "dpif:dbg")
	appctl("netdev-dummy/receive", "p1", "in_port(1),eth(src=50:54:00:00:00:05,dst=50:54:00:00:00:07),eth_type(0x0800),ipv4(src=192.168.0.1,dst=192.168.0.2,proto=1,tos=0,ttl=64,frag=no),icmp(type=8,code=0)")
	for range 3 {
		appctl("revalidator/wait")
	}
	verbose := appctl("dpif/dump-flows", "-m", "br0")
	ufid := ufidRE.FindString(verbose)
	if ufid == "" {
		t.Fatalf("%s: no UFID in dpif/dump-flows -m:\n%s", target, verbose)
	}
	out.WriteString(usedRE.ReplaceAllString(ufidRE.ReplaceAllString(verbose, "ufid:<u>"), "used:<t>"))
	out.WriteString(appctl("dpif/dump-flows", "br0"))
	out.WriteString(appctl("dpif/dump-flows", "--names", "br0"))
	out.WriteString(appctl("dpctl/get-flow", ufid))
	var dumps []string
	for _, l := range strings.Split(daemonLogLines(t, env, target, `flow_dump `), "\n") {
		// From "flow_dump" on, as the suite's filter_flow_dump reads
		// them: Open vSwitch names the thread that logged.
		if i := strings.Index(l, "flow_dump "); i >= 0 {
			dumps = append(dumps, usedRE.ReplaceAllString(ufidRE.ReplaceAllString(l[i:], "ufid:<u>"), "used:<t>"))
		}
	}
	slices.Sort(dumps)
	out.WriteString(strings.Join(slices.Compact(dumps), "\n") + "\n")
	out.WriteString(appctl("upcall/enable-ufid"))
	return out.String()
}

// TestDpifFlowDumpsLikeOpenVSwitch: dpif/dump-flows (port names with -m
// or --names, the UFID without a comma), dpctl/get-flow, the
// revalidator's flow_dump debug lines and upcall/disable-ufid and
// enable-ufid read as Open vSwitch's.
func TestDpifFlowDumpsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOneBridge(t, ovsEnv)
	want := dpifDumpSession(t, ovsEnv, "ovs-vswitchd")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOneBridge(t, gvsEnv)
	got := dpifDumpSession(t, gvsEnv, "gvs-vswitchd")
	if got != want {
		t.Errorf("differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
}
