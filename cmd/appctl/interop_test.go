package appctl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gvs-project/gvs/unixctl"
)

// normalise replaces the target in "…: TARGET: server returned an error".
func normalise(r result, target string) result {
	r.stderr = strings.ReplaceAll(stripVlog(r.stderr), target, "TARGET")
	r.stdout = strings.ReplaceAll(r.stdout, target, "TARGET")
	return r
}

// Generic replies (dispatch errors, vlog and coverage commands) must be
// byte-for-byte what ovs-vswitchd sends, as ovs-appctl prints them.
func TestGenericRepliesMatchOVSVswitchd(t *testing.T) {
	ovs := startOVS(t)
	gvs := startGVS(t)
	cases := [][]string{
		{"version"},
		{"nosuch"},
		{"nosuch", "a", "b"},
		{"version", "x"},
		{"list-commands", "x"},
		{"coverage/read-counter"},
		{"coverage/read-counter", "a", "b"},
		{"coverage/read-counter", "nosuch"},
		{"coverage/show", "x"},
		{"vlog/list", "x"},
		{"vlog/list-pattern", "x"},
		{"vlog/set"},
		{"vlog/set", "foo"},
		{"vlog/set", "bfd:foo"},
		{"vlog/set", "dbg:info"},
		{"vlog/set", "bfd:bond"},
		{"vlog/set", "console:file"},
		{"vlog/set", "PATTERN"},
		{"vlog/set", "PATTERN:bogus:%m"},
		{"vlog/set", "FACILITY"},
		{"vlog/set", "FACILITY:bogus"},
		{"vlog/set", "FACILITY:local3"},
		{"vlog/reopen"},
		{"vlog/close"},
		{"vlog/list-pattern"},
		{"vlog/disable-rate-limit", "nosuch"},
		{"vlog/enable-rate-limit", "bfd", "vlog"},
		{"vlog/enable-rate-limit"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			want := normalise(ovsAppctl(t, ovs.env, append([]string{"-t", ovs.ctl}, args...)...), ovs.ctl)
			got := normalise(ovsAppctl(t, ovs.env, append([]string{"-t", gvs.path}, args...)...), gvs.path)
			if got != want {
				t.Errorf("ovs-appctl %v\n got: %v\nwant: %v (from ovs-vswitchd)", args, got, want)
			}
		})
	}
}

