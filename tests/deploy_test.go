package tests

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/version"
)

// startGvs runs the gvs-vswitchd binary with env until the test ends
// (SIGTERM, by PID) and waits for its database socket.
func startGvs(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(daemonBinary(t), args...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	t.Cleanup(stop)
	waitFor(t, "db.sock", func() bool {
		c := exec.Command("ovs-vsctl", "--no-wait", "--timeout=1", "show")
		c.Env = env
		return c.Run() == nil
	})
	cmd.Cancel = func() error { stop(); return nil } // reused as "stop now"
	return cmd
}

// Debian's layout: /etc/openvswitch/conf.db is a symlink to
// /var/lib/openvswitch/conf.db, which does not exist before the first
// start. gvs follows it, creates the file (and the directories) where it
// points and leaves the symlink as it is; the next start opens it.
func TestDanglingConfDBSymlinkIsFollowed(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	dir := t.TempDir()
	etc, target := filepath.Join(dir, "etc"), filepath.Join(dir, "var/lib/openvswitch/conf.db")
	if err := os.Mkdir(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(etc, "conf.db")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "OVS_RUNDIR="+filepath.Join(dir, "run"), "OVS_DBDIR="+etc, "OVS_LOGDIR="+filepath.Join(dir, "log"))
	d := startGvs(t, env)
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink: %v %v", link, fi, err)
	}
	if fi, err := os.Stat(target); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("database %s not created: %v", target, err)
	}
	d.Cancel()
	startGvs(t, env)
	if got := run(t, env, "ovs-vsctl", "--timeout=20", "list-br"); got != "br0\n" {
		t.Errorf("after restart list-br = %q, want br0", got)
	}
}

// A database that cannot be created fails the start with the path and
// the reason, and the run directory the daemon made for it is removed.
func TestStartFailureNamesPathAndLeavesNoRunDir(t *testing.T) {
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc")
	if err := os.Mkdir(etc, 0o755); err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(dir, "lib") // a file where a directory should be
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(blocker, "openvswitch", "conf.db")
	if err := os.Symlink(target, filepath.Join(etc, "conf.db")); err != nil {
		t.Fatal(err)
	}
	rundir := filepath.Join(dir, "run", "openvswitch")
	cmd := exec.Command(daemonBinary(t))
	cmd.Env = append(os.Environ(), "OVS_RUNDIR="+rundir, "OVS_DBDIR="+etc, "OVS_LOGDIR="+dir)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; output:\n%s", err, out)
	}
	want := fmt.Sprintf("gvs-vswitchd: cannot create database directory (%s is a symlink to %s) %s: %s is not a directory\n",
		filepath.Join(etc, "conf.db"), target, filepath.Dir(target), blocker)
	if string(out) != want {
		t.Errorf("output\n%s\nwant\n%s", out, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Errorf("run directory %s left behind", filepath.Join(dir, "run"))
	}
}

// An interface whose device does not exist is logged once at WARN in
// Open vSwitch's words (bridge.c's "could not open network device %s
// (%s)"), as Interface.error says, and not again at every
// reconciliation; a bridge's datapath ID (no datapath-id, no hwaddr) is
// the same after a restart: Open vSwitch's choice, the Bridge row's
// UUID made a locally administered MAC, which the local port takes.
func TestMissingDeviceWarnsAndDatapathIDSurvivesRestart(t *testing.T) {
	t.Parallel()
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	dir := t.TempDir()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	d := startGvs(t, env, "--log-file")
	vsctl := func(args ...string) string {
		return strings.Trim(strings.TrimSpace(run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)), `"`)
	}
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	const dev = "gvsnodev99"
	c := exec.Command("ovs-vsctl", "--timeout=20", "add-port", "br0", dev)
	c.Env = env
	out, _ := c.CombinedOutput()
	const reason = "could not open network device " + dev + " (No such device)"
	if !strings.Contains(string(out), "Error detected while setting up '"+dev+"': "+reason+".  See ovs-vswitchd log for details.") {
		t.Errorf("ovs-vsctl add-port said:\n%s", out)
	}
	if got := vsctl("get", "interface", dev, "error"); got != reason {
		t.Errorf("Interface.error = %q", got)
	}
	uuid := vsctl("get", "bridge", "br0", "_uuid")
	dpid := vsctl("get", "bridge", "br0", "datapath_id")
	mac := vsctl("get", "interface", "br0", "mac_in_use")
	ea := uuidMAC(uuid)
	if dpid != "0000"+ea {
		t.Errorf("datapath_id %s, want 0000 and the MAC from the Bridge UUID %s (%s)", dpid, uuid, ea)
	}
	if strings.ReplaceAll(mac, ":", "") != ea {
		t.Errorf("local port MAC %s, want %s", mac, ea)
	}
	time.Sleep(5500 * time.Millisecond) // one statistics round: a reconciliation
	d.Cancel()
	log, err := os.ReadFile(filepath.Join(dir, "gvs-vswitchd.log"))
	if err != nil {
		t.Fatal(err)
	}
	warn := regexp.MustCompile(`(?m)^\S+\|\d+\|bridge\|WARN\|` + regexp.QuoteMeta(reason) + `$`)
	if n := len(warn.FindAll(log, -1)); n != 1 {
		t.Errorf("%d log lines 'bridge|WARN|%s', want 1; log:\n%s", n, reason, log)
	}
	startGvs(t, env, "--log-file")
	waitFor(t, "the bridge after restart", func() bool {
		c := exec.Command("ovs-vsctl", "--timeout=5", "get", "bridge", "br0", "datapath_id")
		c.Env = env
		o, err := c.Output()
		return err == nil && strings.Trim(strings.TrimSpace(string(o)), `"`) == dpid
	})
	if got := vsctl("get", "interface", "br0", "mac_in_use"); got != mac {
		t.Errorf("local port MAC after restart %s, want %s", got, mac)
	}
}

