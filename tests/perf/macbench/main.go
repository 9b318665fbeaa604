// Command macbench measures MAC learning over veths, gvs and Open vSwitch
// side by side in one run (issue 6): two bridges joined by a "physical"
// veth pair, each with a "guest" veth and a "flood counter" veth, all
// forwarding with NORMAL, and N bidirectional flows with distinct MACs.
//
// Topology (every interface in a namespace this program makes; see
// topo.go): bridge A has ports ga (peer g0 in gvsmb-ga), pa and fa (peer
// f0 in gvsmb-fa); bridge B has pb (pa's peer), gb (peer g0 in gvsmb-gb)
// and fb (peer f0 in gvsmb-fb). The switch runs in gvsmb-sw. A frame a
// bridge floods reaches its flood counter, whose kernel receive counter
// counts it the same way for both switches.
//
// Flows: gA sends src x_i dst y_i and gB sends src y_i dst x_i, so a
// full table holds 4N entries (x_i and y_i on each bridge). For each N and
// forwarder: start the switch, wait until a probe frame crosses it,
// flush the tables, warm up with one pass over all N flows from gA and
// then from gB (at most -warm-window frames in flight, so nothing is
// dropped), read `fdb/stats-show` and count `dpctl/dump-flows`, then send
// random flows from both guests as fast as one generator thread can for
// -settle plus -duration and read the kernel counters over -duration:
// delivered Mpps (frames received by the two guests), and flood ratio
// (frames received by the flood counters over frames sent, and over
// frames delivered; a frame flooded by both bridges counts twice).
//
// Forwarders, one after the other on the same veths:
//
//   - gvs: gvs-vswitchd (-gvs, built with `go build -o /tmp/macbench-gvs
//     ./cmd/gvs-vswitchd`) with its embedded database,
//     other_config:mac-table-size=-mac-table-size;
//   - ovs: Debian's ovsdb-server and ovs-vswitchd (3.1), default
//     mac-table-size (8,192);
//   - ovs-raised: the same with other_config:mac-table-size=-mac-table-size
//     (Open vSwitch clamps it; the table reports what it uses).
//
// All: datapath_type=netdev, type=system ports, fail_mode=standalone.
//
// The generator is this binary re-executed with -mode gen (gen.go),
// sending 64-byte UDP frames with sendmmsg on both guests from one thread.
//
// Run as root:
//
//	go build -o /tmp/macbench-gvs ./cmd/gvs-vswitchd
//	go run ./tests/perf/macbench -n 256,10000,100000 -duration 10s \
//	    -csv /tmp/macbench.csv -plot docs/img/macbench.svg
//	go run ./tests/perf/macbench -from-csv /tmp/a.csv,/tmp/b.csv -plot docs/img/macbench.svg
package main

import (
	"cmp"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

type options struct {
	ns           []int
	forwarders   []string
	duration     time.Duration
	settle       time.Duration
	macTableSize int
	gvsBin       string
	warmWindow   int
	warmStall    time.Duration
	warmLimit    time.Duration
	csvPath      string
	plotPath     string
	seed         uint64
}

func main() {
	mode := flag.String("mode", "bench", "bench | gen (internal: the generator)")
	nList := flag.String("n", "256,10000,100000", "comma-separated numbers of bidirectional flows N (4N table entries)")
	fwd := flag.String("forwarders", "gvs,ovs,ovs-raised", "forwarders to measure, in order")
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "measured steady-state time per N and forwarder")
	flag.DurationVar(&o.settle, "settle", time.Second, "random traffic before the measured window")
	flag.IntVar(&o.macTableSize, "mac-table-size", 4000000, "other_config:mac-table-size for gvs and ovs-raised")
	flag.StringVar(&o.gvsBin, "gvs", "/tmp/macbench-gvs", "gvs-vswitchd binary")
	flag.IntVar(&o.warmWindow, "warm-window", 64, "warm-up: frames in flight at most")
	flag.DurationVar(&o.warmStall, "warm-stall", time.Second, "warm-up: a frame not delivered within this is lost")
	flag.DurationVar(&o.warmLimit, "warm-limit", 15*time.Minute, "warm-up: give up after this long")
	flag.StringVar(&o.csvPath, "csv", "", "write the results as CSV to this file")
	flag.StringVar(&o.plotPath, "plot", "", "write an SVG plot to this file")
	flag.Uint64Var(&o.seed, "seed", 1, "generator seed")
	fromCSV := flag.String("from-csv", "", "comma-separated CSV files of earlier runs: print and plot them, measure nothing")
	genN := flag.Int("gen-n", 0, "generator: N")
	flag.Parse()

	var err error
	switch *mode {
	case "gen":
		err = genMain(*genN, o.seed, os.Stdin, os.Stdout)
	case "bench":
		if *fromCSV != "" {
			err = replot(strings.Split(*fromCSV, ","), o)
			break
		}
		if o.ns, err = parseNList(*nList); err != nil {
			break
		}
		o.forwarders = strings.Split(*fwd, ",")
		for _, f := range o.forwarders {
			if _, _, err = forwarderKind(f); err != nil {
				break
			}
		}
		if err == nil {
			err = bench(o)
		}
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "macbench:", err)
		os.Exit(1)
	}
}

