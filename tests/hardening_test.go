package tests

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/internal/sockprobe"
)

// The hostile and careless clients of issue 23, each against a running
// gvs-vswitchd (and, where Open vSwitch has the same input, Debian's
// Open vSwitch 3.1 beside it).

// gvsProc is a gvs-vswitchd process started from the test binary.
type gvsProc struct {
	cmd    *exec.Cmd
	run    string // OVS_RUNDIR
	db     string // OVS_DBDIR
	env    []string
	stderr *bytes.Buffer
}

func (p *gvsProc) dbSock() string { return filepath.Join(p.run, "db.sock") }
func (p *gvsProc) ctl() string {
	return filepath.Join(p.run, fmt.Sprintf("gvs-vswitchd.%d.ctl", p.cmd.Process.Pid))
}

// startGVSProc starts gvs-vswitchd with the run and database directories
// given (fresh ones when ""), extra environment and arguments, and waits
// for its database socket.
func startGVSProc(t *testing.T, runDir, dbDir string, extraEnv []string, args ...string) *gvsProc {
	t.Helper()
	p := launchGVS(t, runDir, dbDir, extraEnv, args...)
	waitFor(t, "gvs-vswitchd's db.sock", func() bool {
		if c, err := net.Dial("unix", p.dbSock()); err == nil {
			c.Close()
			return true
		}
		return false
	})
	waitFor(t, "gvs-vswitchd's control socket", func() bool { _, err := os.Stat(p.ctl()); return err == nil })
	return p
}

func launchGVS(t *testing.T, runDir, dbDir string, extraEnv []string, args ...string) *gvsProc {
	t.Helper()
	bin := daemonBinary(t)
	if runDir == "" {
		runDir = shortTempDir(t)
	}
	if dbDir == "" {
		dbDir = runDir
	}
	env := append(os.Environ(), "OVS_RUNDIR="+runDir, "OVS_DBDIR="+dbDir, "OVS_LOGDIR="+runDir)
	env = append(env, extraEnv...)
	c := exec.Command(bin, append([]string{"--enable-dummy", "--disable-system", "--no-chdir", "--log-file"}, args...)...)
	c.Env, c.Dir = env, runDir
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	p := &gvsProc{cmd: c, run: runDir, db: dbDir, env: env, stderr: &stderr}
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill()
			<-done
		}
	})
	return p
}

// shortTempDir is a temporary directory whose paths fit in sun_path.
func shortTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "gvsh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// rawExchange writes data on a new unix connection and returns what came
// back within wait, then "<EOF>" if the peer closed or "<open>".
func rawExchange(t *testing.T, sock string, data []byte, wait time.Duration) string {
	t.Helper()
	out, err := sockprobe.Exchange(sock, data, wait)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// memoryShow reads heap-bytes, ovsdb-backlog and
// ovsdb-slow-clients-dropped from `ovs-appctl memory/show`.
func memoryShow(t *testing.T, env []string, target string) map[string]int64 {
	t.Helper()
	c := exec.Command("ovs-appctl", "-t", target, "memory/show")
	c.Env = env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("memory/show: %v: %s", err, out)
	}
	m := map[string]int64{}
	for _, f := range strings.Fields(string(out)) {
		k, v, ok := strings.Cut(f, ":")
		if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
			m[k] = n
		}
	}
	return m
}

// rssBytes is a process's resident set size (VmRSS).
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// transactOn sends one transact on c and reads its reply (a connection
// that reads what it is sent).
func transactOn(t *testing.T, r *bufio.Reader, c net.Conn, id int, ops string) string {
	t.Helper()
	fmt.Fprintf(c, `{"id":%d,"method":"transact","params":["Open_vSwitch",%s]}`, id, ops)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	dec := newJSONFramer(r)
	for {
		msg, err := dec()
		if err != nil {
			t.Fatalf("transact %d: %v", id, err)
		}
		if strings.HasPrefix(msg, fmt.Sprintf(`{"id":%d,`, id)) {
			return msg
		}
	}
}