// uuidMAC is the MAC (12 hex digits) Open vSwitch gives a bridge with no
// hwaddr and no port with a universal MAC, from its row's UUID: the first
// six bytes of the UUID's words as a little-endian machine stores them,
// made unicast and locally administered.
func uuidMAC(uuid string) string {
	h := strings.ReplaceAll(uuid, "-", "")
	var b [8]byte
	for i := range b {
		fmt.Sscanf(h[2*i:2*i+2], "%02x", &b[i])
	}
	ea := []byte{b[3], b[2], b[1], b[0], b[7], b[6]}
	ea[0] = ea[0]&^1 | 2
	return fmt.Sprintf("%x", ea)
}

// The two rules TestMissingDeviceWarnsAndDatapathIDSurvivesRestart holds
// gvs to are Open vSwitch 3.1's: on Debian's ovs-vswitchd a dummy
// bridge's datapath ID is uuidMAC of its row, and a missing device gives
// the same WARN line in its log.
func TestOpenVSwitchAgreesOnDatapathIDAndMissingDeviceWarning(t *testing.T) {
	t.Parallel()
	nstest.RequireBinary(t, "ovs-vswitchd", "openvswitch-switch")
	env, _ := startOpenVSwitch(t)
	get := func(args ...string) string {
		c := exec.Command("ovs-vsctl", append([]string{"--timeout=20"}, args...)...)
		c.Env = env
		out, _ := c.Output()
		return strings.Trim(strings.TrimSpace(string(out)), `"`)
	}
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	uuid := get("get", "bridge", "br0", "_uuid")
	var dpid string
	waitFor(t, "Open vSwitch's datapath_id", func() bool { dpid = get("get", "bridge", "br0", "datapath_id"); return dpid != "" })
	if dpid != "0000"+uuidMAC(uuid) {
		t.Errorf("Open vSwitch: datapath_id %s for Bridge %s, the rule gives 0000%s", dpid, uuid, uuidMAC(uuid))
	}
	get("add-port", "br0", "gvsnodev99") // fails, as with gvs
	var logDir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_LOGDIR="); ok {
			logDir = v
		}
	}
	// Open vSwitch logs asynchronously: wait for the line.
	warn := regexp.MustCompile(`(?m)^\S+\|\d+\|bridge\|WARN\|could not open network device gvsnodev99 \(No such device\)$`)
	var log []byte
	waitFor(t, "Open vSwitch's WARN line", func() bool {
		log, _ = os.ReadFile(filepath.Join(logDir, "ovs-vswitchd.log"))
		return warn.Match(log)
	})
	if n := len(warn.FindAll(log, -1)); n != 1 {
		t.Errorf("Open vSwitch logged the WARN line %d times; log:\n%s", n, log)
	}
}

