package tests

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
)

var bundleCtrlRE = regexp.MustCompile(`(OFPT_BUNDLE_CONTROL|ONFT_BUNDLE_CONTROL)[^\n]*\n[^\n]*`)

// bundleTranscript runs `ovs-ofctl --bundle` at OpenFlow 1.3 (the ONF
// extension) and 1.4 with -vvconn and returns the bundle control
// messages it logged, both directions, without timestamps and xids.
func bundleTranscript(t *testing.T, env []string) string {
	t.Helper()
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	var out []string
	for _, v := range []string{"OpenFlow13", "OpenFlow14"} {
		c := exec.Command("ovs-ofctl", "-O", v, "-vvconn", "--bundle", "add-flow", "br0", "priority=5,actions=drop")
		c.Env = env
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("ovs-ofctl -O %s --bundle add-flow: %v\n%s", v, err, b)
		}
		for _, m := range bundleCtrlRE.FindAllString(string(b), -1) {
			m = regexp.MustCompile(`\(xid=0x[0-9a-f]+\)`).ReplaceAllString(m, "")
			if i := strings.Index(m, "|vconn|DBG|"); i >= 0 {
				m = m[i:]
			}
			out = append(out, v+": "+m)
		}
	}
	return strings.Join(out, "\n")
}

// TestBundleControlRepliesLikeOpenVSwitch: the open and commit replies
// carry the bundle id and type and no flags, as Open vSwitch's do,
// whatever flags the request had.
func TestBundleControlRepliesLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-vsctl", "ovs-ofctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := bundleTranscript(t, ovsEnv)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := bundleTranscript(t, gvsEnv)
	if !strings.Contains(want, "OPEN_REPLY") || !strings.Contains(want, "COMMIT_REPLY") {
		t.Fatalf("Open vSwitch's transcript lacks the replies:\n%s", want)
	}
	if got != want {
		t.Errorf("bundle control messages differ\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
}
