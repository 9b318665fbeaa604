package coverage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gvs-project/gvs/internal/nstest"
	"github.com/gvs-project/gvs/unixctl"
)

func TestShowRatesAndTotals(t *testing.T) {
	r := New()
	a := r.Counter("flow_extract")
	b := r.Counter("upcall")
	r.Counter("never_hit")
	if r.Counter("upcall") != b {
		t.Fatal("Counter returned a new counter for an existing name")
	}
	// 13 intervals: 100 events each, then one interval with 7.
	for range 12 {
		a.Add(100)
		r.Tick()
	}
	a.Add(7)
	b.Inc()
	r.Tick()
	got := r.Show()
	// 5 s: 7/5 = 1.4; minute: last 12 intervals = 11*100+7 = 1107/60;
	// hour: 1207/3600.
	want := "Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=" + hashOf("flow_extract", "upcall") + ":\n" +
		"flow_extract               1.4/sec    18.450/sec        0.3353/sec   total: 1207\n" +
		"upcall                     0.2/sec     0.017/sec        0.0003/sec   total: 1\n" +
		"1 events never hit\n"
	if got != want {
		t.Errorf("Show:\n%q\nwant:\n%q", got, want)
	}
}

func hashOf(names ...string) string {
	r := New()
	for _, n := range names {
		r.Counter(n).Inc()
	}
	s := r.Show()
	i := strings.Index(s, "hash=")
	return s[i+5 : i+13]
}

func TestHourAfterManyMinutes(t *testing.T) {
	r := New()
	c := r.Counter("c")
	// 61 minutes at 12 events per interval: the hour ring holds 60 of them.
	for range 61 * 12 {
		c.Add(12)
		r.Tick()
	}
	if got := r.Show(); !strings.Contains(got, "c                          2.4/sec     2.400/sec        2.4000/sec   total: 8784\n") {
		t.Errorf("Show:\n%s", got)
	}
}

func TestReadCounterCommand(t *testing.T) {
	r := New()
	r.Counter("x").Add(42)
	reg := unixctl.NewRegistry("v")
	if err := r.RegisterCommands(reg); err != nil {
		t.Fatal(err)
	}
	cmd, _ := reg.Lookup("coverage/read-counter")
	if got, err := cmd.Run(context.Background(), []string{"x"}); got != "42" || err != nil {
		t.Errorf("read-counter x = %q, %v", got, err)
	}
	if _, err := cmd.Run(context.Background(), []string{"y"}); err == nil || err.Error() != "No such counter" {
		t.Errorf("read-counter y: %v", err)
	}
}

func TestConcurrentAddAndShow(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := r.Counter(fmt.Sprintf("c%d", i%2))
			for range 1000 {
				c.Inc()
			}
			r.Tick()
			_ = r.Show()
		}()
	}
	wg.Wait()
	if a, b := r.Counter("c0").Value(), r.Counter("c1").Value(); a != 2000 || b != 2000 {
		t.Errorf("totals %d %d", a, b)
	}
}

func TestAddDoesNotAllocate(t *testing.T) {
	c := New().Counter("x")
	if n := testing.AllocsPerRun(1000, func() { c.Add(3) }); n != 0 {
		t.Errorf("Add allocates %v times", n)
	}
}

func BenchmarkCounterInc(b *testing.B) {
	c := New().Counter("x")
	b.ReportAllocs()
	for b.Loop() {
		c.Inc()
	}
}

// Every counter line Open vSwitch's coverage/show prints is reproduced by
// formatLine from its own numbers: same widths, precision and spacing.
func TestLineFormatMatchesOVSVswitchd(t *testing.T) {
	out := realCoverageShow(t)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	head := regexp.MustCompile(`^Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=[0-9a-f]{8}:$`)
	if !head.MatchString(lines[0]) {
		t.Errorf("header %q", lines[0])
	}
	if !regexp.MustCompile(`^\d+ events never hit$`).MatchString(lines[len(lines)-1]) {
		t.Errorf("trailer %q", lines[len(lines)-1])
	}
	re := regexp.MustCompile(`^(\S+)\s+(\S+)/sec\s+(\S+)/sec\s+(\S+)/sec   total: (\d+)$`)
	for _, l := range lines[1 : len(lines)-1] {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Errorf("unparsed line %q", l)
			continue
		}
		f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
		total, _ := strconv.ParseUint(m[5], 10, 64)
		if got := formatLine(m[1], f(m[2]), f(m[3]), f(m[4]), total); got != l+"\n" {
			t.Errorf("formatLine\n got %q\nwant %q", got, l+"\n")
		}
	}
}

// realCoverageShow runs ovs-vswitchd (dummy datapath, no database) in a
// temporary run directory and returns its coverage/show.
func realCoverageShow(t *testing.T) string {
	t.Helper()
	var bins []string
	for _, name := range []string{"ovs-vswitchd", "ovs-appctl"} {
		p := nstest.RequireBinary(t, name, "openvswitch-switch")
		bins = append(bins, p)
	}
	dir, err := os.MkdirTemp("", "cov")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	d := exec.Command(bins[0], "--enable-dummy", "--disable-system", "--no-chdir", "unix:"+filepath.Join(dir, "db.sock"))
	d.Env, d.Dir = env, dir
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	ctl := filepath.Join(dir, fmt.Sprintf("ovs-vswitchd.%d.ctl", d.Process.Pid))
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(ctl); err == nil {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("no %s", ctl)
		}
	}
	cmd := exec.Command(bins[1], "-t", ctl, "coverage/show")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ovs-appctl coverage/show: %v", err)
	}
	return string(out)
}