// Each command reports the one version the build gave the project, in
// Open vSwitch's shape, for --version and -V.
func TestEveryCommandReportsTheBuildVersion(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	const v = "9.8.7+test"
	cmds := []string{"gvs-vswitchd", "gvs-ofctl", "gvs-vsctl", "gvs-appctl"}
	args := []string{"build", "-ldflags", "-X github.com/gvs-project/gvs/internal/version.build=" + v, "-o", bin + "/"}
	for _, c := range cmds {
		args = append(args, "github.com/gvs-project/gvs/cmd/"+c)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range cmds {
		for _, flag := range []string{"--version", "-V"} {
			out, err := exec.Command(filepath.Join(bin, c), flag).Output()
			if err != nil {
				t.Errorf("%s %s: %v", c, flag, err)
				continue
			}
			if first, _, _ := strings.Cut(string(out), "\n"); first != c+" (gvs) "+v {
				t.Errorf("%s %s: %q, want %q", c, flag, first, c+" (gvs) "+v)
			}
		}
	}
	// Without -X: the release marked as a development build.
	if got := version.String(); got != version.Base+"-dev" {
		t.Errorf("version.String() = %q", got)
	}
}

// `make deb` builds gvs's packages; installed with dpkg next to Debian's
// openvswitch-switch, gvs runs as gvs-vswitchd.service starts it (Debian
// paths, the dangling conf.db symlink), under Debian's ovsdb-server
// through the drop-in for ovs-vswitchd.service, and, with
// gvs-ovs-vswitchd installed, as /usr/sbin/ovs-vswitchd (the preferred
// alternative; update-alternatives --set goes back, --auto returns);
// removing the packages gives Open vSwitch its binary back. The units pass
// systemd-analyze verify where systemd is installed. All of it happens
// in a private mount namespace (tests/testdata/deploy_deb.sh): the host's
// files and daemons are untouched, which the test checks.
func TestDebPackageInstallsNextToOpenVSwitchAndReplacesOvsVswitchd(t *testing.T) {
	t.Parallel()
	nstest.Require(t, "openvswitch-switch", "unshare", "dpkg", "update-alternatives", "make", "ovsdb-server", "ovs-vsctl", "ovs-appctl", "man")
	before, err := os.Readlink("/etc/alternatives/ovs-vswitchd")
	if err != nil {
		t.Fatal(err)
	}
	debs := t.TempDir()
	mk := exec.Command("make", "-s", "-C", "..", "deb", "DEBDIR="+debs)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make deb: %v\n%s", err, out)
	}
	m, _ := filepath.Glob(filepath.Join(debs, "gvs_*.deb"))
	if len(m) != 1 {
		t.Fatalf("make deb left %v", m)
	}
	ver := strings.TrimPrefix(filepath.Base(m[0]), "gvs_")
	ver = ver[:strings.LastIndex(ver, "_")]
	if _, err := os.Stat(filepath.Join(debs, "gvs-ovs-vswitchd_"+ver+"_"+strings.TrimSuffix(filepath.Base(m[0])[len("gvs_"+ver+"_"):], ".deb")+".deb")); err != nil {
		t.Fatalf("no gvs-ovs-vswitchd package: %v", err)
	}
	scratch := t.TempDir()
	c := exec.Command("unshare", "--mount", "--propagation", "private", "bash", "testdata/deploy_deb.sh", debs, scratch)
	out, err := c.CombinedOutput()
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "CHECK "), "="); ok && strings.HasPrefix(sc.Text(), "CHECK ") {
			got[k] = v
		}
	}
	if err != nil {
		t.Fatalf("deploy_deb.sh: %v\n%s", err, out)
	}
	ovs := "ovs-vswitchd (Open vSwitch) " + version.OpenVSwitch
	want := map[string]string{
		"before": ovs, "gvs_installed": "install ok installed", "gvs_version": "gvs-vswitchd (gvs) " + ver,
		"still_ovs": ovs, "diverted": "ovs-vswitchd (gvs) " + ver,
		"alternative": "/usr/lib/gvs/ovs-vswitchd", "kept": ovs, "manual": ovs, "auto": "ovs-vswitchd (gvs) " + ver,
		"conf_link": "/var/lib/openvswitch/conf.db", "unit_pidfile": "present", "unit_show": "1", "unit_db": "created",
		"unit_link_kept": "/var/lib/openvswitch/conf.db", "unit_appctl": "gvs-vswitchd (gvs)",
		"dropin_version": "ovs-vswitchd (gvs)", "dropin_show": "1", "dropin_stopped": "exited", "dropin_pidfile": "gone",
		"divert_version": "ovs-vswitchd (gvs)", "divert_show": "1",
		"restored": ovs, "alternative_after": "/usr/lib/openvswitch-switch/ovs-vswitchd", "gvs_removed": "gone",
	}
	for _, p := range []string{"gvs-vswitchd", "gvs-vsctl", "gvs-ofctl", "gvs-appctl"} {
		want["man_"+p] = "/usr/share/man/man8/" + p + ".8.gz"
	}
	if _, err := exec.LookPath("systemd-analyze"); err == nil {
		want["verify_gvs"], want["verify_dropin"] = "ok", "ok"
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s = %q, want %q", k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("checks %v, want %d", got, len(want))
	}
	if after, err := os.Readlink("/etc/alternatives/ovs-vswitchd"); err != nil || after != before {
		t.Errorf("the host's ovs-vswitchd alternative changed: %q, was %q (%v)", after, before, err)
	}
	if out, _ := exec.Command("dpkg-query", "-W", "gvs").CombinedOutput(); !strings.Contains(string(out), "no packages found") {
		t.Errorf("gvs is known to the host's dpkg: %s", out)
	}
	if t.Failed() {
		t.Logf("deploy_deb.sh output:\n%s", out)
	}
}

// The man pages render with man -l without a groff or man warning, and
// each names its command.
func TestManPagesRender(t *testing.T) {
	nstest.RequireBinary(t, "man", "man-db")
	for _, p := range []string{"gvs-vswitchd", "gvs-vsctl", "gvs-ofctl", "gvs-appctl"} {
		c := exec.Command("man", "--warnings", "-l", filepath.Join("..", "packaging", "man", p+".8"))
		c.Env = append(os.Environ(), "MANWIDTH=80", "LC_ALL=C.UTF-8", "MANPAGER=cat", "PAGER=cat")
		var stderr strings.Builder
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil || stderr.Len() != 0 {
			t.Errorf("man -l %s: %v\n%s", p, err, stderr.String())
			continue
		}
		if !strings.Contains(string(out), "NAME\n       "+p+" - ") {
			t.Errorf("%s(8) does not name %s:\n%s", p, p, out)
		}
	}
}
