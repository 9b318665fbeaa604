package client

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

const ovsSchemaPath = "/usr/share/openvswitch/vswitch.ovsschema"

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
	d, err := os.MkdirTemp("/tmp", "gvscl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// dbServer is a database server under test that can be stopped and
// started again on the same socket with the same database file.
type dbServer interface {
	// Sock is the unix socket path clients use.
	Sock() string
	// Stop stops serving (existing connections drop).
	Stop(t *testing.T)
	// Start serves the database file on path.
	Start(t *testing.T, path string)
}

// gvsServer is gvs's in-process server over a database file.
type gvsServer struct {
	dbPath, sock string
	srv          *server.Server
}

func (g *gvsServer) Sock() string { return g.sock }

func (g *gvsServer) Start(t *testing.T, path string) {
	t.Helper()
	var db *server.Database
	var err error
	if _, statErr := os.Stat(g.dbPath); statErr == nil {
		db, _, err = server.OpenDatabaseFile(g.dbPath)
	} else {
		db, err = server.CreateDatabaseFile(g.dbPath, vswitch.SchemaJSON)
	}
	if err != nil {
		t.Fatal(err)
	}
	g.srv = server.New()
	if err := g.srv.AddDatabase(db); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	go g.srv.Serve(l)
}

func (g *gvsServer) Stop(t *testing.T) {
	t.Helper()
	if g.srv != nil {
		if err := g.srv.Close(); err != nil {
			t.Errorf("closing gvs server: %v", err)
		}
		g.srv = nil
	}
}

func startGVS(t *testing.T) dbServer {
	t.Helper()
	dir := shortDir(t)
	g := &gvsServer{dbPath: filepath.Join(dir, "conf.db"), sock: filepath.Join(dir, "db.sock")}
	g.Start(t, g.sock)
	t.Cleanup(func() { g.Stop(t) })
	return g
}

// ovsServer is Debian's ovsdb-server over a file made by ovsdb-tool.
type ovsServer struct {
	dir, dbPath, sock string
	cmd               *exec.Cmd
}

func (o *ovsServer) Sock() string { return o.sock }

func (o *ovsServer) Start(t *testing.T, path string) {
	t.Helper()
	os.Remove(path)
	cmd := exec.Command("ovsdb-server", "--remote=punix:"+path,
		"--unixctl="+filepath.Join(o.dir, "ovs.ctl"), "--no-chdir", "-vconsole:off", "-vfile:off", o.dbPath)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	o.cmd = cmd
	waitSocket(t, path)
}

func (o *ovsServer) Stop(t *testing.T) {
	t.Helper()
	if o.cmd != nil {
		// Kill exactly the process we started, by its pid.
		_ = o.cmd.Process.Kill()
		_ = o.cmd.Wait()
		o.cmd = nil
	}
}

func startOVS(t *testing.T) dbServer {
	t.Helper()
	requireBins(t, "ovsdb-server", "ovsdb-tool", "ovs-vsctl")
	dir := shortDir(t)
	o := &ovsServer{dir: dir, dbPath: filepath.Join(dir, "conf.db"), sock: filepath.Join(dir, "db.sock")}
	run(t, "ovsdb-tool", "create", o.dbPath, ovsSchemaPath)
	o.Start(t, o.sock)
	t.Cleanup(func() { o.Stop(t) })
	return o
}

func waitSocket(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if c, err := net.Dial("unix", path); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("nothing listening on %s", path)
}

// servers runs fn against gvs's server and Debian's ovsdb-server.
func servers(t *testing.T, fn func(t *testing.T, s dbServer)) {
	t.Run("gvs", func(t *testing.T) { fn(t, startGVS(t)) })
	t.Run("ovsdb-server", func(t *testing.T) { fn(t, startOVS(t)) })
}

// run runs a command and returns its standard output, failing on error.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// vsctl runs Debian's ovs-vsctl against the socket without waiting for a
// switch daemon.
func vsctl(t *testing.T, sock string, args ...string) string {
	t.Helper()
	requireBins(t, "ovs-vsctl")
	return strings.TrimSpace(run(t, "ovs-vsctl", append([]string{"--db=unix:" + sock, "--no-wait", "--timeout=10"}, args...)...))
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t *testing.T, sock string, opts ...Options) *Client {
	t.Helper()
	c, err := Dial(testCtx(t), "unix:"+sock, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// recorder collects the changes a replica reports.
type recorder struct {
	mu      sync.Mutex
	changes []Change
}

func (r *recorder) add(c Change) {
	r.mu.Lock()
	r.changes = append(r.changes, c)
	r.mu.Unlock()
}

// take waits until n changes have arrived and returns them as
// "kind table name" strings (the row's "name" column when it has one),
// then forgets them. Extra changes fail the test.
func (r *recorder) take(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		got := len(r.changes)
		r.mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let any unexpected extra change arrive
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.changes))
	for i, c := range r.changes {
		row := c.New
		if row == nil {
			row = c.Old
		}
		s := c.Kind.String() + " " + c.Table
		if d, ok := row.Data["name"]; ok && len(d.Keys) == 1 {
			s += " " + d.Keys[0].(string)
		}
		out[i] = s
	}
	r.changes = nil
	return out
}

func str(d model.Datum) string {
	if len(d.Keys) == 1 && d.Values == nil {
		if s, ok := d.Keys[0].(string); ok {
			return s
		}
	}
	return d.String()
}

// names returns the sorted "name" column of every row of a table.
func names(s *Snapshot, table string) []string {
	var out []string
	for _, r := range s.Rows(table) {
		out = append(out, str(r.Get("name")))
	}
	sort.Strings(out)
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// vswitchTables are the tables and columns ovn-controller monitors (a
// subset), as the bridge layer will.
var vswitchTables = []MonitorTable{
	{Table: "Open_vSwitch", Columns: []string{"bridges", "external_ids", "other_config"}},
	{Table: "Bridge", Columns: []string{"name", "ports", "other_config", "datapath_type", "fail_mode", "external_ids"}},
	{Table: "Port", Columns: []string{"name", "interfaces", "external_ids"}},
	{Table: "Interface", Columns: []string{"name", "type", "options", "ofport_request", "external_ids"}},
}