func parseNList(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1<<24 {
			return nil, fmt.Errorf("-n: bad flow count %q (want 1..16777216)", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// result is one (N, forwarder) measurement.
type result struct {
	N                 int
	Forwarder         string
	Time              string // UTC, when the measured window started
	Load              string // /proc/loadavg's 1/5/15-minute averages then
	SentMpps          float64
	DeliveredMpps     float64
	FloodPctSent      float64
	FloodPctDelivered float64
	FDBEntries        int // both bridges, after warm-up
	FDBMax            int // one bridge's maximum
	MegaflowsWarm     int // after warm-up
	MegaflowsSteady   int // after the measured window
	FlowLimit         int // Open vSwitch's dynamic flow limit after the run (-1: n/a)
	WarmSeconds       float64
	WarmLost          uint64
	WarmComplete      bool
	Err               string
}

var csvHeader = []string{"n", "forwarder", "time_utc", "load", "sent_mpps", "delivered_mpps", "flood_pct_sent",
	"flood_pct_delivered", "fdb_entries", "fdb_max", "megaflows_warm", "megaflows_steady", "ovs_flow_limit",
	"warm_seconds", "warm_lost", "warm_complete", "error"}

func (r result) csvRecord() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	return []string{strconv.Itoa(r.N), r.Forwarder, r.Time, r.Load, f(r.SentMpps), f(r.DeliveredMpps), f(r.FloodPctSent),
		f(r.FloodPctDelivered), strconv.Itoa(r.FDBEntries), strconv.Itoa(r.FDBMax), strconv.Itoa(r.MegaflowsWarm),
		strconv.Itoa(r.MegaflowsSteady), strconv.Itoa(r.FlowLimit), strconv.FormatFloat(r.WarmSeconds, 'f', 1, 64),
		strconv.FormatUint(r.WarmLost, 10), strconv.FormatBool(r.WarmComplete), r.Err}
}

func parseCSVRecord(rec []string) (result, error) {
	if len(rec) != len(csvHeader) {
		return result{}, fmt.Errorf("%d fields, want %d", len(rec), len(csvHeader))
	}
	var r result
	var errs []error
	atoi := func(s string) int {
		v, err := strconv.Atoi(s)
		errs = append(errs, err)
		return v
	}
	atof := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		errs = append(errs, err)
		return v
	}
	r.N, r.Forwarder, r.Time, r.Load = atoi(rec[0]), rec[1], rec[2], rec[3]
	r.SentMpps, r.DeliveredMpps, r.FloodPctSent, r.FloodPctDelivered = atof(rec[4]), atof(rec[5]), atof(rec[6]), atof(rec[7])
	r.FDBEntries, r.FDBMax, r.MegaflowsWarm, r.MegaflowsSteady, r.FlowLimit = atoi(rec[8]), atoi(rec[9]), atoi(rec[10]), atoi(rec[11]), atoi(rec[12])
	r.WarmSeconds = atof(rec[13])
	lost, err := strconv.ParseUint(rec[14], 10, 64)
	errs = append(errs, err)
	r.WarmLost = lost
	r.WarmComplete, err = strconv.ParseBool(rec[15])
	errs = append(errs, err)
	r.Err = rec[16]
	for _, e := range errs {
		if e != nil {
			return result{}, e
		}
	}
	return r, nil
}

func writeCSV(w io.Writer, rs []result) error {
	cw := csv.NewWriter(w)
	cw.Write(csvHeader)
	for _, r := range rs {
		cw.Write(r.csvRecord())
	}
	cw.Flush()
	return cw.Error()
}

func readCSV(r io.Reader) ([]result, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || !slices.Equal(recs[0], csvHeader) {
		return nil, fmt.Errorf("not a macbench CSV (header %q)", recs)
	}
	var rs []result
	for i, rec := range recs[1:] {
		res, err := parseCSVRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+2, err)
		}
		rs = append(rs, res)
	}
	return rs, nil
}