// newJSONFramer returns a reader of top-level JSON objects (bracket
// counting with strings; the test's peers send valid JSON).
func newJSONFramer(r *bufio.Reader) func() (string, error) {
	return func() (string, error) {
		var b []byte
		depth, inStr, esc := 0, false, false
		for {
			c, err := r.ReadByte()
			if err != nil {
				return "", err
			}
			if len(b) == 0 && c != '{' {
				continue
			}
			b = append(b, c)
			switch {
			case inStr && esc:
				esc = false
			case inStr && c == '\\':
				esc = true
			case inStr && c == '"':
				inStr = false
			case inStr:
			case c == '"':
				inStr = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					return string(b), nil
				}
			}
		}
	}
}

// TestNulInAStringIsRefusedAndTheDatabaseStaysUsable: a transaction
// setting external_ids:k to "a\u0000b" gets no reply and its connection
// is closed, as ovsdb-server does; one with invalid UTF-8 is a
// constraint violation; nothing reaches the file, and Open vSwitch's
// tools keep working on it.
func TestNulInAStringIsRefusedAndTheDatabaseStaysUsable(t *testing.T) {
	for _, b := range []string{"ovs-vsctl", "ovsdb-tool"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	_, env := startDaemon(t)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "set", "open", ".", "external_ids:good=1")
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			dir = v
		}
	}
	sock := filepath.Join(dir, "db.sock")
	tx := func(v string) []byte {
		return []byte(`{"id":1,"method":"transact","params":["Open_vSwitch",{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","insert",["map",[["k","` + v + `"]]]]]}]}`)
	}
	if got := rawExchange(t, sock, tx(`a\u0000b`), 500*time.Millisecond); got != "<EOF>" {
		t.Errorf("NUL: got %q, want the connection closed without a reply", got)
	}
	const bad = `{"id":1,"result":[{"details":"not a valid UTF-8 string: invalid UTF-8 sequence 0xff","error":"constraint violation"}],"error":null}<open>`
	if got := rawExchange(t, sock, tx("a\xffb"), 500*time.Millisecond); got != bad {
		t.Errorf("invalid UTF-8: got %q, want %q", got, bad)
	}
	if got := strings.TrimSpace(run(t, env, "ovs-vsctl", "get", "open", ".", "external_ids")); got != `{good="1"}` {
		t.Errorf("external_ids = %s", got)
	}
	run(t, env, "ovs-vsctl", "--timeout=20", "set", "open", ".", "external_ids:k=v")
	if got := strings.TrimSpace(run(t, env, "ovs-vsctl", "get", "open", ".", "external_ids")); got != `{good="1", k=v}` {
		t.Errorf("external_ids after set = %s", got)
	}
	log := run(t, env, "ovsdb-tool", "show-log", filepath.Join(dir, "conf.db"))
	if !strings.Contains(log, "record 0:") || strings.Contains(log, "a\x00b") {
		t.Errorf("ovsdb-tool show-log:\n%s", log)
	}
}

