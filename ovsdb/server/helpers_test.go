package server

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

// requireBins skips (or, under CI=true, fails) when an Open vSwitch
// binary is missing.
func requireBins(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		nstest.RequireBinary(t, n, "openvswitch-switch")
	}
}

// shortDir returns a temporary directory whose path fits in sun_path.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "gvsdb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// startGVS serves the database file at dbPath (created with the vswitch
// schema when absent) on a unix socket and returns the socket path.
func startGVS(t *testing.T, dir, dbPath string) (*Server, string) {
	t.Helper()
	var db *Database
	var err error
	if _, statErr := os.Stat(dbPath); statErr == nil {
		db, _, err = OpenDatabaseFile(dbPath)
	} else {
		db, err = CreateDatabaseFile(dbPath, vswitch.SchemaJSON)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv := New()
	if err := srv.AddDatabase(db); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "gvs.sock")
	os.Remove(sock)
	go srv.Serve(listenUnix(t, sock))
	t.Cleanup(func() { srv.Close() })
	return srv, sock
}

// startOVS runs Debian's ovsdb-server on a file made by ovsdb-tool create
// and returns its socket path.
func startOVS(t *testing.T, dir string) string {
	t.Helper()
	requireBins(t, "ovsdb-server", "ovsdb-tool")
	db := filepath.Join(dir, "ovs.db")
	run(t, "ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema")
	sock := filepath.Join(dir, "ovs.sock")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ovsdb-server", "--remote=punix:"+sock,
		"--unixctl="+filepath.Join(dir, "ovs.ctl"), "--no-chdir", "-vconsole:off", db)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("ovsdb-server did not start")
	return ""
}

// run runs a command and returns its standard output, failing on error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, errOut, err := runErr(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func runErr(name string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func listenUnix(t *testing.T, path string) net.Listener {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustSchemaJSON() []byte { return vswitch.SchemaJSON }