const tableHeader = "%9s %-10s %8s %9s %8s %8s %10s %8s %9s %9s %7s %5s %s\n"

func printHeader(w io.Writer) {
	fmt.Fprintf(w, tableHeader, "N", "forwarder", "sent", "delivered", "flood%", "flood%", "fdb", "fdb", "megaflows", "megaflows", "warm", "warm", "load (1/5/15 min)")
	fmt.Fprintf(w, tableHeader, "", "", "Mpps", "Mpps", "of sent", "of dlvd", "entries", "max", "warm", "steady", "s", "lost", "")
}

func printRow(w io.Writer, r result) {
	if r.Err != "" {
		fmt.Fprintf(w, "%9d %-10s error: %s\n", r.N, r.Forwarder, r.Err)
		return
	}
	warm := fmt.Sprintf("%.1f", r.WarmSeconds)
	if !r.WarmComplete {
		warm += "!"
	}
	fmt.Fprintf(w, "%9d %-10s %8.3f %9.3f %8.2f %8.2f %10d %8d %9d %9d %7s %5d %s\n", r.N, r.Forwarder, r.SentMpps, r.DeliveredMpps,
		r.FloodPctSent, r.FloodPctDelivered, r.FDBEntries, r.FDBMax, r.MegaflowsWarm, r.MegaflowsSteady, warm, r.WarmLost, r.Load)
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func bench(o options) error {
	if slices.Contains(o.forwarders, "gvs") {
		if _, err := os.Stat(o.gvsBin); err != nil {
			return fmt.Errorf("gvs-vswitchd binary: %w (build it: go build -o %s ./cmd/gvs-vswitchd)", err, o.gvsBin)
		}
	}
	for _, b := range []string{"ovs-vsctl", "ovs-appctl", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s not found (Debian package openvswitch-common / iproute2): %w", b, err)
		}
	}
	work, err := os.MkdirTemp("", "macbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := setupTopology(); err != nil {
		teardown()
		return err
	}
	defer teardown()
	ovsVer := "?"
	if out, err := exec.Command("ovs-vswitchd", "--version").Output(); err == nil {
		ovsVer = firstLine(string(out))
	}
	fmt.Printf("macbench: NORMAL over veths, 64-byte UDP frames, %v measured after %v; warm-up window %d; %d CPUs; %s; started %s UTC\n",
		o.duration, o.settle, o.warmWindow, runtime.NumCPU(), ovsVer, time.Now().UTC().Format("2006-01-02 15:04:05"))
	fmt.Printf("mac-table-size for gvs and ovs-raised: %d\n", o.macTableSize)
	printHeader(os.Stdout)
	var rs []result
	for _, n := range o.ns {
		for _, f := range o.forwarders {
			r := measureOne(o, work, n, f)
			rs = append(rs, r)
			printRow(os.Stdout, r)
			if o.csvPath != "" {
				if err := writeCSVFile(o.csvPath, rs); err != nil {
					return err
				}
			}
		}
	}
	if o.plotPath != "" {
		return writePlot(o.plotPath, rs)
	}
	return nil
}