// TestSecondServerOnOneDatabaseIsRefused: gvs takes ovsdb-server's lock
// on the database file before opening it. A second gvs-vswitchd on the
// same database (with --pidfile=none, in another run directory or in
// the same one) and Debian's ovsdb-server are refused with "failed to
// lock lockfile", the file untouched, the first daemon still reachable
// with all its sockets; a gvs-vswitchd is refused a file ovsdb-server
// serves.
func TestSecondServerOnOneDatabaseIsRefused(t *testing.T) {
	for _, b := range []string{"ovs-vsctl", "ovs-appctl", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	first := startGVSProc(t, "", "", nil, "--pidfile")
	run(t, first.env, "ovs-vsctl", "--timeout=20", "init")
	run(t, first.env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
	dbFile := filepath.Join(first.db, "conf.db")
	before, err := os.ReadFile(dbFile)
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, p *gvsProc) {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: exited 0", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still running", what)
		}
		if !strings.Contains(p.stderr.String(), "failed to lock lockfile (Resource temporarily unavailable)") {
			t.Errorf("%s: stderr %q", what, p.stderr.String())
		}
	}
	refused("gvs in another run directory", launchGVS(t, "", first.db, nil, "--pidfile=none"))
	refused("gvs in the same run directory", launchGVS(t, first.run, first.db, nil, "--pidfile=none", "--unixctl="+filepath.Join(first.run, "second.ctl")))
	ovs := exec.Command("ovsdb-server", "--remote=punix:"+filepath.Join(first.run, "o.sock"), "--unixctl="+filepath.Join(first.run, "o.ctl"),
		"--no-chdir", "-vconsole:off", dbFile)
	out, err := ovs.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "failed to lock lockfile (Resource temporarily unavailable)") {
		t.Errorf("ovsdb-server on gvs's file: %v: %s", err, out)
	}
	if after, _ := os.ReadFile(dbFile); !bytes.Equal(before, after) {
		t.Error("the database file changed")
	}
	for _, s := range []string{"db.sock", filepath.Base(first.ctl()), "br0.mgmt", "br0.snoop"} {
		if _, err := os.Stat(filepath.Join(first.run, s)); err != nil {
			t.Errorf("first daemon's %s: %v", s, err)
		}
	}
	if got := strings.TrimSpace(run(t, first.env, "ovs-vsctl", "--timeout=5", "list-br")); got != "br0" {
		t.Errorf("list-br on the first daemon = %q", got)
	}
	run(t, first.env, "ovs-appctl", "-t", first.ctl(), "version")

	// The other way round: ovsdb-server serves the file, gvs is refused.
	odir := shortTempDir(t)
	odb := filepath.Join(odir, "conf.db")
	run(t, nil, "ovsdb-tool", "create", odb, "/usr/share/openvswitch/vswitch.ovsschema")
	osrv := exec.Command("ovsdb-server", "--remote=punix:"+filepath.Join(odir, "db.sock"), "--unixctl="+filepath.Join(odir, "o.ctl"),
		"--no-chdir", "-vconsole:off", odb)
	if err := osrv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { osrv.Process.Kill(); osrv.Wait() })
	waitFor(t, "ovsdb-server", func() bool { _, err := os.Stat(filepath.Join(odir, "db.sock")); return err == nil })
	obefore, _ := os.ReadFile(odb)
	refused("gvs on ovsdb-server's file", launchGVS(t, "", odir, nil, "--pidfile=none"))
	if after, _ := os.ReadFile(odb); !bytes.Equal(obefore, after) {
		t.Error("ovsdb-server's database file changed")
	}
	run(t, nil, "ovs-vsctl", "--db=unix:"+filepath.Join(odir, "db.sock"), "--no-wait", "--timeout=5", "show")
}

