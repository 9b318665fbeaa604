package server

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOVSDBToolReadsGVSLog checks that ovsdb-tool show-log and query read
// the file gvs wrote, and that gvs reopens it with the same contents.
func TestOVSDBToolReadsGVSLog(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-tool", "ovsdb-client")
	dir := shortDir(t)
	dbPath := filepath.Join(dir, "conf.db")
	srv, sock := startGVS(t, dir, dbPath)
	setupBridge(t, sock)
	run(t, "ovs-vsctl", "--db=unix:"+sock, "--no-wait", "set", "Bridge", "br0", "external_ids:k=v")
	run(t, "ovs-vsctl", "--db=unix:"+sock, "--no-wait", "del-port", "br0", "p1")
	run(t, "ovs-vsctl", "--db=unix:"+sock, "--no-wait", "set-fail-mode", "br0", "secure")
	run(t, "ovs-vsctl", "--db=unix:"+sock, "--no-wait", "set-fail-mode", "br0", "standalone")
	before := dump(t, sock)
	srv.Close()

	log := run(t, "ovsdb-tool", "show-log", dbPath)
	for _, want := range []string{
		`record 0: "Open_vSwitch" schema, version="8.3.1"`,
		`record 1: `, `ovs-vsctl --db=unix:` + sock + ` --no-wait init"`,
		`record 4: `, `set Bridge br0 external_ids:k=v"`,
		`record 5: `, `del-port br0 p1"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("show-log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "record 8") {
		t.Errorf("show-log has more records than transactions:\n%s", log)
	}
	q := run(t, "ovsdb-tool", "query", dbPath,
		`["Open_vSwitch",{"op":"select","table":"Bridge","where":[],"columns":["name","external_ids"]}]`)
	if want := `[{"rows":[{"external_ids":["map",[["k","v"]]],"name":"br0"}]}]`; strings.TrimSpace(q) != want {
		t.Errorf("ovsdb-tool query = %s, want %s", q, want)
	}
	// Reopen: the replayed database equals what was served.
	_, sock2 := startGVS(t, dir, dbPath)
	if after := dump(t, sock2); after != before {
		t.Errorf("reopened database differs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// TestOpensFileWrittenByOVSDBServer has Debian's ovsdb-server write a log
// (including diff records) and checks that gvs serves the same contents.
func TestOpensFileWrittenByOVSDBServer(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-tool", "ovsdb-client", "ovsdb-server")
	dir := shortDir(t)
	osock := startOVS(t, dir)
	setupBridge(t, osock)
	for _, args := range [][]string{
		{"set", "Bridge", "br0", "other_config:a=1", "other_config:b=2"},
		{"remove", "Bridge", "br0", "other_config", "a"},
		{"add-port", "br0", "p2", "--", "set", "Interface", "p2", "ofport_request=7"},
		{"del-port", "br0", "p1"},
		{"set-fail-mode", "br0", "secure"},
		{"set-fail-mode", "br0", "standalone"},
	} {
		run(t, "ovs-vsctl", append([]string{"--db=unix:" + osock, "--no-wait"}, args...)...)
	}
	want := dump(t, osock)
	// Copy the file while the server runs: every record is complete
	// because each transaction was acknowledged.
	data, err := os.ReadFile(filepath.Join(dir, "ovs.db"))
	if err != nil {
		t.Fatal(err)
	}
	gdir := shortDir(t)
	if err := os.WriteFile(filepath.Join(gdir, "conf.db"), data, 0o640); err != nil {
		t.Fatal(err)
	}
	_, gsock := startGVS(t, gdir, filepath.Join(gdir, "conf.db"))
	if got := dump(t, gsock); got != want {
		t.Errorf("gvs serves:\n%s\novsdb-server serves:\n%s", got, want)
	}
}

// TestTornTailIsTruncated appends half a record to a log and checks that
// gvs opens it with the complete records only, cuts the tail, and that
// ovsdb-tool then reads the file cleanly.
func TestTornTailIsTruncated(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-tool", "ovsdb-client")
	dir := shortDir(t)
	dbPath := filepath.Join(dir, "conf.db")
	srv, sock := startGVS(t, dir, dbPath)
	setupBridge(t, sock)
	want := dump(t, sock)
	srv.Close()
	good, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range []string{
		"OVSDB JSON 120 0123456789abcdef0123456789abcdef01234567\n{\"Bridge\":",
		"OVSDB JSON 5 0123456789abcdef0123456789abcdef01234567\n{}}}\n",
		"OVSDB JS",
	} {
		if err := os.WriteFile(dbPath, append(append([]byte{}, good...), tail...), 0o640); err != nil {
			t.Fatal(err)
		}
		db, info, err := OpenDatabaseFile(dbPath)
		if err != nil {
			t.Fatalf("tail %q: %v", tail, err)
		}
		db.Close()
		if info.Truncated != int64(len(tail)) {
			t.Errorf("tail %q: truncated %d bytes, want %d", tail, info.Truncated, len(tail))
		}
		after, _ := os.ReadFile(dbPath)
		if !bytes.Equal(after, good) {
			t.Errorf("tail %q: file not cut back to its good records", tail)
		}
	}
	run(t, "ovsdb-tool", "show-log", dbPath)
	_, sock2 := startGVS(t, dir, dbPath)
	if got := dump(t, sock2); got != want {
		t.Errorf("after truncation:\n%s\nwant:\n%s", got, want)
	}
}

// TestStartsFromOVSDBToolCreate opens a file made by ovsdb-tool create.
func TestStartsFromOVSDBToolCreate(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-tool", "ovsdb-client")
	dir := shortDir(t)
	dbPath := filepath.Join(dir, "conf.db")
	run(t, "ovsdb-tool", "create", dbPath, "/usr/share/openvswitch/vswitch.ovsschema")
	_, sock := startGVS(t, dir, dbPath)
	setupBridge(t, sock)
	if got := run(t, "ovs-vsctl", "--db=unix:"+sock, "list-ports", "br0"); got != "p1\n" {
		t.Errorf("list-ports = %q", got)
	}
	log := run(t, "ovsdb-tool", "show-log", dbPath)
	if !strings.Contains(log, "record 3:") {
		t.Errorf("show-log:\n%s", log)
	}
}

// TestCompactionKeepsContents forces compaction after every transaction and
// checks that the file shrinks to schema plus snapshot, that ovsdb-tool
// reads it, and that reopening gives the same contents.
func TestCompactionKeepsContents(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-tool", "ovsdb-client")
	dir := shortDir(t)
	dbPath := filepath.Join(dir, "conf.db")
	db, err := CreateDatabaseFile(dbPath, mustSchemaJSON())
	if err != nil {
		t.Fatal(err)
	}
	db.SetCompactMinSize(1)
	srv := New()
	srv.AddDatabase(db)
	sock := filepath.Join(dir, "c.sock")
	l := listenUnix(t, sock)
	go srv.Serve(l)
	setupBridge(t, sock)
	for i := 0; i < 20; i++ {
		run(t, "ovs-vsctl", "--db=unix:"+sock, "--no-wait", "set", "Bridge", "br0", "external_ids:n=v"+strings.Repeat("x", 3000+i))
	}
	want := dump(t, sock)
	if err := srv.Compact("Open_vSwitch"); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	log := run(t, "ovsdb-tool", "show-log", dbPath)
	if n := strings.Count(log, "\nrecord "); n != 1 {
		t.Errorf("after Compact the log has %d records, want 2 (schema and snapshot)", n+1)
	}
	// 25 transactions went in; with compaction after each quadrupling only
	// the schema, a snapshot and the few transactions since remain.
	if n := strings.Count(log, "\nrecord "); n > 6 {
		t.Errorf("log has %d records after compaction, want at most 6", n+1)
	}
	_, sock2 := startGVS(t, dir, dbPath)
	if got := dump(t, sock2); got != want {
		t.Errorf("after compaction:\n%s\nwant:\n%s", got, want)
	}
}

// lockedBuffer collects a child's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// monitorSession runs ovsdb-client monitor (or monitor-cond-since) while
// ovs-vsctl makes changes, and returns what it printed.
func monitorSession(t *testing.T, sock string, monArgs []string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lockedBuffer{}
	cmd := exec.CommandContext(ctx, "ovsdb-client", append(monArgs[:1:1], append([]string{"unix:" + sock}, monArgs[1:]...)...)...)
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	waitFor(t, out, "br0")
	steps := [][]string{
		{"set", "Bridge", "br0", "fail_mode=secure"},
		{"add-br", "br1"},
		{"set", "Bridge", "br1", "external_ids:a=b"},
		{"del-br", "br1"},
	}
	marker := 0
	for _, s := range steps {
		run(t, "ovs-vsctl", append([]string{"--db=unix:" + sock, "--no-wait"}, s...)...)
		marker++
		time.Sleep(50 * time.Millisecond)
	}
	run(t, "ovs-vsctl", "--db=unix:"+sock, "--no-wait", "set", "Bridge", "br0", "external_ids:done=yes")
	waitFor(t, out, "done")
	cancel()
	return out.String()
}

func waitFor(t *testing.T, out *lockedBuffer, s string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if strings.Contains(out.String(), s) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("monitor never printed %q:\n%s", s, out.String())
}

// TestOVSDBClientMatchesOVSDBServer compares ovsdb-client list-dbs,
// get-schema, monitor and monitor-cond-since output from gvs and from
// Debian's ovsdb-server.
func TestOVSDBClientMatchesOVSDBServer(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-client", "ovsdb-server", "ovsdb-tool")
	dir := shortDir(t)
	_, gsock := startGVS(t, dir, filepath.Join(dir, "gvs.db"))
	osock := startOVS(t, dir)
	setupBridge(t, gsock)
	setupBridge(t, osock)
	for _, args := range [][]string{
		{"list-dbs"},
		{"get-schema-version", "Open_vSwitch"},
		{"get-schema-cksum", "Open_vSwitch"},
		{"list-tables", "Open_vSwitch"},
		{"list-columns", "Open_vSwitch", "Bridge"},
		{"get-schema-version", "_Server"},
	} {
		g := run(t, "ovsdb-client", append(args[:1:1], append([]string{"unix:" + gsock}, args[1:]...)...)...)
		o := run(t, "ovsdb-client", append(args[:1:1], append([]string{"unix:" + osock}, args[1:]...)...)...)
		if normDump(g) != normDump(o) {
			t.Errorf("ovsdb-client %v:\n gvs: %s\n ovs: %s", args, g, o)
		}
	}
	for _, mon := range [][]string{
		{"monitor", "Open_vSwitch", "Bridge", "name,fail_mode,external_ids"},
		{"monitor", "--format=json", "Open_vSwitch", "Bridge", "name,fail_mode,external_ids"},
		{"monitor-cond-since", "Open_vSwitch", `[["name","==","br0"]]`, "Bridge", "name,fail_mode,external_ids"},
		{"monitor-cond", "Open_vSwitch", `[true]`, "Bridge", "name,fail_mode,external_ids"},
	} {
		g := normalizeUUIDs([]string{monitorSession(t, gsock, mon)})[0]
		o := normalizeUUIDs([]string{monitorSession(t, osock, mon)})[0]
		if g != o {
			t.Errorf("ovsdb-client %v:\n gvs:\n%s\n ovs:\n%s", mon, g, o)
		}
	}
}

// TestServesTCP serves the same database on TCP and checks ovs-vsctl and
// ovsdb-client work over it.
func TestServesTCP(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-client")
	srv, _ := startMem(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	remote := "tcp:" + l.Addr().String()
	run(t, "ovs-vsctl", "--db="+remote, "--no-wait", "init")
	run(t, "ovs-vsctl", "--db="+remote, "--no-wait", "add-br", "br0")
	if got := run(t, "ovs-vsctl", "--db="+remote, "list-br"); got != "br0\n" {
		t.Errorf("list-br over tcp = %q", got)
	}
	if got := run(t, "ovsdb-client", "list-dbs", remote); got != "Open_vSwitch\n_Server\n" {
		t.Errorf("list-dbs over tcp = %q", got)
	}
}

// TestEphemeralOnlyChangesAreNotLogged checks that writes to ephemeral
// columns alone (ovs-vswitchd's statistics) add no log record, while the
// committed value is still served.
func TestEphemeralOnlyChangesAreNotLogged(t *testing.T) {
	requireBins(t, "ovs-vsctl", "ovsdb-tool")
	dir := shortDir(t)
	dbPath := filepath.Join(dir, "conf.db")
	_, sock := startGVS(t, dir, dbPath)
	setupBridge(t, sock)
	before, _ := os.ReadFile(dbPath)
	run(t, "ovs-vsctl", "--db=unix:"+sock, "--no-wait", "set", "Interface", "p1", "statistics:rx_packets=5", "link_state=up")
	after, _ := os.ReadFile(dbPath)
	if !bytes.Equal(before, after) {
		t.Errorf("ephemeral-only transaction grew the log by %d bytes", len(after)-len(before))
	}
	if got := run(t, "ovs-vsctl", "--db=unix:"+sock, "get", "Interface", "p1", "link_state"); got != "up\n" {
		t.Errorf("link_state = %q", got)
	}
}
