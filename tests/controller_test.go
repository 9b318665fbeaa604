package tests

import (
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

var secSinceRE = regexp.MustCompile(`(sec_since_connect|sec_since_disconnect)="?[0-9]+"?`)

// controllerSession points br0 at a port where nothing listens, then at
// a listening OpenFlow controller, and returns the Controller row each
// time once the switch has reported on it.
func controllerSession(t *testing.T, env []string, live string) []string {
	t.Helper()
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("init")
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close() // nothing listens there now
	var out []string
	show := func(want string) {
		waitFor(t, "the Controller row to show "+want, func() bool {
			return strings.Contains(vsctl("--columns=is_connected,status", "list", "controller"), want)
		})
		s := vsctl("--columns=target,is_connected,role,status", "list", "controller")
		s = strings.ReplaceAll(strings.ReplaceAll(s, deadAddr, "<dead>"), live, "<live>")
		out = append(out, secSinceRE.ReplaceAllString(s, "$1=<n>"))
	}
	vsctl("set-controller", "br0", "tcp:"+deadAddr)
	show("BACKOFF")
	vsctl("set-controller", "br0", "tcp:"+live)
	show("ACTIVE")
	return out
}

// TestControllerRowsReportConnectionsLikeOpenVSwitch checks the
// Controller table's is_connected, role and status as Open vSwitch writes
// them: a refused connection in backoff with its error, then a live
// controller connection.
func TestControllerRowsReportConnectionsLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	for _, bin := range []string{"ovs-vsctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	srv := &ofconn.Server{Handler: ofconn.HandlerFunc(func(s ofconn.Sender, m *ofp.Msg) {})}
	l, err := srv.Listen("ptcp:0:127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	live := l.Addr().String()
	ovsEnv, stopOVS := startOpenVSwitch(t)
	want := controllerSession(t, ovsEnv, live)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	got := controllerSession(t, gvsEnv, live)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", i, want[i], got[i])
		}
	}
}
