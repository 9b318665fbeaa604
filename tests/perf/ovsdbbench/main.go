// Command ovsdbbench compares gvs's OVSDB server with Debian's
// ovsdb-server in one run, with the same client (gvs's ovsdb/client) and
// the same schema (ovsdb/vswitch.SchemaJSON):
//
//  1. N single-row transactions shaped like `ovs-vsctl add-br` (insert
//     Interface, Port and Bridge, mutate Open_vSwitch.bridges), then N
//     plain updates of one row -> transactions per second;
//  2. one transaction inserting 10,000 rows (Interface+Port pairs added to
//     a bridge's ports) -> seconds, client-side encoding included;
//  3. monitor update latency: a second client monitors Bridge, Port and
//     Interface; the time from Commit returning on the writer to the
//     change reaching the monitor's OnChange callback, p50/p99.
//
// Each server runs as a separate process so that neither shares a Go
// runtime with the client: gvs's server is this same binary re-executed
// with -serve-gvs (CreateDatabaseFile, server.New, AddDatabase, Serve on a
// unix socket); ovsdb-server is started on a file made by `ovsdb-tool
// create`, without --detach, and killed by pid at the end. Both children
// also get SIGKILL if this process dies (Pdeathsig).
//
// gvs fsyncs every committed transaction before replying; ovsdb-server
// (standalone) does not. gvs has no option to turn that off, so gvs is
// measured twice: with its database file on the disk-backed temp dir
// (real fsync) and on tmpfs (/dev/shm, where fsync costs next to nothing),
// which separates the cost of durability from that of the engine.
//
// Usage: go run ./tests/perf/ovsdbbench [-n 1000] [-rows 10000] [-samples 1000]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/ovsdb/client"
	"github.com/gvs-project/gvs/ovsdb/model"
	"github.com/gvs-project/gvs/ovsdb/server"
	"github.com/gvs-project/gvs/ovsdb/vswitch"
)

const dbName = "Open_vSwitch"

// profileDir is -cpuprofile-dir: set once by flag parsing.
var profileDir string

func main() {
	serveSock := flag.String("serve-gvs", "", "internal: serve gvs's OVSDB server on this unix socket (with -db) and exit on SIGTERM")
	dbFile := flag.String("db", "", "internal: database file for -serve-gvs")
	profile := flag.String("profile", "", "internal: CPU profile file for -serve-gvs")
	n := flag.Int("n", 1000, "single-row transactions per kind")
	rows := flag.Int("rows", 10000, "rows in the bulk transaction (even: Interface+Port pairs)")
	samples := flag.Int("samples", 1000, "monitor latency samples")
	tmpfs := flag.String("tmpfs", "/dev/shm", "tmpfs directory for the second gvs run (empty: skip)")
	flag.StringVar(&profileDir, "cpuprofile-dir", "", "write a CPU profile of each gvs server process to DIR/<label>.pprof")
	flag.Parse()
	if *serveSock != "" {
		if err := serveGVS(*serveSock, *dbFile, *profile); err != nil {
			fmt.Fprintln(os.Stderr, "ovsdbbench -serve-gvs:", err)
			os.Exit(1)
		}
		return
	}
	if *n < 1 || *rows < 2 || *samples < 1 {
		fmt.Fprintln(os.Stderr, "ovsdbbench: need -n >= 1, -rows >= 2, -samples >= 1")
		os.Exit(2)
	}
	if err := run(*n, *rows, *samples, *tmpfs); err != nil {
		fmt.Fprintln(os.Stderr, "ovsdbbench:", err)
		os.Exit(1)
	}
}

