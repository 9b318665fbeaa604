package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// ctZoneOf returns the conntrack zone ovn-controller assigned to a
// logical port (br-int's external_ids:ct-zone-NAME).
func (o *ovnCluster) ctZoneOf(name string) string {
	o.t.Helper()
	out := o.vsctl("get", "bridge", "br-int", "external_ids:ct-zone-"+name)
	return strings.Trim(strings.TrimSpace(out), `"`)
}

// ctEntries returns the conntrack entries of zone in gvs-vswitchd.
func (o *ovnCluster) ctEntries(zone string) []string {
	o.t.Helper()
	out := run(o.t, o.gvsEnv, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/dump-conntrack", "zone="+zone)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

var zoneFlushLogRE = regexp.MustCompile(`br-int: flushed conntrack zone (\d+) \((\d+) connections\) in (\S+)`)

// TestOVNZoneFlushRemovesOnlyThatZone gives three VIFs conntrack state
// (an allow-related ACL tracks every IPv4 packet in each port's zone),
// then unplugs vm3: ovn-controller releases its zone and flushes it with
// NXT_CT_FLUSH_ZONE, as it does for a zone whose port or router leaves or
// arrives (router failover). vm3's connections are gone, vm1's and vm2's
// zones keep theirs, and the time the flush took in the switch is
// reported.
func TestOVNZoneFlushRemovesOnlyThatZone(t *testing.T) {
	parallelHolding(t, &brIntDevices)
	o := startOVN(t)
	o.nbctl("ls-add", "sw0")
	for _, vm := range []string{"vm1", "vm2", "vm3"} {
		mac, ip := "50:54:00:00:00:0"+vm[2:], "10.0.0."+vm[2:]
		o.nbctl("lsp-add", "sw0", vm, "--", "lsp-set-addresses", vm, mac+" "+ip)
	}
	o.nbctl("acl-add", "sw0", "from-lport", "1000", "ip4", "allow-related")
	ns1 := o.vif("vm1", "50:54:00:00:00:01", "10.0.0.1/24", "")
	o.vif("vm2", "50:54:00:00:00:02", "10.0.0.2/24", "")
	ns3 := o.vif("vm3", "50:54:00:00:00:03", "10.0.0.3/24", "")
	o.nbctl("--wait=hv", "sync")
	for _, ip := range []string{"10.0.0.2", "10.0.0.3"} {
		if !ping(ns1, ip) {
			t.Fatalf("vm1 cannot ping %s", ip)
		}
	}
	// 500 UDP connections from vm3, each its own conntrack entry.
	nstest.InNetns(t, ns3, "python3", "-c", `
import socket
for p in range(20000, 20500):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('10.0.0.3', p)); s.sendto(b'x', ('10.0.0.1', 9)); s.close()`)
	z1, z2, z3 := o.ctZoneOf("vm1"), o.ctZoneOf("vm2"), o.ctZoneOf("vm3")
	if z1 == "" || z2 == "" || z3 == "" || z1 == z3 || z2 == z3 {
		t.Fatalf("ct zones vm1=%q vm2=%q vm3=%q", z1, z2, z3)
	}
	before1, before2, before3 := o.ctEntries(z1), o.ctEntries(z2), o.ctEntries(z3)
	if len(before1) == 0 || len(before2) == 0 || len(before3) < 500 {
		t.Fatalf("no conntrack entries to flush: zone %s %q, zone %s %q, zone %s %q", z1, before1, z2, before2, z3, before3)
	}

	logFile := filepath.Join(filepath.Dir(gvsDB(o.gvsEnv)), "gvs-vswitchd.log")
	b, _ := os.ReadFile(logFile)
	seen := len(b)
	o.vsctl("del-port", "br-int", "vm3")
	o.nbctl("--wait=hv", "sync")
	var m []string
	waitFor(t, "ovn-controller's NXT_CT_FLUSH_ZONE for vm3's zone", func() bool {
		b, _ := os.ReadFile(logFile)
		for _, mm := range zoneFlushLogRE.FindAllStringSubmatch(string(b[min(seen, len(b)):]), -1) {
			if mm[1] == z3 {
				m = mm
				return true
			}
		}
		return false
	})
	if m[2] != strconv.Itoa(len(before3)) {
		t.Errorf("the flush of zone %s removed %s connections; the zone had %d", z3, m[2], len(before3))
	}
	if got := o.ctEntries(z3); len(got) != 0 {
		t.Errorf("zone %s still has %d connections after its flush: %q", z3, len(got), got)
	}
	if got := o.ctEntries(z1); len(got) != len(before1) {
		t.Errorf("zone %s (vm1) had %d connections, now %d: another zone's flush touched it", z1, len(before1), len(got))
	}
	if got := o.ctEntries(z2); len(got) != len(before2) {
		t.Errorf("zone %s (vm2) had %d connections, now %d: another zone's flush touched it", z2, len(before2), len(got))
	}
	d, err := time.ParseDuration(m[3])
	if err != nil {
		t.Fatalf("flush time %q: %v", m[3], err)
	}
	t.Logf("NXT_CT_FLUSH_ZONE for zone %s removed %s connections in %v (zones %s and %s kept %d and %d)",
		z3, m[2], d, z1, z2, len(before1), len(before2))
}
