package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/ovsoracle"
)

// vconnLines extracts the vconn debug entries of a vswitchd log as Open
// vSwitch's print_vconn_debug test macro does (the module, level and
// message of each entry, with its continuation lines), with connection
// numbers, xids and durations masked (vconn_sub, ofctl_strip).
func vconnLines(log string) string {
	var out []string
	in := false
	for _, line := range strings.Split(log, "\n") {
		f := strings.Split(line, "|")
		switch {
		case strings.Contains(line, "|vconn|DBG|"):
			out = append(out, strings.TrimRight(strings.Join(f[2:], "|"), " \t"))
			in = true
		case len(f) > 3:
			in = false
		case in && line != "":
			out = append(out, strings.TrimRight(line, " \t"))
		}
	}
	s := strings.Join(out, "\n")
	s = ovsoracle.MaskUnixConnections(s)
	s = ovsoracle.MaskXIDs(s)
	s = vconnDurationRE.ReplaceAllString(s, "")
	// Each switch makes up its own dummy MACs and datapath ID.
	s = ovsoracle.MaskDPIDs(s)
	s = ovsoracle.MaskPortMACs(s)
	return strings.TrimSpace(s)
}

var (
	vconnDurationRE = regexp.MustCompile(` duration=[0-9.]+s,`)
)

// TestVconnDebugLogShowsOpenFlowMessagesLikeOpenVSwitch turns on
// `vlog/set vconn:dbg` in Open vSwitch and in gvs, runs the same ovs-ofctl
// session against each (OpenFlow 1.0 and 1.4 connections: hellos, the
// version negotiation, a flow_mod, a barrier, flow stats, a bundle) and
// requires the same vconn debug entries in both logs.
func TestVconnDebugLogShowsOpenFlowMessagesLikeOpenVSwitch(t *testing.T) {
	steps := []ofStep{
		appctl("vlog/set", "vconn:dbg"),
		ofctl("add-flow", "br0", "in_port=1,actions=output:2"),
		ofctl("-O", "OpenFlow14", "dump-flows", "br0"),
		{tool: "file", args: []string{"flows.txt", "add in_port=2 actions=output:1\ndelete in_port=1\n"}},
		ofctl("--bundle", "add-flows", "br0", "flows.txt"),
		ofctl("del-flows", "br0"),
	}
	logOf := func(env []string, name string) string {
		dir := ""
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "OVS_LOGDIR="); ok {
				dir = v
			}
		}
		path := filepath.Join(dir, name)
		// The last reply is logged as it is sent: wait for the log to
		// stop growing.
		var last string
		for range 50 {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if s := vconnLines(string(b)); s == last && s != "" {
				return s
			} else {
				last = s
			}
			time.Sleep(100 * time.Millisecond)
		}
		return last
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOneBridge(t, ovsEnv)
	runSteps(t, ovsEnv, "ovs-vswitchd", steps)
	want := logOf(ovsEnv, "ovs-vswitchd.log")
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOneBridge(t, gvsEnv)
	runSteps(t, gvsEnv, "gvs-vswitchd", steps)
	got := logOf(gvsEnv, "gvs-vswitchd.log")
	for _, must := range []string{"negotiated OpenFlow version 0x01", "received: OFPT_FLOW_MOD", "sent (Success): OFPST_FLOW reply (OF1.4)", "OFPT_BUNDLE_ADD_MESSAGE"} {
		if !strings.Contains(want, must) {
			t.Errorf("Open vSwitch's vconn log lacks %q:\n%s", must, want)
		}
	}
	if got != want {
		t.Errorf("vconn debug log differs\n--- Open vSwitch:\n%s\n--- gvs:\n%s", want, got)
	}
}