// TestPipelinedSelectsStopBeingReadNotBuffered: a client pipelines 2,000
// selects, each answered with about 100 kB, and reads nothing. As
// ovsdb-server, gvs stops reading from it once its queued output passes
// the limit (64 KiB), so the daemon's heap (memory/show heap-bytes)
// stays under 64 MiB (it was 372 MB before), the backlog is gone once
// the client goes, and ovs-vsctl is answered throughout.
func TestPipelinedSelectsStopBeingReadNotBuffered(t *testing.T) {
	for _, b := range []string{"ovs-vsctl", "ovs-appctl"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	const bound = 64 << 20
	p := startGVSProc(t, "", "", nil, "--pidfile=none")
	run(t, p.env, "ovs-vsctl", "--timeout=20", "init")
	c, err := net.Dial("unix", p.dbSock())
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", 100<<10)
	transactOn(t, bufio.NewReader(c), c, 1, `{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","insert",["map",[["big","`+big+`"]]]]]}`)
	c.Close()
	h := memoryShow(t, p.env, p.ctl())
	t.Logf("before: %v, RSS %d MB", h, rssBytes(t, p.cmd.Process.Pid)>>20)

	hostile, err := net.Dial("unix", p.dbSock())
	if err != nil {
		t.Fatal(err)
	}
	sent := make(chan int, 1)
	go func() {
		n := 0
		for i := 0; i < 2000; i++ {
			hostile.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := fmt.Fprintf(hostile, `{"id":%d,"method":"transact","params":["Open_vSwitch",{"op":"select","table":"Open_vSwitch","where":[]}]}`, i+10); err != nil {
				break
			}
			n++
		}
		sent <- n
	}()
	n := <-sent
	time.Sleep(time.Second)
	during := memoryShow(t, p.env, p.ctl())
	rss := rssBytes(t, p.cmd.Process.Pid)
	t.Logf("%d of 2000 selects written before the daemon stopped reading; during: %v, RSS %d MB", n, during, rss>>20)
	if n == 2000 {
		t.Errorf("all 2000 requests (about 200 MB of replies) were read while nothing was read back")
	}
	if during["heap-bytes"] > bound {
		t.Errorf("heap %d bytes with the hostile client connected, want under %d", during["heap-bytes"], bound)
	}
	if during["ovsdb-backlog"] > 1<<20 {
		t.Errorf("ovsdb-backlog %d bytes, want at most one reply over 64 KiB", during["ovsdb-backlog"])
	}
	run(t, p.env, "ovs-vsctl", "--timeout=5", "get", "open", ".", "cur_cfg")
	hostile.Close()
	waitFor(t, "the backlog to go", func() bool { return memoryShow(t, p.env, p.ctl())["ovsdb-backlog"] == 0 })
	if after := memoryShow(t, p.env, p.ctl()); after["heap-bytes"] > bound {
		t.Errorf("heap %d bytes after the client went", after["heap-bytes"])
	}
}

// TestSlowMonitorClientIsMergedThenDropped: a client monitors
// Open_vSwitch and never reads while a 1 MB value changes every 200 ms.
// Its pending updates are merged (the daemon keeps at most the row
// before and after), so the bytes queued for all clients (three monitors
// of the 1 MB value: the slow one, a reading one and the daemon's own)
// stay under 6 MiB and the heap under 96 MiB, garbage included (before:
// 42 to 237 MB over 52 updates); with no progress for
// GVS_OVSDB_STALL_TIMEOUT (3 s here, 60 s by default) the client is
// dropped, logged, and counted in memory/show and
// gvs_ovsdb_slow_clients_dropped_total. A client that reads gets the
// changes (at least three quarters of the updates: while it is behind
// they merge).
func TestSlowMonitorClientIsMergedThenDropped(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"ovs-vsctl", "ovs-appctl"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	const bound, backlogBound = 96 << 20, 6 << 20
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	metrics := l.Addr().String()
	l.Close()
	p := startGVSProc(t, "", "", []string{"GVS_OVSDB_STALL_TIMEOUT=3s"}, "--pidfile=none", "--metrics-address="+metrics)
	run(t, p.env, "ovs-vsctl", "--timeout=20", "init")
	monitor := `{"id":"m","method":"monitor","params":["Open_vSwitch","slow",{"Open_vSwitch":{"columns":["external_ids"]}}]}`
	slow, err := net.Dial("unix", p.dbSock())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.(*net.UnixConn).SetReadBuffer(4096)
	fmt.Fprint(slow, monitor)
	good, err := net.Dial("unix", p.dbSock())
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	fmt.Fprint(good, monitor)
	var goodUpdates int
	var gmu sync.Mutex
	go func() {
		next := newJSONFramer(bufio.NewReader(good))
		for {
			m, err := next()
			if err != nil {
				return
			}
			if strings.Contains(m, `"method":"update"`) {
				gmu.Lock()
				goodUpdates++
				gmu.Unlock()
			}
		}
	}()
	w, err := net.Dial("unix", p.dbSock())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wr := bufio.NewReader(w)
	var peak, peakBacklog int64
	start := time.Now()
	i := 0
	for ; time.Since(start) < 8*time.Second; i++ {
		v := strings.Repeat(string(rune('a'+i%26)), 1<<20)
		transactOn(t, wr, w, 100+i, `{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["external_ids","insert",["map",[["big`+strconv.Itoa(i%2)+`","`+v+`"]]]],["external_ids","delete",["set",["big`+strconv.Itoa((i+1)%2)+`"]]]]}`)
		ms := memoryShow(t, p.env, p.ctl())
		peak, peakBacklog = max(peak, ms["heap-bytes"]), max(peakBacklog, ms["ovsdb-backlog"])
		time.Sleep(200 * time.Millisecond)
	}
	ms := memoryShow(t, p.env, p.ctl())
	t.Logf("%d updates of 1 MB: peak heap %d MB, peak backlog %d bytes, now %v, RSS %d MB", i, peak>>20, peakBacklog, ms, rssBytes(t, p.cmd.Process.Pid)>>20)
	if peak > bound {
		t.Errorf("peak heap %d bytes, want under %d", peak, bound)
	}
	if peakBacklog > backlogBound {
		t.Errorf("peak OVSDB backlog %d bytes, want under %d: updates were queued, not merged", peakBacklog, backlogBound)
	}
	if ms["ovsdb-slow-clients-dropped"] != 1 {
		t.Errorf("ovsdb-slow-clients-dropped = %d, want 1", ms["ovsdb-slow-clients-dropped"])
	}
	slow.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, slow); err != nil {
		t.Errorf("the slow client's connection was not closed: %v", err)
	}
	gmu.Lock()
	if goodUpdates < i*3/4 {
		t.Errorf("the reading client saw %d updates of %d", goodUpdates, i)
	}
	gmu.Unlock()
	resp, err := http.Get("http://" + metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !regexp.MustCompile(`(?m)^gvs_ovsdb_slow_clients_dropped_total 1$`).Match(body) {
		t.Errorf("metrics lack gvs_ovsdb_slow_clients_dropped_total 1")
	}
	log, _ := os.ReadFile(filepath.Join(p.run, "gvs-vswitchd.log"))
	if !strings.Contains(string(log), "monitor client made no progress for 3s with updates pending, disconnecting") {
		t.Errorf("no log line for the dropped client")
	}
}

// TestSocketAndLogModesFollowTheUmask starts gvs-vswitchd and Debian's
// ovsdb-server under umask 022 and 077: db.sock, the control socket,
// br0.mgmt and br0.snoop are 0770 less the umask as ovsdb-server's
// sockets, the log 0640 less the umask as ovsdb-server's log.
func TestSocketAndLogModesFollowTheUmask(t *testing.T) {
	for _, b := range []string{"ovs-vsctl", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	bin := daemonBinary(t)
	for _, umask := range []string{"022", "077"} {
		// Open vSwitch.
		odir := shortTempDir(t)
		odb := filepath.Join(odir, "conf.db")
		run(t, nil, "ovsdb-tool", "create", odb, "/usr/share/openvswitch/vswitch.ovsschema")
		osrv := exec.Command("sh", "-c", "umask "+umask+" && exec ovsdb-server --remote=punix:"+filepath.Join(odir, "db.sock")+
			" --unixctl="+filepath.Join(odir, "o.ctl")+" --no-chdir -vconsole:off --log-file="+filepath.Join(odir, "o.log")+" "+odb)
		if err := osrv.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "ovsdb-server", func() bool { _, err := os.Stat(filepath.Join(odir, "o.ctl")); return err == nil })
		modeOf := func(p string) os.FileMode {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			return fi.Mode().Perm()
		}
		ovsSock, ovsLog := modeOf(filepath.Join(odir, "db.sock")), modeOf(filepath.Join(odir, "o.log"))
		osrv.Process.Kill()
		osrv.Wait()

		// gvs.
		dir := shortTempDir(t)
		env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
		g := exec.Command("sh", "-c", "umask "+umask+" && exec "+bin+" --enable-dummy --disable-system --no-chdir --pidfile --log-file")
		g.Env = env
		if err := g.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "gvs-vswitchd", func() bool {
			return exec.Command("ovs-vsctl", "--db=unix:"+filepath.Join(dir, "db.sock"), "--no-wait", "--timeout=1", "show").Run() == nil
		})
		run(t, env, "ovs-vsctl", "--timeout=20", "init")
		run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy")
		for _, s := range []string{"db.sock", fmt.Sprintf("gvs-vswitchd.%d.ctl", g.Process.Pid), "br0.mgmt", "br0.snoop"} {
			if m := modeOf(filepath.Join(dir, s)); m != ovsSock {
				t.Errorf("umask %s: %s is %v, Open vSwitch's db.sock %v", umask, s, m, ovsSock)
			}
		}
		if m := modeOf(filepath.Join(dir, "gvs-vswitchd.log")); m != ovsLog {
			t.Errorf("umask %s: log is %v, Open vSwitch's %v", umask, m, ovsLog)
		}
		want := map[string]os.FileMode{"022": 0o750, "077": 0o700}[umask]
		if ovsSock != want {
			t.Errorf("umask %s: Open vSwitch's socket is %v, expected %v", umask, ovsSock, want)
		}
		g.Process.Signal(syscall.SIGTERM)
		g.Wait()
	}
}

