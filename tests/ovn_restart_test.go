package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var pingSummaryRE = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)

// TestOVNControllerRestartKeepsTrafficAndZones restarts ovn-controller
// while a VIF pings another every 20 ms through an allow-related ACL
// (every packet goes through conntrack in each port's zone). The
// controller comes back with unchanged flows: the loss during the restart
// is measured and must be zero, and no conntrack zone whose mapping did
// not change is flushed (its connections survive). ovn-controller runs
// with ovn-ofctrl-wait-before-clear, as for upgrades: without it, it
// deletes all flows on reconnection before it has computed the new ones,
// and a packet in that window is lost whatever the switch (1 of 300 in
// one of three runs here).
func TestOVNControllerRestartKeepsTrafficAndZones(t *testing.T) {
	parallelHolding(t, &brIntDevices)
	o := startOVN(t)
	o.nbctl("ls-add", "sw0")
	o.nbctl("lsp-add", "sw0", "vm1", "--", "lsp-set-addresses", "vm1", "50:54:00:00:00:01 10.0.0.1")
	o.nbctl("lsp-add", "sw0", "vm2", "--", "lsp-set-addresses", "vm2", "50:54:00:00:00:02 10.0.0.2")
	o.nbctl("acl-add", "sw0", "from-lport", "1000", "ip4", "allow-related")
	ns1 := o.vif("vm1", "50:54:00:00:00:01", "10.0.0.1/24", "")
	o.vif("vm2", "50:54:00:00:00:02", "10.0.0.2/24", "")
	o.nbctl("--wait=hv", "sync")
	if !ping(ns1, "10.0.0.2") {
		t.Fatalf("vm1 cannot ping vm2")
	}
	z1, z2 := o.ctZoneOf("vm1"), o.ctZoneOf("vm2")
	before1, before2 := len(o.ctEntries(z1)), len(o.ctEntries(z2))
	logFile := filepath.Join(filepath.Dir(gvsDB(o.gvsEnv)), "gvs-vswitchd.log")
	b, _ := os.ReadFile(logFile)
	seen := len(b)

	pinger := exec.Command("ip", "netns", "exec", ns1, "ping", "-i", "0.02", "-c", "300", "-W", "1", "10.0.0.2")
	var out strings.Builder
	pinger.Stdout = &out
	if err := pinger.Start(); err != nil {
		t.Fatal(err)
	}
	// As operators do for upgrades (ovn-controller(8)): ovn-controller
	// computes its flows before it replaces the installed ones.
	o.vsctl("set", "open", ".", "external_ids:ovn-ofctrl-wait-before-clear=1000")
	time.Sleep(time.Second)
	start := time.Now()
	stopPidfile(filepath.Join(o.dir, "controller.pid"))
	o.startController(o.gvsEnv, "hv1", "127.0.0.1", "netdev", "controller")
	o.nbctl("--wait=hv", "sync")
	restart := time.Since(start)
	pinger.Wait()
	m := pingSummaryRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("ping summary missing:\n%s", out.String())
	}
	sent, _ := strconv.Atoi(m[1])
	recv, _ := strconv.Atoi(m[2])
	t.Logf("ovn-controller restart (stop to --wait=hv sync) took %v; %d of %d pings at 20 ms lost", restart, sent-recv, sent)
	if recv != sent {
		t.Errorf("%d of %d packets lost while ovn-controller restarted", sent-recv, sent)
	}
	if z := o.ctZoneOf("vm1"); z != z1 {
		t.Fatalf("vm1's zone changed from %s to %s across the restart", z1, z)
	}
	b, _ = os.ReadFile(logFile)
	for _, mm := range zoneFlushLogRE.FindAllStringSubmatch(string(b[min(seen, len(b)):]), -1) {
		if mm[1] == z1 || mm[1] == z2 {
			t.Errorf("the restart flushed zone %s (%s connections), whose mapping did not change", mm[1], mm[2])
		}
	}
	if got := len(o.ctEntries(z1)); got < before1 {
		t.Errorf("zone %s (vm1) had %d connections before the restart, %d after", z1, before1, got)
	}
	if got := len(o.ctEntries(z2)); got < before2 {
		t.Errorf("zone %s (vm2) had %d connections before the restart, %d after", z2, before2, got)
	}
}
