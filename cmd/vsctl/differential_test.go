package vsctl_test

import (
	"os"
	"strings"
	"testing"
)

// TestDifferentialSession runs testdata/session.txt with Debian's
// ovs-vsctl and with gvs-vsctl, each against its own fresh gvs OVSDB
// server, and requires identical output, errors and exit codes (UUIDs,
// time stamps, row order and the program name aside).
func TestDifferentialSession(t *testing.T) {
	requireBin(t, "ovs-vsctl")
	text, err := os.ReadFile("testdata/session.txt")
	if err != nil {
		t.Fatal(err)
	}
	ovsSock, gvsSock := startServer(t), startServer(t)
	n := 0
	for _, line := range strings.Split(string(text), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n++
		args := splitLine(line)
		want := normalize(args, runOVS(t, append([]string{"--db=unix:" + ovsSock, "--no-wait", "--timeout=10"}, args...)...))
		got := normalize(args, runGVS(append([]string{"--db=unix:" + gvsSock, "--no-wait", "--timeout=10"}, args...)...))
		if got != want {
			t.Errorf("%s:\n--- ovs-vsctl (exit %d)\n%s%s--- gvs-vsctl (exit %d)\n%s%s", line,
				want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
		}
	}
	if n < 100 {
		t.Fatalf("session has %d commands, want at least 100", n)
	}
}

// TestDifferentialCommandLineErrors compares how the two programs reject
// bad command lines and unreachable databases.
func TestDifferentialCommandLineErrors(t *testing.T) {
	requireBin(t, "ovs-vsctl")
	sock := startServer(t)
	db := "--db=unix:" + sock
	cases := [][]string{
		{"--db=unix:/nonexistent/db.sock", "list-br"},
		{"--db=tcp:127.0.0.1:1", "list-br"},
		{"--db=foo", "list-br"},
		{db},
		{db, "--"},
		{db, "--bogus", "list-br"},
		{db, "--timeout=x", "list-br"},
		{db, "--format=xml", "list-br"},
		{db, "--may-exist", "list-br"},
		{db, "--id=@x", "list-br"},
		{db, "frob"},
		{db, "add-br"},
		{db, "list-br", "x"},
		{db, "add-br", "br0", "br1"},
		{db, "--no-wait", "--", "--if-exists", "--may-exist", "add-br", "br0"},
		{db, "--no-wait", "set-fail-mode", "br9", "secure"},
		{db, "--no-wait", "--id=x", "create", "Mirror", "name=a"},
		{db, "--no-wait", "--id=@x", "add", "Bridge", "br0", "ports", "@y"},
		{db, "--no-wait", "set", "Bridge", "br0", "controller=@c"},
	}
	for _, args := range cases {
		want := normalize(args, runOVS(t, args...))
		got := normalize(args, runGVS(args...))
		if got != want {
			t.Errorf("%q:\n--- ovs-vsctl (exit %d)\n%s%s--- gvs-vsctl (exit %d)\n%s%s", args,
				want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
		}
	}
}

// TestDifferentialFreshDatabase compares the first commands on a database
// without an Open_vSwitch row, which both programs create.
func TestDifferentialFreshDatabase(t *testing.T) {
	requireBin(t, "ovs-vsctl")
	ovsSock, gvsSock := startServer(t), startServer(t)
	for _, args := range [][]string{{"list-br"}, {"show"}, {"--columns=bridges,next_cfg,cur_cfg", "list", "Open_vSwitch"}} {
		want := normalize(args, runOVS(t, append([]string{"--db=unix:" + ovsSock, "--no-wait"}, args...)...))
		got := normalize(args, runGVS(append([]string{"--db=unix:" + gvsSock, "--no-wait"}, args...)...))
		if got != want {
			t.Errorf("%q:\n--- ovs-vsctl (exit %d)\n%s%s--- gvs-vsctl (exit %d)\n%s%s", args,
				want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
		}
	}
}
