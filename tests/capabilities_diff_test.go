package tests

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
)

// capsDifferences are the capabilities gvs reports differently from Open
// vSwitch 3.1's userspace datapath, on purpose: what gvs does not have
// yet is "false" (datapath/dpnetdev.Capabilities says why).
var capsDifferences = map[string][2]string{ // key: {Open vSwitch, gvs}
	"ct_eventmask":     {"true", "false"},
	"lb_output_action": {"true", "false"},
	"add_mpls":         {"true", "false"},
	"max_mpls_depth":   {"3", "1"},
}

// datapathCaps creates a Datapath row for the dummy datapath type (which
// a bridge uses) and one for netdev (which none does), then returns
// their capabilities once the switch has written them.
func datapathCaps(t *testing.T, env []string) (dummy, netdev map[string]string) {
	t.Helper()
	vsctl := func(args ...string) string {
		return strings.TrimSpace(run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...))
	}
	vsctl("init")
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	vsctl("--", "--id=@a", "create", "Datapath", "external_ids:owner=test", "--", "--id=@b", "create", "Datapath", "external_ids:owner=test",
		"--", "set", "Open_vSwitch", ".", "datapaths:dummy=@a", "datapaths:netdev=@b")
	caps := func(typ string) map[string]string {
		u := vsctl("get", "Open_vSwitch", ".", "datapaths:"+typ)
		return parseOVSMap(vsctl("get", "Datapath", u, "capabilities"))
	}
	deadline := time.Now().Add(10 * time.Second)
	for dummy = caps("dummy"); len(dummy) == 0 && time.Now().Before(deadline); dummy = caps("dummy") {
		time.Sleep(50 * time.Millisecond)
	}
	vsctl("set", "Open_vSwitch", ".", "external_ids:x=1") // ovs-vsctl waits for the switch to reconfigure
	return caps("dummy"), caps("netdev")
}

// parseOVSMap parses ovs-vsctl's {k=v, k2="v2"} form.
func parseOVSMap(s string) map[string]string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	m := map[string]string{}
	for _, kv := range strings.Split(s, ", ") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = strings.Trim(v, `"`)
		}
	}
	return m
}

// TestDatapathCapabilitiesLikeOpenVSwitch: gvs fills Datapath.capabilities
// with Open vSwitch's keys for the datapath types its bridges use (and
// only those), true where gvs really supports the feature; the values
// differ from Open vSwitch's only where capsDifferences says.
func TestDatapathCapabilitiesLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	wantDummy, wantNetdev := datapathCaps(t, ovsEnv)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	gotDummy, gotNetdev := datapathCaps(t, gvsEnv)
	if len(wantNetdev) != 0 || len(gotNetdev) != 0 {
		t.Errorf("capabilities written for a datapath type no bridge uses: Open vSwitch %v, gvs %v", wantNetdev, gotNetdev)
	}
	if len(wantDummy) < 20 {
		t.Fatalf("Open vSwitch wrote too few capabilities: %v", wantDummy)
	}
	want := maps.Clone(wantDummy)
	for k, d := range capsDifferences {
		if want[k] != d[0] {
			t.Errorf("Open vSwitch reports %s=%q, the test expects %q", k, want[k], d[0])
		}
		want[k] = d[1]
	}
	if !maps.Equal(gotDummy, want) {
		t.Errorf("capabilities differ\n got %v\nwant %v (Open vSwitch's with capsDifferences applied)", gotDummy, want)
	}
	if gotDummy["ct_zero_snat"] != "true" {
		t.Errorf("ct_zero_snat = %q, want true (OVN relies on it)", gotDummy["ct_zero_snat"])
	}
}