// vlogRows keeps vlog/list's header and the rows of the shared modules.
func vlogRows(s string) string {
	var keep []string
	for i, l := range strings.SplitAfter(s, "\n") {
		f := strings.Fields(l)
		if i < 2 || (len(f) > 0 && slices.Contains(vlogModules, f[0])) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// The same sequence of vlog/set specs leaves both daemons with the same
// levels and patterns.
func TestVlogSetSequenceMatchesOVSVswitchd(t *testing.T) {
	ovs := startOVS(t)
	gvs := startGVS(t)
	steps := [][]string{
		{"vlog/set", "bfd:warn"},
		{"vlog/set", "bond:off"},
		{"vlog/set", "unixctl:console:emer"},
		{"vlog/set", "vlog:syslog:err"},
		{"vlog/set", "unixctl:file:dbg"},
		{"vlog/set", "BRIDGE:INFO"},
		{"vlog/set", "vswitchd any:any:err"},
		{"vlog/set", "bfd,dbg"},
		{"vlog/set", "bond:err", "foo", "bridge:warn"},
		{"vlog/set", "PATTERN:console:%m:x"},
		{"vlog/list"},
		{"vlog/list-pattern"},
		{"vlog/set", "PATTERN:ANY:%c|%p"},
		{"vlog/list-pattern"},
		{"vlog/set", "pattern:file"},
		{"vlog/list-pattern"},
		{"vlog/set", "warn"},
		{"vlog/list"},
		{"vlog/set", ":"},
		{"vlog/list"},
	}
	for i, args := range steps {
		want := normalise(ovsAppctl(t, ovs.env, append([]string{"-t", ovs.ctl}, args...)...), ovs.ctl)
		got := normalise(ovsAppctl(t, ovs.env, append([]string{"-t", gvs.path}, args...)...), gvs.path)
		if args[0] == "vlog/list" {
			want.stdout, got.stdout = vlogRows(want.stdout), vlogRows(got.stdout)
		}
		if got != want {
			t.Errorf("step %d: ovs-appctl %q\n got: %v\nwant: %v", i, args, got, want)
		}
	}
}

// Each line list-commands prints for a command ovs-vswitchd also has is
// identical; the header is identical.
func TestListCommandsLinesMatchOVSVswitchd(t *testing.T) {
	ovs := startOVS(t)
	gvs := startGVS(t)
	want := ovsAppctl(t, ovs.env, "-t", ovs.ctl, "list-commands")
	got := ovsAppctl(t, ovs.env, "-t", gvs.path, "list-commands")
	if want.code != 0 || got.code != 0 {
		t.Fatalf("exit codes: ovs %d, gvs %d (%q)", want.code, got.code, got.stderr)
	}
	real := map[string]string{}
	wl := strings.SplitAfter(want.stdout, "\n")
	for _, l := range wl[1:] {
		if f := strings.Fields(l); len(f) > 0 {
			real[f[0]] = l
		}
	}
	gl := strings.SplitAfter(got.stdout, "\n")
	if gl[0] != wl[0] {
		t.Errorf("header %q, want %q", gl[0], wl[0])
	}
	compared := 0
	for _, l := range gl[1:] {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if r, ok := real[f[0]]; ok {
			compared++
			if r != l {
				t.Errorf("line %q, ovs-vswitchd prints %q", l, r)
			}
		}
	}
	// list-commands, version, coverage/{show,read-counter}, seven vlog/*.
	if compared != 11 {
		t.Errorf("compared %d lines, want 11:\n%s", compared, got.stdout)
	}
}

// A registered command is reachable from the real ovs-appctl, with its
// arguments intact and its errors reported as ovs-appctl reports them.
func TestCustomCommandThroughOVSAppctl(t *testing.T) {
	gvs := startGVS(t)
	must(t, gvs.reg.Register("test/join", "a [b] [c]", 1, 3, func(_ context.Context, args []string) (string, error) {
		return strings.Join(args, "|"), nil
	}))
	must(t, gvs.reg.Register("test/fail", "", 0, 0, func(context.Context, []string) (string, error) {
		return "", errors.New("it failed")
	}))
	must(t, gvs.reg.Register("test/multiline", "", 0, 0, func(context.Context, []string) (string, error) {
		return "line 1\nline 2\n", nil
	}))
	must(t, gvs.reg.Register("test/empty", "", 0, 0, func(context.Context, []string) (string, error) {
		return "", nil
	}))
	env := startOVSEnv(t)
	tests := []struct {
		args []string
		want result
	}{
		{[]string{"test/join", "a b", `"q"`, "ünï\tcode"}, result{"a b|\"q\"|ünï\tcode\n", "", 0}},
		{[]string{"test/join", "x"}, result{"x\n", "", 0}},
		{[]string{"test/join"}, result{"", "\"test/join\" command requires at least 1 arguments\novs-appctl: TARGET: server returned an error\n", 2}},
		{[]string{"test/join", "1", "2", "3", "4"}, result{"", "\"test/join\" command takes at most 3 arguments\novs-appctl: TARGET: server returned an error\n", 2}},
		{[]string{"test/fail"}, result{"", "it failed\novs-appctl: TARGET: server returned an error\n", 2}},
		{[]string{"test/multiline"}, result{"line 1\nline 2\n", "", 0}},
		{[]string{"test/empty"}, result{"", "", 0}},
		{[]string{"version"}, result{"ovs-vswitchd (Open vSwitch) 3.1.0\n", "", 0}},
	}
	for _, tc := range tests {
		got := normalise(ovsAppctl(t, env, append([]string{"-t", gvs.path}, tc.args...)...), gvs.path)
		if got != tc.want {
			t.Errorf("ovs-appctl %q\n got: %v\nwant: %v", tc.args, got, tc.want)
		}
	}
}

// startOVSEnv is the environment for ovs-appctl without a daemon.
func startOVSEnv(t *testing.T) []string {
	d := shortTempDir(t)
	return []string{"OVS_RUNDIR=" + d, "OVS_DBDIR=" + d, "OVS_LOGDIR=" + d, "PATH=/usr/bin:/bin"}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// gvs-appctl's Run prints what ovs-appctl prints, against the real
// ovs-vswitchd and against gvs, with its own name in messages.
func TestRunMatchesOVSAppctl(t *testing.T) {
	ovs := startOVS(t)
	gvs := startGVS(t)
	cases := [][]string{
		{"version"},
		{"nosuch", "x"},
		{"version", "x"},
		{"coverage/read-counter"},
		{"vlog/set", "foo"},
		{"vlog/set", "bfd:warn"},
		{"vlog/list-pattern"},
		{"vlog/reopen"},
	}
	for _, target := range []struct{ name, ctl string }{{"ovs-vswitchd", ovs.ctl}, {"gvs", gvs.path}} {
		for _, args := range cases {
			full := append([]string{"-t", target.ctl}, args...)
			want := normalise(ovsAppctl(t, ovs.env, full...), target.ctl)
			want.stderr = strings.ReplaceAll(want.stderr, "ovs-appctl:", "gvs-appctl:")
			got := normalise(gvsAppctl(full...), target.ctl)
			if got != want {
				t.Errorf("%s: gvs-appctl %q\n got: %v\nwant: %v", target.name, args, got, want)
			}
		}
	}

	// Targets by name through OVS_RUNDIR, and unreachable targets.
	t.Setenv("OVS_RUNDIR", ovs.rundir)
	for _, args := range [][]string{
		{"-t", "ovs-vswitchd", "version"},
		{"--target=ovs-vswitchd", "vlog/set", "foo"},
		{"-t", "nosuch", "version"},
		{"-t", ovs.rundir + "/nosuch.ctl", "version"},
		{"-T", "0", "version"},
		{"-t", "ovs-vswitchd", "-T", "x", "version"},
		{"-t", "ovs-vswitchd", "--timeout=5", "version"},
		{"-t", "ovs-vswitchd"},
	} {
		want := ovsAppctl(t, ovs.env, args...)
		want.stderr = strings.ReplaceAll(stripVlog(want.stderr), "ovs-appctl:", "gvs-appctl:")
		got := gvsAppctl(args...)
		if got != want {
			t.Errorf("gvs-appctl %q\n got: %v\nwant: %v", args, got, want)
		}
	}
}

// With the daemon's pidfile locked as Open vSwitch locks it, the real
// ovs-appctl and gvs-appctl find the server by name through OVS_RUNDIR;
// with a stale pidfile both refuse the same way.
func TestTargetByNameThroughPidfile(t *testing.T) {
	gvs := startGVS(t)
	env := []string{"OVS_RUNDIR=" + gvs.rundir}
	t.Setenv("OVS_RUNDIR", gvs.rundir)
	pidfile := filepath.Join(gvs.rundir, "gvs-vswitchd.pid")

	// Stale: the right content but nobody holds the lock.
	if err := os.WriteFile(pidfile, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := ovsAppctl(t, env, "-t", "gvs-vswitchd", "version")
	want.stderr = strings.ReplaceAll(stripVlog(want.stderr), "ovs-appctl:", "gvs-appctl:")
	if got := gvsAppctl("version"); got != want || got.code != 1 {
		t.Errorf("stale pidfile: gvs-appctl %v, ovs-appctl %v", got, want)
	}

	pf, err := unixctl.CreatePidfile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Remove()
	wantOK := result{"ovs-vswitchd (Open vSwitch) 3.1.0\n", "", 0}
	if got := ovsAppctl(t, env, "-t", "gvs-vswitchd", "version"); got != wantOK {
		t.Errorf("ovs-appctl -t gvs-vswitchd: %v", got)
	}
	if got := gvsAppctl("version"); got != wantOK { // default target
		t.Errorf("gvs-appctl: %v", got)
	}
}

// -T bounds the wait: ovs-appctl dies of SIGALRM, gvs-appctl exits with
// the status a shell shows for that.
func TestTimeoutFlag(t *testing.T) {
	gvs := startGVS(t)
	must(t, gvs.reg.Register("t/hang", "", 0, 0, func(ctx context.Context, _ []string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	r := ovsAppctl(t, startOVSEnv(t), "-T", "1", "-t", gvs.path, "t/hang")
	if r.code != -1 || !strings.Contains(r.stderr, "terminating with signal 14 (Alarm clock)") {
		t.Errorf("ovs-appctl -T 1: %v", r)
	}
	got := gvsAppctl("-T", "1", "-t", gvs.path, "t/hang")
	want := result{"", "gvs-appctl: " + gvs.path + ": timed out after 1 seconds\n", 142}
	if got != want {
		t.Errorf("gvs-appctl -T 1: %v, want %v", got, want)
	}
}
