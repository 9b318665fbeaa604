package ovscmdtest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/ofproto/internal/ovscmd"
)

func TestReplayPrintsOracleTranscript(t *testing.T) {
	cmds := []ovscmd.Command{
		{Name: "x/echo", MinArgs: 0, MaxArgs: 2, Run: func(_ context.Context, a []string) (string, error) {
			return strings.Join(a, ",") + "\n", nil
		}},
		{Name: "x/fail", Run: func(context.Context, []string) (string, error) { return "", errors.New("Not found") }},
	}
	var setups []string
	got := Replay(t, cmds, "# comment\n\nx/echo  a b\n!ip link\nx/fail\n", func(c string) { setups = append(setups, c) })
	want := "$ x/echo  a b\na,b\n$ x/fail\n[stderr: Not found\novs-appctl: ovs-vswitchd: server returned an error]\n[exit 2]\n"
	if got != want {
		t.Errorf("Replay transcript\n%q\nwant\n%q", got, want)
	}
	if len(setups) != 1 || setups[0] != "ip link" {
		t.Errorf("setup calls = %q, want [\"ip link\"]", setups)
	}
}

// TestOracleTranscriptMatchesReplayFormat runs the embedded oracle.sh
// against Open vSwitch in a fresh namespace for a failing and a succeeding
// command.
func TestOracleTranscriptMatchesReplayFormat(t *testing.T) {
	env := Env{Pkg: "ofproto/internal/ovscmd/ovscmdtest", NetnsPrefix: "gvsoc-"}
	got := env.Oracle(t, "ovs/route/del 10.9.9.0/24\ntnl/neigh/aging\n")
	want := "$ ovs/route/del 10.9.9.0/24\n[stderr: Not found\novs-appctl: ovs-vswitchd: server returned an error]\n[exit 2]\n$ tnl/neigh/aging\n900\n"
	if got != want {
		t.Errorf("oracle transcript\n%q\nwant\n%q", got, want)
	}
}