// TestMalformedJSONClosesAndBigUnixctlCommandsAreAnswered compares gvs's
// OVSDB and unixctl sockets with ovsdb-server's: an unbalanced message
// closes the connection at once (the valid request after it is never
// answered); a 1 MiB unixctl command gets the command's error reply.
func TestMalformedJSONClosesAndBigUnixctlCommandsAreAnswered(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, b, "openvswitch-switch")
	}
	p := startGVSProc(t, "", "", nil, "--pidfile=none")
	odir := shortTempDir(t)
	odb := filepath.Join(odir, "conf.db")
	run(t, nil, "ovsdb-tool", "create", odb, "/usr/share/openvswitch/vswitch.ovsschema")
	osrv := exec.Command("ovsdb-server", "--remote=punix:"+filepath.Join(odir, "db.sock"), "--unixctl="+filepath.Join(odir, "o.ctl"),
		"--no-chdir", "-vconsole:off", odb)
	if err := osrv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { osrv.Process.Kill(); osrv.Wait() })
	waitFor(t, "ovsdb-server", func() bool { _, err := os.Stat(filepath.Join(odir, "o.ctl")); return err == nil })
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name string
		gvs  string
		ovs  string
		in   string
	}{
		{"OVSDB unbalanced", p.dbSock(), filepath.Join(odir, "db.sock"), `{"method":"echo","params":[}{"method":"echo","params":[],"id":2}`},
		{"OVSDB bad literal", p.dbSock(), filepath.Join(odir, "db.sock"), `{"method":"echo","params":[nul],"id":1}{"method":"echo","params":[],"id":2}`},
		{"OVSDB reply to nothing", p.dbSock(), filepath.Join(odir, "db.sock"), `{"result":{},"error":null,"id":5}{"method":"echo","params":[],"id":2}`},
		{"unixctl unbalanced", p.ctl(), filepath.Join(odir, "o.ctl"), `{"method":"version","params":[}{"method":"version","params":[],"id":2}`},
		{"unixctl NUL", p.ctl(), filepath.Join(odir, "o.ctl"), `{"id":1,"method":"version","params":["a\u0000"]}`},
		{"unixctl reply", p.ctl(), filepath.Join(odir, "o.ctl"), `{"result":[],"error":null,"id":1}`},
		{"unixctl 1 MiB argument", p.ctl(), filepath.Join(odir, "o.ctl"), `{"id":1,"method":"version","params":["` + big + `"]}`},
		{"unixctl 1 MiB command name", p.ctl(), filepath.Join(odir, "o.ctl"), `{"id":1,"method":"` + big + `","params":[]}`},
	} {
		want := rawExchange(t, tc.ovs, []byte(tc.in), 2*time.Second)
		got := rawExchange(t, tc.gvs, []byte(tc.in), 2*time.Second)
		if got != want {
			t.Errorf("%s:\n gvs: %.200s\n ovs: %.200s", tc.name, got, want)
		}
	}
}

