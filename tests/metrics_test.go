package tests

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/internal/nstest"
)

// startMetricsDaemon runs gvs-vswitchd in-process with the Prometheus
// listener on a loopback port the kernel chooses, and returns the
// /metrics URL and the environment for Open vSwitch's tools.
func startMetricsDaemon(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	cfg := &vswitchd.Config{
		Program: "gvs-vswitchd", RunDir: dir, DBDir: dir, LogDir: dir,
		DBFile: filepath.Join(dir, "conf.db"), Pidfile: filepath.Join(dir, "gvs-vswitchd.pid"),
		LogFile: filepath.Join(dir, "gvs-vswitchd.log"), MetricsAddress: "127.0.0.1:0",
	}
	d, err := vswitchd.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir)
	return "http://" + d.MetricsAddr().String() + "/metrics", env
}

// scrape fetches and parses /metrics.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// metricValue returns the value of the sample of family name whose labels
// are exactly labels ("k=v" pairs), and whether there is one.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	want := map[string]string{}
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		want[k] = v
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		match := true
		for _, lp := range m.GetLabel() {
			if v, ok := want[lp.GetName()]; !ok || v != lp.GetValue() {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// labelValues lists one label's values over a family's samples.
func labelValues(fams map[string]*dto.MetricFamily, name, label string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				out = append(out, lp.GetValue())
			}
		}
	}
	return out
}

const (
	metricsFromP1 = "in_port(1),eth(src=50:54:00:00:00:01,dst=50:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.0.0.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1000,dst=53)"
	metricsFromP2 = "in_port(2),eth(src=50:54:00:00:00:02,dst=50:54:00:00:00:01),eth_type(0x0800),ipv4(src=10.0.0.2,dst=10.0.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=53,dst=1000)"
	metricsFromP3 = "in_port(3),eth(src=50:54:00:00:00:03,dst=ff:ff:ff:ff:ff:ff),eth_type(0x0800),ipv4(src=10.0.0.3,dst=10.0.0.255,proto=17,tos=0,ttl=64,frag=no),udp(src=68,dst=67)"
)

// setUpMetricsBridge makes br0 (dummy datapath) with p1..p3, flows in
// tables 0 and 3 (table 0 keeps the default NORMAL rule: 3 rules, table
// 3: 2), and sends three packets p1→p2, one p2→p1 through
// ct(commit,zone=7), and one broadcast from p3 through NORMAL.
func setUpMetricsBridge(t *testing.T, env []string, appctl string) {
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	// NORMAL is the mac_learn action from the first address, so that
	// the MAC table's per-packet counters (flooded) count.
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy",
		"other_config:mac-learn-action-threshold=0",
		"--", "add-port", "br0", "p1", "--", "set", "interface", "p1", "type=dummy", "ofport_request=1",
		"--", "add-port", "br0", "p2", "--", "set", "interface", "p2", "type=dummy", "ofport_request=2",
		"--", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
	for _, f := range []string{
		"priority=10,in_port=1,actions=output:2",
		"priority=10,ip,in_port=2,actions=ct(commit,zone=7),output:1",
		"table=3,priority=1,actions=drop",
		"table=3,priority=2,ip,actions=drop",
	} {
		run(t, env, "ovs-ofctl", "add-flow", "br0", f)
	}
	for _, p := range []struct{ port, pkt string }{
		{"p1", metricsFromP1}, {"p1", metricsFromP1}, {"p1", metricsFromP1},
		{"p2", metricsFromP2}, {"p3", metricsFromP3},
	} {
		run(t, env, "ovs-appctl", "-t", appctl, "netdev-dummy/receive", p.port, p.pkt)
	}
}

