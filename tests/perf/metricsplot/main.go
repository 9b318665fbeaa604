// Command metricsplot draws a counter of gvs-vswitchd's Prometheus
// endpoint over time while real traffic flows, for docs/observability.md.
//
// It starts gvs-vswitchd (-gvs, built with `go build -o /tmp/gvs-vswitchd
// ./cmd/gvs-vswitchd`) with --metrics-address on loopback, makes bridge br0
// (datapath_type netdev, NORMAL) with two veth ports whose peers sit in
// network namespaces gvsplot-a and gvsplot-b (10.99.0.1 and 10.99.0.2),
// pings from a to b at -rate packets per second during the middle of the
// run, scrapes every -every, and writes an SVG line chart of the rate of
// gvs_port_rx_packets_total on the sending port and of
// gvs_datapath_hits_total (all caches) to -out.
//
// Run as root: go run ./tests/perf/metricsplot -gvs /tmp/gvs-vswitchd -out docs/img/metrics-rx.svg
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func main() {
	gvs := flag.String("gvs", "/tmp/gvs-vswitchd", "gvs-vswitchd binary")
	out := flag.String("out", "docs/img/metrics-rx.svg", "SVG file to write")
	dur := flag.Duration("duration", 12*time.Second, "length of the run")
	every := flag.Duration("every", 250*time.Millisecond, "scrape interval")
	rate := flag.Int("rate", 200, "pings per second during the middle third")
	flag.Parse()
	if err := run(*gvs, *out, *dur, *every, *rate); err != nil {
		fmt.Fprintln(os.Stderr, "metricsplot:", err)
		os.Exit(1)
	}
}

func sh(args ...string) error {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

func teardown() {
	for _, ns := range []string{"gvsplot-a", "gvsplot-b"} {
		exec.Command("ip", "netns", "del", ns).Run()
	}
	for _, l := range []string{"gvsplota", "gvsplotb"} {
		exec.Command("ip", "link", "del", l).Run()
	}
}

// sample is one scrape: seconds since start and the two counters.
type sample struct {
	t         float64
	rx, hits  float64
	scrapedOK bool
}

func run(gvs, out string, dur, every time.Duration, rate int) error {
	teardown()
	defer teardown()
	dir, err := os.MkdirTemp("", "metricsplot")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	d := exec.Command(gvs, "--metrics-address", addr)
	d.Env = env
	if err := d.Start(); err != nil {
		return err
	}
	defer func() { d.Process.Kill(); d.Wait() }()
	vsctl := func(args ...string) error {
		c := exec.Command("ovs-vsctl", append([]string{"--timeout=20"}, args...)...)
		c.Env = env
		if o, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("ovs-vsctl %s: %v: %s", strings.Join(args, " "), err, o)
		}
		return nil
	}
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(filepath.Join(dir, "db.sock")); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, s := range [][]string{
		{"ip", "netns", "add", "gvsplot-a"}, {"ip", "netns", "add", "gvsplot-b"},
		{"ip", "link", "add", "gvsplota", "type", "veth", "peer", "name", "pa", "netns", "gvsplot-a"},
		{"ip", "link", "add", "gvsplotb", "type", "veth", "peer", "name", "pb", "netns", "gvsplot-b"},
		{"ip", "link", "set", "gvsplota", "up"}, {"ip", "link", "set", "gvsplotb", "up"},
		{"ip", "netns", "exec", "gvsplot-a", "ip", "addr", "add", "10.99.0.1/24", "dev", "pa"},
		{"ip", "netns", "exec", "gvsplot-b", "ip", "addr", "add", "10.99.0.2/24", "dev", "pb"},
		{"ip", "netns", "exec", "gvsplot-a", "ip", "link", "set", "pa", "up"},
		{"ip", "netns", "exec", "gvsplot-b", "ip", "link", "set", "pb", "up"},
	} {
		if err := sh(s...); err != nil {
			return err
		}
	}
	if err := vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
		"--", "add-port", "br0", "gvsplota", "--", "add-port", "br0", "gvsplotb"); err != nil {
		return err
	}
	start := time.Now()
	var samples []sample
	pingStart, pingEnd := dur/3, 2*dur/3
	var ping *exec.Cmd
	for t := time.Duration(0); t <= dur; t = time.Since(start) {
		if ping == nil && t >= pingStart {
			count := int((pingEnd - pingStart).Seconds() * float64(rate))
			ping = exec.Command("ip", "netns", "exec", "gvsplot-a", "ping", "-q", "-i", fmt.Sprintf("%.4f", 1/float64(rate)),
				"-c", fmt.Sprint(count), "10.99.0.2")
			if err := ping.Start(); err != nil {
				return err
			}
		}
		s := sample{t: t.Seconds()}
		if fams, err := scrape("http://" + addr + "/metrics"); err == nil {
			s.rx = value(fams, "gvs_port_rx_packets_total", "port", "gvsplota")
			s.hits = value(fams, "gvs_datapath_hits_total", "", "")
			s.scrapedOK = true
		}
		samples = append(samples, s)
		time.Sleep(every)
	}
	if ping != nil {
		ping.Wait()
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(svg(samples, rate)), 0o644)
}

func scrape(url string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// value sums the family's samples whose label (if given) has that value.
func value(fams map[string]*dto.MetricFamily, name, label, want string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
	for _, m := range f.Metric {
		ok := label == ""
		for _, l := range m.Label {
			if l.GetName() == label && l.GetValue() == want {
				ok = true
			}
		}
		if ok {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}

// svg draws per-second rates between consecutive scrapes.
func svg(s []sample, rate int) string {
	const w, h, left, bottom, top, right = 640, 300, 60, 40, 30, 20
	type pt struct{ t, rx, hits float64 }
	var pts []pt
	maxT, maxY := 0.0, float64(rate)*2.2
	for i := 1; i < len(s); i++ {
		if !s[i].scrapedOK || !s[i-1].scrapedOK {
			continue
		}
		dt := s[i].t - s[i-1].t
		p := pt{s[i].t, (s[i].rx - s[i-1].rx) / dt, (s[i].hits - s[i-1].hits) / dt}
		pts = append(pts, p)
		maxT = max(maxT, p.t)
		maxY = max(maxY, p.rx, p.hits)
	}
	x := func(t float64) float64 { return left + t/maxT*(w-left-right) }
	y := func(v float64) float64 { return h - bottom - v/maxY*(h-top-bottom) }
	line := func(get func(pt) float64, color string) string {
		var sb strings.Builder
		for _, p := range pts {
			fmt.Fprintf(&sb, "%.1f,%.1f ", x(p.t), y(get(p)))
		}
		return fmt.Sprintf(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, sb.String())
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="18">gvs-vswitchd /metrics during a ping at %d/s (scraped every 250 ms)</text>`+"\n", left, rate)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, h-bottom)
	for i := 0; i <= 4; i++ {
		v := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<text x="4" y="%.1f">%.0f/s</text>`+"\n", y(v)+4, v)
	}
	for t := 0.0; t <= maxT; t += 2 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%.0fs</text>`+"\n", x(t)-6, h-bottom+16, t)
	}
	b.WriteString(line(func(p pt) float64 { return p.rx }, "#1f77b4") + "\n")
	b.WriteString(line(func(p pt) float64 { return p.hits }, "#d62728") + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#1f77b4">rate(gvs_port_rx_packets_total{port="gvsplota"})</text>`+"\n", left+10, top+14)
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#d62728">rate(gvs_datapath_hits_total)</text>`+"\n", left+10, top+30)
	b.WriteString("</svg>\n")
	return b.String()
}