// ofHello is an OpenFlow 1.3 hello.
var ofHello = []byte{4, 0, 0, 8, 0, 0, 0, 1}

// waitProbe reads OpenFlow messages from c, answering none, and returns
// when the first echo request arrived and when the connection closed
// (zero times if not within limit).
func waitProbe(c net.Conn, limit time.Duration) (echo, closed time.Duration) {
	start := time.Now()
	c.SetReadDeadline(start.Add(limit))
	r := bufio.NewReader(c)
	for {
		h := make([]byte, 8)
		if _, err := io.ReadFull(r, h); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return echo, 0
			}
			return echo, time.Since(start)
		}
		body := make([]byte, int(binary.BigEndian.Uint16(h[2:4]))-8)
		if _, err := io.ReadFull(r, body); err != nil {
			return echo, time.Since(start)
		}
		if h[1] == 2 && echo == 0 { // OFPT_ECHO_REQUEST
			echo = time.Since(start)
		}
	}
}

// TestOpenFlowInactivityProbeAsOpenVSwitch: controller connections are
// probed as Open vSwitch's rconn does, the interval from
// Controller.inactivity_probe set with ovs-vsctl (7000 ms here; 0
// disables; absent means 5 s): an echo request after the interval
// without traffic, the connection closed after twice the interval when
// the echo goes unanswered. (<br>.mgmt connections:
// TestManagementConnectionIsProbedAfterAMinuteAsOpenVSwitch.)
func TestOpenFlowInactivityProbeAsOpenVSwitch(t *testing.T) {
	t.Parallel()
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			dir = v
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	active := "tcp:" + l.Addr().String()
	// Passive controllers are RUNDIR/BRIDGE.* (self-confinement).
	p5, p0 := "punix:"+filepath.Join(dir, "br0.c5"), "punix:"+filepath.Join(dir, "br0.c0")
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail-mode=secure",
		"--", "--id=@a", "create", "controller", "target=\""+active+"\"",
		"--", "--id=@b", "create", "controller", "target=\""+p5+"\"", "inactivity_probe=7000",
		"--", "--id=@c", "create", "controller", "target=\""+p0+"\"", "inactivity_probe=0",
		"--", "set", "bridge", "br0", "controller=[@a,@b,@c]")
	waitFor(t, "the passive controller sockets", func() bool {
		_, e1 := os.Stat(filepath.Join(dir, "br0.c5"))
		_, e0 := os.Stat(filepath.Join(dir, "br0.c0"))
		return e1 == nil && e0 == nil
	})
	type result struct {
		name          string
		echo, closed  time.Duration
		wantEcho, cut time.Duration // 0: none expected within the limit
	}
	results := make(chan result, 4)
	var wg sync.WaitGroup
	probeOn := func(name string, c net.Conn, limit, wantEcho time.Duration) {
		defer wg.Done()
		defer c.Close()
		c.Write(ofHello)
		e, cl := waitProbe(c, limit)
		results <- result{name, e, cl, wantEcho, 2 * wantEcho}
	}
	dial := func(path string) net.Conn {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	wg.Add(3)
	go probeOn("passive, inactivity_probe=7000", dial(filepath.Join(dir, "br0.c5")), 17*time.Second, 7*time.Second)
	go probeOn("passive, inactivity_probe=0", dial(filepath.Join(dir, "br0.c0")), 12*time.Second, 0)
	ac, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	go probeOn("active, default", ac, 14*time.Second, 5*time.Second)
	wg.Wait()
	close(results)
	for r := range results {
		if r.wantEcho == 0 {
			if r.echo != 0 || r.closed != 0 {
				t.Errorf("%s: echo after %v, closed after %v; want neither", r.name, r.echo, r.closed)
			}
			continue
		}
		if r.echo < r.wantEcho-time.Second || r.echo > r.wantEcho+2*time.Second {
			t.Errorf("%s: echo request after %v, want about %v", r.name, r.echo, r.wantEcho)
		}
		if r.closed < r.cut-time.Second || r.closed > r.cut+2*time.Second {
			t.Errorf("%s: closed after %v, want about %v", r.name, r.closed, r.cut)
		}
	}
}