// TestMetricsEndpointReportsPortsFlowsAndTables drives a dummy bridge
// with ovs-vsctl, ovs-ofctl and netdev-dummy/receive and requires exact
// values on /metrics: port counters, OpenFlow rules per table (only
// tables with rules), megaflows, cache hits, misses and upcalls, the
// conntrack zone's connection, the MAC table's learning and flooding.
func TestMetricsEndpointReportsPortsFlowsAndTables(t *testing.T) {
	for _, bin := range []string{"ovs-vsctl", "ovs-ofctl", "ovs-appctl"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	url, env := startMetricsDaemon(t)
	setUpMetricsBridge(t, env, "gvs-vswitchd")

	frameLen := func(pkt string) float64 {
		f, err := flow.ComposeString(pkt)
		if err != nil {
			t.Fatal(err)
		}
		return float64(len(f))
	}
	l1, l2, l3 := frameLen(metricsFromP1), frameLen(metricsFromP2), frameLen(metricsFromP3)

	var fams map[string]*dto.MetricFamily
	waitFor(t, "5 packets through the datapath", func() bool {
		fams = scrape(t, url)
		v, _ := metricValue(fams, "gvs_port_tx_packets_total", "bridge=br0", "port=p2", "ofport=2")
		w, _ := metricValue(fams, "gvs_port_tx_packets_total", "bridge=br0", "port=br0", "ofport=65534")
		return v == 4 && w == 1
	})
	const dp = "datapath=dummy@ovs-dummy"
	want := []struct {
		name   string
		labels []string
		value  float64
	}{
		{"gvs_port_rx_packets_total", []string{"bridge=br0", "port=p1", "ofport=1"}, 3},
		{"gvs_port_rx_bytes_total", []string{"bridge=br0", "port=p1", "ofport=1"}, 3 * l1},
		{"gvs_port_tx_packets_total", []string{"bridge=br0", "port=p1", "ofport=1"}, 2},
		{"gvs_port_tx_bytes_total", []string{"bridge=br0", "port=p1", "ofport=1"}, l2 + l3},
		{"gvs_port_rx_packets_total", []string{"bridge=br0", "port=p2", "ofport=2"}, 1},
		{"gvs_port_tx_packets_total", []string{"bridge=br0", "port=p2", "ofport=2"}, 4},
		{"gvs_port_tx_bytes_total", []string{"bridge=br0", "port=p2", "ofport=2"}, 3*l1 + l3},
		{"gvs_port_rx_packets_total", []string{"bridge=br0", "port=p3", "ofport=3"}, 1},
		{"gvs_port_rx_bytes_total", []string{"bridge=br0", "port=p3", "ofport=3"}, l3},
		{"gvs_port_tx_packets_total", []string{"bridge=br0", "port=p3", "ofport=3"}, 0},
		{"gvs_port_rx_dropped_total", []string{"bridge=br0", "port=p1", "ofport=1"}, 0},
		{"gvs_port_tx_errors_total", []string{"bridge=br0", "port=p2", "ofport=2"}, 0},
		{"gvs_openflow_rules", []string{"bridge=br0", "table=0"}, 3},
		{"gvs_openflow_rules", []string{"bridge=br0", "table=3"}, 2},
		{"gvs_datapath_megaflows", []string{dp}, 3},
		{"gvs_datapath_misses_total", []string{dp}, 3},
		{"gvs_datapath_lost_total", []string{dp}, 0},
		{"gvs_datapath_upcalls_total", []string{dp, "result=ok"}, 3},
		{"gvs_datapath_upcalls_total", []string{dp, "result=failed"}, 0},
		{"gvs_conntrack_connections", []string{dp, "zone=7"}, 1},
		{"gvs_mac_table_entries", []string{"bridge=br0"}, 1},
		{"gvs_mac_table_learned_total", []string{"bridge=br0"}, 1},
		{"gvs_mac_table_flooded_total", []string{"bridge=br0"}, 1},
		{"gvs_mac_table_evicted_total", []string{"bridge=br0"}, 0},
		{"gvs_mac_table_moved_total", []string{"bridge=br0"}, 0},
	}
	for _, w := range want {
		got, ok := metricValue(fams, w.name, w.labels...)
		if !ok {
			t.Errorf("%s{%s}: missing", w.name, strings.Join(w.labels, ","))
		} else if got != w.value {
			t.Errorf("%s{%s} = %v, want %v", w.name, strings.Join(w.labels, ","), got, w.value)
		}
	}
	// The two p1→p2 packets after the first hit a cache, one level or
	// the other.
	emc, _ := metricValue(fams, "gvs_datapath_hits_total", dp, "cache=emc")
	mf, _ := metricValue(fams, "gvs_datapath_hits_total", dp, "cache=megaflow")
	if emc+mf != 2 {
		t.Errorf("cache hits emc=%v megaflow=%v, want 2 in all", emc, mf)
	}
	if got := labelValues(fams, "gvs_openflow_rules", "table"); strings.Join(got, ",") != "0,3" {
		t.Errorf("gvs_openflow_rules tables = %v, want only 0 and 3", got)
	}
	if got := labelValues(fams, "gvs_conntrack_connections", "zone"); strings.Join(got, ",") != "7" {
		t.Errorf("gvs_conntrack_connections zones = %v, want only 7", got)
	}
	if v, _ := metricValue(fams, "gvs_ovsdb_transactions_total"); v < 2 {
		t.Errorf("gvs_ovsdb_transactions_total = %v, want at least the two ovs-vsctl transactions", v)
	}
	// OpenFlow messages by type, error replies, zone flushes, OVSDB
	// monitors: a refused flow_mod and a zone flush move them by one.
	errs0, _ := metricValue(fams, "gvs_openflow_errors_sent_total", "bridge=br0")
	c := exec.Command("ovs-ofctl", "add-flow", "br0", "actions=group:99")
	c.Env = env
	if out, err := c.CombinedOutput(); err == nil {
		t.Fatalf("a flow to a missing group was accepted: %s", out)
	}
	run(t, env, "ovs-appctl", "-t", "gvs-vswitchd", "dpctl/flush-conntrack", "zone=7")
	fams = scrape(t, url)
	if v, _ := metricValue(fams, "gvs_openflow_errors_sent_total", "bridge=br0"); v != errs0+1 {
		t.Errorf("gvs_openflow_errors_sent_total = %v, want %v", v, errs0+1)
	}
	if v, _ := metricValue(fams, "gvs_conntrack_zone_flushes_total", dp, "zone=7"); v != 1 {
		t.Errorf("gvs_conntrack_zone_flushes_total{zone=7} = %v, want 1", v)
	}
	types := strings.Join(labelValues(fams, "gvs_openflow_messages_received_total", "type"), ",")
	for _, want := range []string{"BARRIER_REQUEST", "FLOW_MOD", "FEATURES_REQUEST"} {
		if !strings.Contains(types, want) {
			t.Errorf("gvs_openflow_messages_received_total types %q lack %s", types, want)
		}
	}
	if _, ok := metricValue(fams, "gvs_ovsdb_monitors"); !ok {
		t.Errorf("gvs_ovsdb_monitors missing")
	}
	if f := fams["gvs_port_rx_packets_total"]; f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("gvs_port_rx_packets_total has type %v, want counter", f.GetType())
	}
	if f := fams["gvs_datapath_megaflows"]; f.GetType() != dto.MetricType_GAUGE {
		t.Errorf("gvs_datapath_megaflows has type %v, want gauge", f.GetType())
	}
}

