package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/ovsoracle"
)

func vsctlStep(args ...string) ofStep { return ofStep{"ovs-vsctl", args} }

// ctZoneSession configures a conntrack zone timeout policy the way an
// operator (or OVN) does with Open vSwitch 3.1's ovs-vsctl: a Datapath
// row for the bridges' datapath type, then add-zone-tp. Connections
// committed through OpenFlow ct(commit,zone=5) then expire after the
// policy's 2 s while zone 6 keeps the default 60 s; after del-zone-tp
// zone 5 is back to the default.
func ctZoneSession() []ofStep {
	const (
		fromP1 = "in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1000,dst=53)"
		fromP2 = "in_port(2),eth(src=50:54:00:00:00:02,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.3,dst=10.0.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=1000,dst=53)"
	)
	wait := func(d string) ofStep { return ofStep{tool: "sleep", args: []string{d}} }
	return []ofStep{
		// ovs-vsctl's zone commands need the Datapath row, which
		// ovn-controller creates.
		vsctlStep("--", "--id=@dp", "create", "Datapath", "datapath_version=0", "--", "set", "Open_vSwitch", ".", "datapaths:dummy=@dp"),
		vsctlStep("add-zone-tp", "dummy", "zone=5", "udp_first=30", "udp_single=30", "icmp_first=2", "tcp_unack=9"),
		// The policy replaced, as OVN does when a load balancer's
		// timeouts change.
		vsctlStep("--may-exist", "add-zone-tp", "dummy", "zone=5", "udp_first=2", "udp_single=2", "udp_multiple=2"),
		vsctlStep("list-zone-tp", "dummy"),
		ofctl("add-flow", "br0", "priority=10,ip,in_port=1,actions=ct(commit,zone=5),output:2"),
		ofctl("add-flow", "br0", "priority=10,ip,in_port=2,actions=ct(commit,zone=6),output:1"),
		appctl("netdev-dummy/receive", "p1", fromP1),
		appctl("netdev-dummy/receive", "p2", fromP2),
		appctl("dpctl/dump-conntrack"),
		wait("3s"),
		appctl("dpctl/dump-conntrack"),
		vsctlStep("del-zone-tp", "dummy", "zone=5"),
		vsctlStep("list-zone-tp", "dummy"),
		wait("500ms"),
		appctl("netdev-dummy/receive", "p1", fromP1),
		wait("3s"),
		appctl("dpctl/dump-conntrack"),
		appctl("dpctl/ct-get-limits"),
	}
}

// maskCtZone masks UUIDs and sorts dump-conntrack lines (listed in hash
// order, which differs between the switches).
func maskCtZone(steps []string) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		s = ovsoracle.MaskUUIDs(s)
		if strings.Contains(s, "dpctl/dump-conntrack") {
			lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
			slices.Sort(lines[1:])
			s = strings.Join(lines, "\n") + "\n"
		}
		out[i] = s
	}
	return out
}

// TestZoneTimeoutPolicyFromOVSDBLikeOpenVSwitch runs ctZoneSession
// against Open vSwitch's ovs-vswitchd (dummy datapath) and gvs and
// requires the same transcript, then checks in gvs's that the policy
// took effect: zone 5's connection expired within 3 s, zone 6's did not,
// and after del-zone-tp zone 5's new connection outlived 3 s.
func TestZoneTimeoutPolicyFromOVSDBLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOfctlBridge(t, ovsEnv)
	want := maskCtZone(runSteps(t, ovsEnv, "ovs-vswitchd", ctZoneSession()))
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOfctlBridge(t, gvsEnv)
	got := maskCtZone(runSteps(t, gvsEnv, "gvs-vswitchd", ctZoneSession()))
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
	// Steps 8, 9 and 13 are the three conntrack dumps (pauses are not
	// steps of the transcript).
	dumps := []struct {
		step         int
		zone5, zone6 bool
	}{{8, true, true}, {9, false, true}, {13, true, true}}
	for _, d := range dumps {
		if !strings.Contains(got[d.step], "dpctl/dump-conntrack") {
			t.Fatalf("step %d is not a dump:\n%s", d.step, got[d.step])
		}
		if has := strings.Contains(got[d.step], "zone=5\n"); has != d.zone5 {
			t.Errorf("step %d: zone 5 connection present=%v, want %v:\n%s", d.step, has, d.zone5, got[d.step])
		}
		if has := strings.Contains(got[d.step], "zone=6\n"); has != d.zone6 {
			t.Errorf("step %d: zone 6 connection present=%v, want %v:\n%s", d.step, has, d.zone6, got[d.step])
		}
	}
}