// TestTraceFieldSetTwiceLikeOpenVSwitch: ofproto/trace refuses a flow
// that sets a field (or the Ethernet type, or the IP protocol) twice,
// with Open vSwitch's words.
func TestTraceFieldSetTwiceLikeOpenVSwitch(t *testing.T) {
	t.Parallel()
	diffOneBridgeAgainstOpenVSwitch(t, func() []ofStep {
		return []ofStep{
			appctl("ofproto/trace", "br0", "in_port=1,in_port=2"),
			appctl("ofproto/trace", "br0", "in_port=1,tcp,udp"),
			appctl("ofproto/trace", "br0", "in_port=1,dl_type=0x0800,ip"),
			appctl("ofproto/trace", "br0", "in_port=1,ip,dl_type=0x0800"),
			appctl("ofproto/trace", "br0", "in_port=1,tcp,nw_proto=6"),
			appctl("ofproto/trace", "br0", "in_port=1,ip,nw_src=10.0.0.1,ip_src=10.0.0.2"),
			appctl("ofproto/trace", "br0", "in_port=1,ip,nw_src=10.0.0.1,nw_dst=10.0.0.2"),
		}
	}, keepTraceFinal)
}

// keepTraceFinal keeps a failed trace step whole (the daemon's name
// aside) and of a trace that ran its command and last line (the datapath
// actions).
func keepTraceFinal(s string) string {
	s = strings.ReplaceAll(s, "gvs-vswitchd", "ovs-vswitchd")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= 2 || !strings.HasSuffix(lines[0], "[exit 0]") {
		return s
	}
	return lines[0] + "\n" + lines[len(lines)-1]
}