// TestMetricsListenerIsOffByDefault: without --metrics-address the daemon
// listens on no TCP port.
func TestMetricsListenerIsOffByDefault(t *testing.T) {
	d, _ := startDaemon(t)
	if a := d.MetricsAddr(); a != nil {
		t.Fatalf("metrics listener on %v without --metrics-address", a)
	}
}

// pmdStatsLabels returns the labels ("packets received", ...) of a
// pmd-stats-show thread section, in order, and the thread header lines.
func pmdStatsLabels(out string) (headers, labels []string) {
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "  ") {
			headers = append(headers, l)
			continue
		}
		k, _, _ := strings.Cut(strings.TrimSpace(l), ":")
		labels = append(labels, k)
	}
	return headers, labels
}

var pmdHeaderRE = regexp.MustCompile(`^(main thread|pmd thread numa_id \d+ core_id \d+):$`)

// TestPmdStatsShowHasOpenVSwitchLayout runs the same bridge and packets
// through Open vSwitch (dummy datapath) and gvs, and requires gvs's
// dpif-netdev/pmd-stats-show to be Open vSwitch's lines, in its order,
// with only the lines gvs cannot measure left out, and exact counts.
func TestPmdStatsShowHasOpenVSwitchLayout(t *testing.T) {
	for _, bin := range []string{"ovs-ofctl", "ovs-vsctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server"} {
		nstest.RequireBinary(t, bin, "openvswitch-switch")
	}
	ovsEnv, stopOVS := startOpenVSwitch(t)
	setUpMetricsBridge(t, ovsEnv, "ovs-vswitchd")
	waitFor(t, "Open vSwitch to count 5 packets", func() bool {
		return strings.Contains(run(t, ovsEnv, "ovs-appctl", "-t", "ovs-vswitchd", "dpif-netdev/pmd-stats-show"), "packets received: 5\n")
	})
	ovsOut := run(t, ovsEnv, "ovs-appctl", "-t", "ovs-vswitchd", "dpif-netdev/pmd-stats-show")
	ovsUpcall := run(t, ovsEnv, "ovs-appctl", "-t", "ovs-vswitchd", "upcall/show")
	stopOVS()

	_, env := startMetricsDaemon(t)
	setUpMetricsBridge(t, env, "gvs-vswitchd")
	appctl := appctlFunc(t, env)
	waitFor(t, "gvs to count 5 packets", func() bool {
		return strings.Contains(appctl("dpif-netdev/pmd-stats-show"), "packets received: 5\n")
	})
	out := appctl("dpif-netdev/pmd-stats-show")
	ovsHeaders, ovsLabels := pmdStatsLabels(ovsOut)
	headers, labels := pmdStatsLabels(out)
	if len(ovsHeaders) != 1 || len(headers) != 1 {
		t.Fatalf("want one thread section each\nOpen vSwitch:\n%s\ngvs:\n%s", ovsOut, out)
	}
	for _, h := range append(headers, ovsHeaders...) {
		if !pmdHeaderRE.MatchString(h) {
			t.Errorf("thread header %q", h)
		}
	}
	// gvs's labels are Open vSwitch's minus "avg. packets per output batch"
	// (and the cycle lines of pmd threads), in the same order.
	var want []string
	for _, l := range ovsLabels {
		if l != "avg. packets per output batch" {
			want = append(want, l)
		}
	}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("labels differ\nOpen vSwitch:\n%s\ngvs:\n%s", ovsOut, out)
	}
	for _, line := range []string{
		"  packets received: 5\n", "  packet recirculations: 0\n", "  avg. datapath passes per packet: 1.00\n",
		"  miss with success upcall: 3\n", "  miss with failed upcall: 0\n", "  phwol hits: 0\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("gvs pmd-stats-show lacks %q:\n%s", line, out)
		}
		if !strings.Contains(ovsOut, line) {
			t.Errorf("Open vSwitch's pmd-stats-show lacks %q (the scenario changed?):\n%s", line, ovsOut)
		}
	}
	var emc, mf int
	fmt.Sscanf(out[strings.Index(out, "  emc hits:"):], "  emc hits: %d", &emc)
	fmt.Sscanf(out[strings.Index(out, "  megaflow hits:"):], "  megaflow hits: %d", &mf)
	if emc+mf != 2 {
		t.Errorf("emc hits %d + megaflow hits %d, want 2:\n%s", emc, mf, out)
	}

	// upcall/show: the datapath, flows (with the dynamic limit, which
	// starts at 10000), dump duration and ufid lines as Open vSwitch's;
	// gvs has no per-revalidator key counts.
	up := appctl("upcall/show")
	upRE := `^dummy@ovs-dummy:\n  flows         : \(current %s\) \(avg \d+\) \(max \d+\) \(limit 10000\)\n  dump duration : \d+ms\n  ufid enabled : true\n`
	if !regexp.MustCompile(fmt.Sprintf(upRE, "3") + `\n$`).MatchString(up) {
		t.Errorf("upcall/show:\n%s\nwant:\n%s", up, upRE)
	}
	// (Open vSwitch's current count is that of its last dump, which may
	// not have run yet.)
	if !regexp.MustCompile(fmt.Sprintf(upRE, `\d+`)).MatchString(ovsUpcall) {
		t.Errorf("Open vSwitch's upcall/show has another layout:\n%s", ovsUpcall)
	}
}
