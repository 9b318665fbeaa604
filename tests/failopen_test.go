package tests

import (
	"net"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ofproto/ofconn"
	"github.com/gvs-project/gvs/ofproto/ofp"
)

// TestStandaloneBridgeFailsOpenWithoutItsController checks fail_mode
// standalone: a bridge whose controller is unreachable forwards nothing
// on its own (it has no flows), fails open to NORMAL after three 5-second
// probe intervals, and stops doing so once a controller connects, as Open
// vSwitch does. A secure bridge never fails open.
func TestStandaloneBridgeFailsOpenWithoutItsController(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("waits 15 s for fail-open")
	}
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	_, env := startDaemon(t)
	setUpOfctlBridge(t, env)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close()
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("set-controller", "br0", "tcp:"+deadAddr)
	vsctl("set-controller", "br1", "tcp:"+deadAddr)
	vsctl("set-fail-mode", "br1", "secure")
	send := func() {
		run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "netdev-dummy/receive", "p1", pktFrom1)
	}
	send()
	time.Sleep(300 * time.Millisecond)
	if got := txPackets(t, env, "2"); got != "0" {
		t.Fatalf("p2 sent %s packets before fail-open, want 0 (no flows with a controller configured)", got)
	}
	start := time.Now()
	for txPackets(t, env, "2") == "0" {
		if time.Since(start) > 25*time.Second {
			t.Fatalf("the standalone bridge did not fail open within 25 s")
		}
		send()
		time.Sleep(500 * time.Millisecond)
	}
	if d := time.Since(start); d < 14*time.Second {
		t.Errorf("failed open after %v, before three probe intervals", d)
	}

	// A controller that accepts the connection ends fail-open.
	srv := &ofconn.Server{Handler: ofconn.HandlerFunc(func(ofconn.Sender, *ofp.Msg) {})}
	l, err := srv.Listen("ptcp:0:127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	vsctl("set-controller", "br0", "tcp:"+l.Addr().String())
	waitFor(t, "the controller connection", func() bool { return len(srv.Conns()) > 0 })
	time.Sleep(1500 * time.Millisecond) // the next fail-open check and revalidation
	before := txPackets(t, env, "2")
	send()
	time.Sleep(500 * time.Millisecond)
	if got := txPackets(t, env, "2"); got != before {
		t.Fatalf("p2 sent %s packets (was %s) after the controller connected: still failing open", got, before)
	}
}