func writeCSVFile(path string, rs []result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeCSV(f, rs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writePlot(path string, rs []result) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	caption := "MAC learning over veths (tests/perf/macbench): gvs and Open vSwitch 3.1, NORMAL, 64-byte frames"
	return os.WriteFile(path, []byte(plotSVG(rs, caption)), 0o644)
}

func replot(files []string, o options) error {
	var rs []result
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		got, err := readCSV(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rs = append(rs, got...)
	}
	slices.SortStableFunc(rs, func(a, b result) int { return cmp.Compare(a.N, b.N) })
	printHeader(os.Stdout)
	for _, r := range rs {
		printRow(os.Stdout, r)
	}
	if o.csvPath != "" {
		if err := writeCSVFile(o.csvPath, rs); err != nil {
			return err
		}
	}
	if o.plotPath != "" {
		return writePlot(o.plotPath, rs)
	}
	return nil
}

// measureOne runs one forwarder at one N; failures are recorded in the
// result so that the other measurements still run.
func measureOne(o options, work string, n int, fwd string) result {
	r := result{N: n, Forwarder: fwd, FlowLimit: -1}
	if err := measure(o, work, n, fwd, &r); err != nil {
		r.Err = err.Error()
	}
	return r
}

func measure(o options, work string, n int, fwd string, r *result) error {
	sw, err := startSwitch(fwd, work, o.gvsBin, o.macTableSize)
	if err != nil {
		return err
	}
	defer sw.stop()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	gc := exec.Command(self, "-mode", "gen", "-gen-n", strconv.Itoa(n), "-seed", strconv.FormatUint(o.seed, 10))
	gc.Stderr = os.Stderr
	stdin, err := gc.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := gc.StdoutPipe()
	if err != nil {
		return err
	}
	if err := gc.Start(); err != nil {
		return fmt.Errorf("generator: %w", err)
	}
	g := &genProcess{in: stdin, dec: newDecoder(stdout), wait: gc.Wait}
	killed := false
	defer func() {
		if !killed {
			g.close()
		}
	}()
	fail := func(err error) error {
		gc.Process.Kill()
		gc.Wait()
		killed = true
		return err
	}
	if _, err := g.next("open", 30*time.Second); err != nil {
		return fail(err)
	}
	if _, err := g.do("probe", 90*time.Second); err != nil {
		return fail(err)
	}
	if err := sw.flushFDB(); err != nil {
		return fail(err)
	}
	time.Sleep(200 * time.Millisecond)
	wr, err := g.do(fmt.Sprintf("warm %d %v %v", o.warmWindow, o.warmStall, o.warmLimit), o.warmLimit+o.warmStall+time.Minute)
	r.WarmSeconds, r.WarmLost, r.WarmComplete = wr.Seconds, wr.LostA+wr.LostB, wr.Complete
	if err != nil {
		return fail(err)
	}
	fdb, err := sw.fdb()
	if err != nil {
		return fail(err)
	}
	r.FDBEntries, r.FDBMax = fdb[0].Current+fdb[1].Current, fdb[0].Max
	if r.MegaflowsWarm, err = sw.megaflows(3 * time.Minute); err != nil {
		return fail(err)
	}
	r.Time, r.Load = time.Now().UTC().Add(o.settle).Format("2006-01-02 15:04:05"), loadavg()
	rr, err := g.do(fmt.Sprintf("run %v %v", o.settle, o.duration), o.settle+o.duration+time.Minute)
	if err != nil {
		return fail(err)
	}
	sent, delivered, flooded := float64(rr.TxA+rr.TxB), float64(rr.RxA+rr.RxB), float64(rr.FloodA+rr.FloodB)
	r.SentMpps = sent / rr.Seconds / 1e6
	r.DeliveredMpps = delivered / rr.Seconds / 1e6
	if sent > 0 {
		r.FloodPctSent = 100 * flooded / sent
	}
	if delivered > 0 {
		r.FloodPctDelivered = 100 * flooded / delivered
	}
	if r.MegaflowsSteady, err = sw.megaflows(3 * time.Minute); err != nil {
		return fail(err)
	}
	if strings.HasPrefix(fwd, "ovs") {
		r.FlowLimit = sw.flowLimit()
	}
	return nil
}