// serveGVS is the child process: gvs's server on a fresh database file.
func serveGVS(sock, file, profile string) error {
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	db, err := server.CreateDatabaseFile(file, vswitch.SchemaJSON)
	if err != nil {
		return err
	}
	srv := server.New()
	if err := srv.AddDatabase(db); err != nil {
		return err
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Close()
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// target is one server under test.
type target struct {
	name string
	dir  string
	sock string
	cmd  *exec.Cmd
}

func startChild(name string, args []string, logPath string) (*exec.Cmd, error) {
	cmd := exec.Command(args[0], args[1:]...)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	logf.Close()
	return cmd, nil
}

func startGVS(name, parent string) (*target, error) {
	dir, err := os.MkdirTemp(parent, "ovsdbbench-gvs-")
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	t := &target{name: name, dir: dir, sock: filepath.Join(dir, "db.sock")}
	args := []string{self, "-serve-gvs", t.sock, "-db", filepath.Join(dir, "conf.db")}
	if profileDir != "" {
		args = append(args, "-profile", filepath.Join(profileDir, name+".pprof"))
	}
	t.cmd, err = startChild(name, args, filepath.Join(dir, "server.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return t, nil
}

func startOVSDB(parent string) (*target, error) {
	dir, err := os.MkdirTemp(parent, "ovsdbbench-ovs-")
	if err != nil {
		return nil, err
	}
	schema := filepath.Join(dir, "vswitch.ovsschema")
	db := filepath.Join(dir, "conf.db")
	if err := os.WriteFile(schema, vswitch.SchemaJSON, 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command("ovsdb-tool", "create", db, schema).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("ovsdb-tool create: %w: %s", err, out)
	}
	t := &target{name: "ovsdb-server", dir: dir, sock: filepath.Join(dir, "db.sock")}
	t.cmd, err = startChild("ovsdb-server", []string{"ovsdb-server", "--remote=punix:" + t.sock,
		"--unixctl=" + filepath.Join(dir, "ovsdb-server.ctl"), "--no-chdir",
		"--log-file=" + filepath.Join(dir, "ovsdb-server.log"), "-vconsole:off", db}, filepath.Join(dir, "stderr.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return t, nil
}

// stop kills the server by pid and removes its directory.
func (t *target) stop() {
	if t.cmd != nil && t.cmd.Process != nil {
		t.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { t.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.cmd.Process.Kill()
			<-done
		}
	}
	os.RemoveAll(t.dir)
}

func (t *target) dial(ctx context.Context) (*client.Client, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := client.Dial(ctx, "unix:"+t.sock, client.Options{NoReconnect: true})
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// result holds one server's numbers.
type result struct {
	addBrTPS, updateTPS float64
	bulk                time.Duration
	latAfter, latStart  []time.Duration // monitor latency from Commit return / Commit start
}

func run(n, rows, samples int, tmpfs string) error {
	if _, err := exec.LookPath("ovsdb-server"); err != nil {
		return fmt.Errorf("ovsdb-server not found (install openvswitch-switch): %w", err)
	}
	type spec struct {
		label string
		start func() (*target, error)
	}
	specs := []spec{
		{"gvs", func() (*target, error) { return startGVS("gvs", "") }},
	}
	if tmpfs != "" {
		if st, err := os.Stat(tmpfs); err == nil && st.IsDir() {
			specs = append(specs, spec{"gvs-tmpfs", func() (*target, error) { return startGVS("gvs-tmpfs", tmpfs) }})
		}
	}
	specs = append(specs, spec{"ovsdb-server", func() (*target, error) { return startOVSDB("") }})

	// Stop children on ^C too (Pdeathsig covers a crash).
	var cur atomic.Pointer[target]
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		if t := cur.Load(); t != nil {
			t.stop()
		}
		os.Exit(130)
	}()

	fmt.Printf("ovsdbbench: n=%d single-row txns per kind, bulk=%d rows, %d latency samples; %s\n",
		n, rows, samples, ovsVersion())
	results := make([]*result, len(specs))
	for i, s := range specs {
		t, err := s.start()
		if err != nil {
			return err
		}
		cur.Store(t)
		fmt.Printf("  %-13s db in %s\n", s.label, t.dir)
		r, err := measure(t, n, rows, samples)
		t.stop()
		cur.Store(nil)
		if err != nil {
			return fmt.Errorf("%s: %w", s.label, err)
		}
		results[i] = r
	}
	labels := make([]string, len(specs))
	for i, s := range specs {
		labels[i] = s.label
	}
	printTable(labels, results, n, rows)
	return nil
}

func ovsVersion() string {
	out, err := exec.Command("ovsdb-server", "--version").Output()
	if err != nil {
		return "ovsdb-server version unknown"
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}

func measure(t *target, n, rows, samples int) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := t.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	res, err := c.Txn(dbName).Insert("Open_vSwitch", "root", map[string]any{}).Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	root := res.UUIDs["root"]

	addBr := func(name string) (model.UUID, error) {
		res, err := c.Txn(dbName).
			Insert("Interface", "i", map[string]any{"name": name, "type": "internal"}).
			Insert("Port", "p", map[string]any{"name": name, "interfaces": client.NamedUUID("i")}).
			Insert("Bridge", "b", map[string]any{"name": name, "ports": client.NamedUUID("p")}).
			Mutate("Open_vSwitch", []client.Mutation{{Column: "bridges", Mutator: "insert", Value: client.NamedUUID("b")}}, client.UUIDIs(root)).
			Commit(ctx)
		if err != nil {
			return model.UUID{}, fmt.Errorf("add-br %s: %w", name, err)
		}
		return res.UUIDs["b"], nil
	}
	// Warm up both ends, and create the bridge the updates go to.
	br0, err := addBr("br-warm")
	if err != nil {
		return nil, err
	}
	r := &result{}

	start := time.Now()
	for i := range n {
		if _, err := addBr("br" + strconv.Itoa(i)); err != nil {
			return nil, err
		}
	}
	r.addBrTPS = float64(n) / time.Since(start).Seconds()

	start = time.Now()
	for i := range n {
		if _, err := c.Txn(dbName).SetColumns("Bridge", br0, map[string]any{"external_ids": map[string]string{"k": strconv.Itoa(i)}}).Commit(ctx); err != nil {
			return nil, fmt.Errorf("update %d: %w", i, err)
		}
	}
	r.updateTPS = float64(n) / time.Since(start).Seconds()

	if err := measureLatency(ctx, t, c, br0, samples, r); err != nil {
		return nil, err
	}

	txn := c.Txn(dbName)
	ports := make([]any, 0, rows/2)
	for i := range rows / 2 {
		id := strconv.Itoa(i)
		txn.Insert("Interface", "i"+id, map[string]any{"name": "bulk" + id})
		txn.Insert("Port", "p"+id, map[string]any{"name": "bulk" + id, "interfaces": client.NamedUUID("i" + id)})
		ports = append(ports, client.NamedUUID("p"+id))
	}
	txn.Mutate("Bridge", []client.Mutation{{Column: "ports", Mutator: "insert", Value: ports}}, client.UUIDIs(br0))
	start = time.Now()
	if _, err := txn.Commit(ctx); err != nil {
		return nil, fmt.Errorf("bulk insert: %w", err)
	}
	r.bulk = time.Since(start)
	return r, nil
}

type arrival struct {
	seq int
	at  time.Time
}

func measureLatency(ctx context.Context, t *target, writer *client.Client, br model.UUID, samples int, r *result) error {
	mc, err := t.dial(ctx)
	if err != nil {
		return err
	}
	defer mc.Close()
	arrivals := make(chan arrival, samples+16)
	onChange := func(ch client.Change) {
		if ch.Table != "Bridge" || ch.Kind != client.Modify || ch.UUID != br {
			return
		}
		now := time.Now()
		v, ok := ch.New.Get("external_ids").Lookup("seq")
		if !ok {
			return
		}
		s, _ := v.(string)
		if seq, err := strconv.Atoi(s); err == nil {
			arrivals <- arrival{seq, now}
		}
	}
	_, err = mc.Monitor(ctx, dbName, []client.MonitorTable{{Table: "Bridge"}, {Table: "Port"}, {Table: "Interface"}},
		client.MonitorOptions{OnChange: onChange})
	if err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	for i := range samples {
		t0 := time.Now()
		if _, err := writer.Txn(dbName).SetColumns("Bridge", br, map[string]any{"external_ids": map[string]string{"seq": strconv.Itoa(i)}}).Commit(ctx); err != nil {
			return fmt.Errorf("latency update %d: %w", i, err)
		}
		t1 := time.Now()
		timeout := time.After(5 * time.Second)
		for done := false; !done; {
			select {
			case a := <-arrivals:
				if a.seq == i {
					r.latAfter = append(r.latAfter, a.at.Sub(t1))
					r.latStart = append(r.latStart, a.at.Sub(t0))
					done = true
				}
			case <-timeout:
				return fmt.Errorf("monitor update %d did not arrive within 5s", i)
			}
		}
	}
	return nil
}

func pct(d []time.Duration, p float64) time.Duration {
	v := slices.Clone(d)
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(float64(len(v))*p))]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func printTable(labels []string, rs []*result, n, rows int) {
	type metric struct {
		name    string
		f       func(*result) float64
		minBase float64 // smallest ovsdb-server value worth a ratio
	}
	metrics := []metric{
		{fmt.Sprintf("add-br txns/s (N=%d)", n), func(r *result) float64 { return r.addBrTPS }, 0},
		{fmt.Sprintf("update txns/s (N=%d)", n), func(r *result) float64 { return r.updateTPS }, 0},
		{fmt.Sprintf("%d-row txn, s", rows/2*2), func(r *result) float64 { return r.bulk.Seconds() }, 0},
		{"monitor p50 after Commit, µs", func(r *result) float64 { return us(pct(r.latAfter, 0.50)) }, 5},
		{"monitor p99 after Commit, µs", func(r *result) float64 { return us(pct(r.latAfter, 0.99)) }, 5},
		{"monitor p50 from Commit start, µs", func(r *result) float64 { return us(pct(r.latStart, 0.50)) }, 0},
		{"monitor p99 from Commit start, µs", func(r *result) float64 { return us(pct(r.latStart, 0.99)) }, 0},
	}
	ovs := len(labels) - 1 // ovsdb-server is always last
	fmt.Printf("\n%-36s", "metric")
	for _, l := range labels {
		fmt.Printf(" %13s", l)
	}
	for _, l := range labels[:ovs] {
		fmt.Printf(" %13s", l+"/ovs")
	}
	fmt.Println()
	for _, m := range metrics {
		fmt.Printf("%-36s", m.name)
		for _, r := range rs {
			fmt.Printf(" %13.3f", m.f(r))
		}
		base := m.f(rs[ovs])
		for _, r := range rs[:ovs] {
			// A ratio of latencies near zero or of opposite sign means nothing.
			if base < m.minBase || base <= 0 || m.f(r) <= 0 {
				fmt.Printf(" %13s", "-")
				continue
			}
			fmt.Printf(" %13.2f", m.f(r)/base)
		}
		fmt.Println()
	}
	fmt.Println("\ngvs syncs every commit to disk before replying; ovsdb-server (standalone) does not fsync.")
	fmt.Println("gvs-tmpfs keeps gvs's database file on tmpfs, where fsync is nearly free (gvs has no option to disable it).")
	fmt.Println("Monitor latency: change seen by a second client's OnChange callback; negative means it arrived before the writer's Commit returned.")
}