// schemaWithZoneLimits returns Open vSwitch 3.1's schema with the two
// columns 3.2 added for zone limits (Datapath.ct_zone_default_limit,
// CT_Zone.limit).
func schemaWithZoneLimits(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("/usr/share/openvswitch/vswitch.ovsschema")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	limit := map[string]any{"type": map[string]any{
		"key": map[string]any{"type": "integer", "minInteger": 0, "maxInteger": 4294967295}, "min": 0, "max": 1}}
	tables := s["tables"].(map[string]any)
	tables["CT_Zone"].(map[string]any)["columns"].(map[string]any)["limit"] = limit
	tables["Datapath"].(map[string]any)["columns"].(map[string]any)["ct_zone_default_limit"] = limit
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestZoneLimitsFromOVSDBReachConntrack serves a database with Open
// vSwitch 3.2's zone limit columns from Debian's ovsdb-server (3.1 has no
// such columns, so there is no Open vSwitch to compare with), configures
// limits before any bridge exists, adds a dummy bridge with ovs-vsctl and
// checks dpctl/ct-get-limits and that the zone's limit refuses commits;
// removing the Datapath row puts the limits back.
func TestZoneLimitsFromOVSDBReachConntrack(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovsdb-server", "ovsdb-tool", "ovsdb-client"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	schema := filepath.Join(dir, "vswitch.ovsschema")
	if err := os.WriteFile(schema, schemaWithZoneLimits(t), 0o644); err != nil {
		t.Fatal(err)
	}
	db, sock := filepath.Join(dir, "conf.db"), filepath.Join(dir, "db.sock")
	run(t, env, "ovsdb-tool", "create", db, schema)
	srv := exec.Command("ovsdb-server", "--remote=punix:"+sock, "--unixctl="+filepath.Join(dir, "ovsdb-server.ctl"),
		"--no-chdir", "-vconsole:off", db)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	waitFor(t, "ovsdb-server's socket", func() bool { _, err := os.Stat(sock); return err == nil })
	startOnExternalDB(t, dir, sock)
	appctl := appctlFunc(t, env)
	transact := func(ops string) {
		t.Helper()
		out := run(t, env, "ovsdb-client", "transact", "unix:"+sock, `["Open_vSwitch",`+ops+`]`)
		if strings.Contains(out, `"error"`) {
			t.Fatalf("transact %s: %s", ops, out)
		}
	}
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	transact(`{"op":"insert","table":"CT_Zone","uuid-name":"z5","row":{"limit":3}},
		{"op":"insert","table":"CT_Zone","uuid-name":"z6","row":{"limit":0}},
		{"op":"insert","table":"Datapath","uuid-name":"dp","row":{"ct_zone_default_limit":100,
			"ct_zones":["map",[[5,["named-uuid","z5"]],[6,["named-uuid","z6"]]]]}},
		{"op":"mutate","table":"Open_vSwitch","where":[],
			"mutations":[["datapaths","insert",["map",[["dummy",["named-uuid","dp"]]]]]]}`)
	// The dummy datapath comes up with the bridge, after the zones were
	// configured.
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2")
	want := "default limit=100\nzone=5,limit=3,count=0\nzone=6,limit=0,count=0\n"
	waitFor(t, "the zone limits", func() bool { return appctl("dpctl/ct-get-limits") == want })

	run(t, env, "ovs-ofctl", "add-flow", "br0", "priority=10,ip,in_port=1,actions=ct(commit,zone=5),output:2")
	for sport := 1; sport <= 4; sport++ {
		appctl("netdev-dummy/receive", "p1", fmt.Sprintf("in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),"+
			"eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=%d,dst=53)", sport))
	}
	waitFor(t, "three zone 5 connections", func() bool {
		return appctl("dpctl/ct-get-limits", "zone=5") == "default limit=100\nzone=5,limit=3,count=3\n"
	})
	if got := strings.Count(appctl("dpctl/dump-conntrack", "zone=5"), "\n"); got != 3 {
		t.Errorf("zone 5 holds %d connections, want its limit of 3", got)
	}

	transact(`{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["datapaths","delete",["set",["dummy"]]]]}`)
	waitFor(t, "the limits reset", func() bool { return appctl("dpctl/ct-get-limits") == "default limit=0\n" })
}
