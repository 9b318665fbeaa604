package vsctl_test

import (
	"strings"
	"testing"
	"time"
)

// TestRunScriptedSession checks gvs-vsctl's own output for a short
// session against gvs's OVSDB server, without needing Open vSwitch.
func TestRunScriptedSession(t *testing.T) {
	db := "--db=unix:" + startServer(t)
	steps := []struct {
		args []string
		want result
	}{
		{[]string{"init"}, result{"", "", 0}},
		{[]string{"add-br", "br0"}, result{"", "", 0}},
		{[]string{"add-br", "br0"}, result{"", "gvs-vsctl: cannot create a bridge named br0 because a bridge named br0 already exists\n", 1}},
		{[]string{"--may-exist", "add-br", "br0"}, result{"", "", 0}},
		{[]string{"add-port", "br0", "p2", "tag=7", "--", "add-port", "br0", "p1", "--", "set", "Interface", "p1", "type=dummy", "options:pcap=x.pcap"}, result{"", "", 0}},
		{[]string{"list-ports", "br0"}, result{"p1\np2\n", "", 0}},
		{[]string{"list-ifaces", "br0"}, result{"p1\np2\n", "", 0}},
		{[]string{"iface-to-br", "p1"}, result{"br0\n", "", 0}},
		{[]string{"del-br", "br9"}, result{"", "gvs-vsctl: no bridge named br9\n", 1}},
		{[]string{"br-exists", "br9"}, result{"", "", 2}},
		{[]string{"set-controller", "br0", "tcp:127.0.0.1:6653", "--", "set-fail-mode", "br0", "secure"}, result{"", "", 0}},
		{[]string{"get-controller", "br0", "--", "get-fail-mode", "br0"}, result{"tcp:127.0.0.1:6653\nsecure\n", "", 0}},
		{[]string{"get", "Interface", "p1", "type", "options", "options:pcap"}, result{"dummy\n{pcap=x.pcap}\nx.pcap\n", "", 0}},
		{[]string{"--columns=name,tag", "find", "Port", "tag=7"}, result{"name                : p2\ntag                 : 7\n", "", 0}},
		{[]string{"--bare", "--columns=name", "find", "Port", "tag=7"}, result{"p2\n", "", 0}},
		{[]string{"set", "Port", "p2", "tag=4096"}, result{"", "gvs-vsctl: constraint violation: 4096 is not in the valid range 0 to 4095 (inclusive)\n", 1}},
		{[]string{"del-port", "br0", "p2", "--", "list-ports", "br0"}, result{"p1\n", "", 0}},
	}
	for _, s := range steps {
		got := runGVS(append([]string{db, "--no-wait"}, s.args...)...)
		if got != s.want {
			t.Errorf("%q: got %+v, want %+v", s.args, got, s.want)
		}
	}
	show := runGVS(db, "show")
	want := `<uuid>
    Bridge br0
        Controller "tcp:127.0.0.1:6653"
        fail_mode: secure
        Port br0
            Interface br0
                type: internal
        Port p1
            Interface p1
                type: dummy
                options: {pcap=x.pcap}
`
	if got := sortTree(uuidRE.ReplaceAllString(show.stdout, "<uuid>")); got != sortTree(want) || show.code != 0 {
		t.Errorf("show: exit %d\n%s\nwant\n%s", show.code, show.stdout, want)
	}
}

// TestReadOnlyCommandDoesNotWait checks that a command that changes
// nothing returns at once even with waiting on and no gvs-vswitchd.
func TestReadOnlyCommandDoesNotWait(t *testing.T) {
	db := "--db=unix:" + startServer(t)
	if r := runGVS(db, "--no-wait", "add-br", "br0"); r.code != 0 {
		t.Fatalf("add-br: %+v", r)
	}
	start := time.Now()
	r := runGVS(db, "--timeout=2", "list-br", "--", "--may-exist", "add-br", "br0", "--", "get", "Bridge", "br0", "name")
	if r.code != 0 || r.stdout != "br0\nbr0\n" {
		t.Fatalf("got %+v", r)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestHelpComesFromTheCommandTable(t *testing.T) {
	r := runGVS("--help")
	for _, c := range []string{"add-br", "[--may-exist] add-port", "[--if-exists] [--id=] get", "set-controller"} {
		if !strings.Contains(r.stdout, c) {
			t.Errorf("--help lacks %q:\n%s", c, r.stdout)
		}
	}
	if r = runGVS("--version"); !strings.HasPrefix(r.stdout, "gvs-vsctl ") || r.code != 0 {
		t.Errorf("--version: %+v", r)
	}
}