// TestManagerInactivityProbeAsOpenVSwitch: a Manager row's
// inactivity_probe (7000 ms here, set with ovs-vsctl) probes its OVSDB
// sessions as ovsdb-server's jsonrpc sessions: an "echo" request after
// the interval without traffic, the session closed after as long again
// unanswered; 0 disables the probe.
func TestManagerInactivityProbeAsOpenVSwitch(t *testing.T) {
	t.Parallel()
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	_, env := startDaemon(t)
	port := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}
	p7, p0 := port(), port()
	t7, t0 := fmt.Sprintf("ptcp:%d:127.0.0.1", p7), fmt.Sprintf("ptcp:%d:127.0.0.1", p0)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20",
		"--", "--id=@a", "create", "manager", "target=\""+t7+"\"", "inactivity_probe=7000",
		"--", "--id=@b", "create", "manager", "target=\""+t0+"\"", "inactivity_probe=0",
		"--", "set", "open", ".", "manager_options=[@a,@b]")
	dial := func(p int) net.Conn {
		var c net.Conn
		waitFor(t, "the manager listener", func() bool {
			var err error
			c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			return err == nil
		})
		return c
	}
	type result struct{ echo, closed time.Duration }
	watch := func(c net.Conn, limit time.Duration, out chan<- result) {
		defer c.Close()
		start := time.Now()
		c.SetReadDeadline(start.Add(limit))
		next := newJSONFramer(bufio.NewReader(c))
		var r result
		for {
			m, err := next()
			if err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					r.closed = time.Since(start)
				}
				out <- r
				return
			}
			if strings.Contains(m, `"method":"echo"`) && r.echo == 0 {
				r.echo = time.Since(start)
			}
		}
	}
	r7, r0 := make(chan result, 1), make(chan result, 1)
	go watch(dial(p7), 17*time.Second, r7)
	go watch(dial(p0), 16*time.Second, r0)
	if r := <-r7; r.echo < 6*time.Second || r.echo > 9*time.Second || r.closed < 13*time.Second || r.closed > 16*time.Second {
		t.Errorf("inactivity_probe=7000: echo after %v, closed after %v; want about 7 s and 14 s", r.echo, r.closed)
	}
	if r := <-r0; r.echo != 0 || r.closed != 0 {
		t.Errorf("inactivity_probe=0: echo after %v, closed after %v; want neither", r.echo, r.closed)
	}
}

// echoVersions connects to br0.mgmt in the run directory of env,
// negotiates OpenFlow 1.3, sends echo requests in versions 1, 4 and 6 and
// returns the version, type and xid of each reply.
func echoVersions(t *testing.T, env []string) []string {
	t.Helper()
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "OVS_RUNDIR="); ok {
			dir = v
		}
	}
	c, err := net.Dial("unix", filepath.Join(dir, "br0.mgmt"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write(ofHello)
	r := bufio.NewReader(c)
	read := func() []byte {
		h := make([]byte, 8)
		if _, err := io.ReadFull(r, h); err != nil {
			t.Fatal(err)
		}
		body := make([]byte, int(binary.BigEndian.Uint16(h[2:4]))-8)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := read(); h[1] != 0 {
		t.Fatalf("first message type %d, want a hello", h[1])
	}
	var out []string
	for i, v := range []byte{1, 4, 6} {
		c.Write([]byte{v, 2, 0, 12, 0, 0, 0, byte(20 + i), 'p', 'i', 'n', 'g'})
		h := read()
		out = append(out, fmt.Sprintf("request v%d xid %d: reply v%d type %d xid %d", v, 20+i, h[0], h[1], binary.BigEndian.Uint32(h[4:8])))
	}
	return out
}

// TestEchoRepliesCarryTheRequestsVersionLikeOpenVSwitch: on a connection
// that negotiated OpenFlow 1.3, Open vSwitch answers an echo request of
// any version in that request's version; so does gvs.
func TestEchoRepliesCarryTheRequestsVersionLikeOpenVSwitch(t *testing.T) {
	for _, bin := range []string{"ovs-vsctl", "ovs-vswitchd", "ovsdb-server", "ovsdb-tool"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpOneBridge(t, ovsEnv)
	want := echoVersions(t, ovsEnv)
	stopOVS()
	_, gvsEnv := startDaemon(t)
	setUpOneBridge(t, gvsEnv)
	got := echoVersions(t, gvsEnv)
	t.Logf("Open vSwitch:\n%s", strings.Join(want, "\n"))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gvs:\n%s\nOpen vSwitch:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
