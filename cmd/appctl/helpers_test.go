package appctl_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/appctl"
	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/unixctl"
	"github.com/gvs-project/gvs/unixctl/coverage"
	"github.com/gvs-project/gvs/unixctl/vlog"
)

// needBinary returns the path of an Open vSwitch binary. Under CI=true a
// missing binary fails the test; elsewhere the test is skipped.
func needBinary(t testing.TB, name string) string {
	t.Helper()
	p := nstest.RequireBinary(t, name, "openvswitch-switch")
	return p
}

// shortTempDir is a temporary directory with a short path: unix socket
// paths are limited to 107 bytes.
func shortTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "appctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// realOVS is a running ovs-vswitchd with the dummy datapath and no
// database, enough to answer unixctl requests.
type realOVS struct {
	rundir string
	ctl    string
	env    []string
}

// startOVS starts Debian's ovs-vswitchd in a fresh OVS_RUNDIR and stops
// it (by pid) when the test ends.
func startOVS(t testing.TB) *realOVS {
	t.Helper()
	bin := needBinary(t, "ovs-vswitchd")
	dir := shortTempDir(t)
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	cmd := exec.Command(bin, "--enable-dummy", "--disable-system", "--pidfile", "--no-chdir",
		"unix:"+filepath.Join(dir, "db.sock"))
	cmd.Env = env
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting ovs-vswitchd: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ctl := unixctl.SocketPath(dir, "ovs-vswitchd", cmd.Process.Pid)
	deadline := time.Now().Add(10 * time.Second)
	for {
		// The socket file appears at bind(), before listen(): only a
		// successful connect shows the daemon is ready for commands.
		if _, err := os.Stat(filepath.Join(dir, "ovs-vswitchd.pid")); err == nil {
			if c, err := net.Dial("unix", ctl); err == nil {
				c.Close()
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("ovs-vswitchd did not accept on %s", ctl)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &realOVS{rundir: dir, ctl: ctl, env: env}
}

// gvsServer is an in-process appctl server with the same generic
// commands as ovs-vswitchd (vlog, coverage) plus test commands.
type gvsServer struct {
	rundir string
	path   string
	reg    *unixctl.Registry
	vlog   *vlog.Facility
	cov    *coverage.Registry
	srv    *unixctl.Server
}

// vlogModules are module names ovs-vswitchd also has, so vlog output can
// be compared line by line.
var vlogModules = []string{"bfd", "bond", "bridge", "unixctl", "vlog", "vswitchd"}

func startGVS(t testing.TB) *gvsServer {
	t.Helper()
	dir := shortTempDir(t)
	reg := unixctl.NewRegistry("ovs-vswitchd (Open vSwitch) 3.1.0")
	fac := vlog.New(vlog.Options{Program: "gvs-vswitchd", Console: &bytes.Buffer{}})
	for _, m := range vlogModules {
		fac.Module(m)
	}
	cov := coverage.New()
	for _, err := range []error{fac.RegisterCommands(reg), cov.RegisterCommands(reg)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	path := unixctl.SocketPath(dir, "gvs-vswitchd", os.Getpid())
	ln, err := unixctl.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := unixctl.NewServer(reg, slog.New(slog.DiscardHandler))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return &gvsServer{rundir: dir, path: path, reg: reg, vlog: fac, cov: cov, srv: srv}
}

type result struct {
	stdout, stderr string
	code           int
}

// ovsAppctl runs Debian's ovs-appctl.
func ovsAppctl(t testing.TB, env []string, args ...string) result {
	t.Helper()
	bin := needBinary(t, "ovs-appctl")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ovs-appctl %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// gvsAppctl runs gvs-appctl's Run in-process.
func gvsAppctl(args ...string) result {
	var out, errb bytes.Buffer
	code := appctl.Run(args, &out, &errb)
	return result{out.String(), errb.String(), code}
}

// stripVlog drops ovs-appctl's own timestamped log lines
// ("2026-...|00001|unixctl|WARN|...") from stderr.
func stripVlog(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.Count(l, "|") >= 4 && len(l) > 4 && l[4] == '-' {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}

func (r result) String() string {
	return fmt.Sprintf("{stdout %q, stderr %q, exit %d}", r.stdout, r.stderr, r.code)
}
