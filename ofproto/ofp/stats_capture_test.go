package ofp_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// statsCapturesFile holds what Debian's ovs-ofctl sent to a real
// ovs-vswitchd (dummy datapath) and what the switch replied, for the
// multipart (stats) commands. Replies carry durations, so the file is only
// rewritten with -update (testdata/capture.sh), never compared live.
const statsCapturesFile = "testdata/stats_captures.txt"

// statsFlows are installed in br0 before capturing; table 5 gets enough
// flows that its OF1.0 flow stats reply needs two messages.
var statsFlows = []string{
	"table=0,priority=100,in_port=1,actions=output:2",
	"table=0,cookie=0x5,priority=50,ip,nw_dst=10.0.0.0/8,actions=drop",
	"table=1,cookie=0xabc,idle_timeout=60,hard_timeout=120,importance=3,send_flow_rem,priority=7,dl_dst=00:00:00:00:00:02,actions=resubmit(,2)",
}

const bigTable, bigFlows = 5, 800

var statsCaptureCmds = []struct {
	name string
	args []string
}{
	{"of10_dump_desc", []string{"-O", "OpenFlow10", "dump-desc", "SOCK"}},
	{"of13_dump_desc", []string{"-O", "OpenFlow13", "dump-desc", "SOCK"}},
	{"of10_dump_flows", []string{"-O", "OpenFlow10", "-F", "openflow10", "dump-flows", "SOCK", "table=0"}},
	{"of10_dump_flows_port", []string{"-O", "OpenFlow10", "-F", "openflow10", "dump-flows", "SOCK", "in_port=1,out_port=2"}},
	{"nxm_dump_flows", []string{"-O", "OpenFlow10", "-F", "nxm", "dump-flows", "SOCK"}},
	{"nxm_dump_flows_cookie", []string{"-O", "OpenFlow10", "-F", "nxm", "dump-flows", "SOCK", "cookie=0xabc/-1,table=1"}},
	{"of13_dump_flows", []string{"-O", "OpenFlow13", "dump-flows", "SOCK"}},
	{"of13_dump_flows_cookie", []string{"-O", "OpenFlow13", "dump-flows", "SOCK", "cookie=0x5/0xff,ip,out_port=2"}},
	{"of14_dump_flows", []string{"-O", "OpenFlow14", "dump-flows", "SOCK", "table=1"}},
	{"of15_dump_flows", []string{"-O", "OpenFlow15", "dump-flows", "SOCK"}},
	{"of10_dump_flows_big", []string{"-O", "OpenFlow10", "-F", "openflow10", "dump-flows", "SOCK", fmt.Sprintf("table=%d", bigTable)}},
	{"nxm_dump_flows_big", []string{"-O", "OpenFlow10", "-F", "nxm", "dump-flows", "SOCK", fmt.Sprintf("table=%d", bigTable)}},
	{"of13_dump_flows_big", []string{"-O", "OpenFlow13", "dump-flows", "SOCK", fmt.Sprintf("table=%d", bigTable)}},
	{"of10_dump_aggregate", []string{"-O", "OpenFlow10", "-F", "openflow10", "dump-aggregate", "SOCK", "table=0"}},
	{"nxm_dump_aggregate", []string{"-O", "OpenFlow10", "-F", "nxm", "dump-aggregate", "SOCK", "cookie=0x5/-1"}},
	{"of13_dump_aggregate", []string{"-O", "OpenFlow13", "dump-aggregate", "SOCK"}},
	{"of14_dump_aggregate", []string{"-O", "OpenFlow14", "dump-aggregate", "SOCK", "table=0"}},
	{"of15_dump_aggregate", []string{"-O", "OpenFlow15", "dump-aggregate", "SOCK", "table=0"}},
	{"of10_dump_tables", []string{"-O", "OpenFlow10", "dump-tables", "SOCK"}},
	{"of11_dump_tables", []string{"-O", "OpenFlow11", "dump-tables", "SOCK"}},
	{"of12_dump_tables", []string{"-O", "OpenFlow12", "dump-tables", "SOCK"}},
	{"of13_dump_tables", []string{"-O", "OpenFlow13", "dump-tables", "SOCK"}},
	{"of15_dump_tables", []string{"-O", "OpenFlow15", "dump-tables", "SOCK"}},
	{"of10_dump_ports", []string{"-O", "OpenFlow10", "dump-ports", "SOCK"}},
	{"of10_dump_ports_1", []string{"-O", "OpenFlow10", "dump-ports", "SOCK", "1"}},
	{"of11_dump_ports", []string{"-O", "OpenFlow11", "dump-ports", "SOCK", "2"}},
	{"of13_dump_ports", []string{"-O", "OpenFlow13", "dump-ports", "SOCK"}},
	{"of14_dump_ports", []string{"-O", "OpenFlow14", "dump-ports", "SOCK"}},
	{"of15_dump_ports_local", []string{"-O", "OpenFlow15", "dump-ports", "SOCK", "LOCAL"}},
	{"of10_dump_ports_desc", []string{"-O", "OpenFlow10", "dump-ports-desc", "SOCK"}},
	{"of12_dump_ports_desc", []string{"-O", "OpenFlow12", "dump-ports-desc", "SOCK"}},
	{"of13_dump_ports_desc", []string{"-O", "OpenFlow13", "dump-ports-desc", "SOCK"}},
	{"of14_dump_ports_desc", []string{"-O", "OpenFlow14", "dump-ports-desc", "SOCK"}},
	{"of15_dump_ports_desc", []string{"-O", "OpenFlow15", "dump-ports-desc", "SOCK"}},
	{"of15_dump_ports_desc_1", []string{"-O", "OpenFlow15", "dump-ports-desc", "SOCK", "1"}},
	{"of10_show", []string{"-O", "OpenFlow10", "show", "SOCK"}},
	{"of13_show", []string{"-O", "OpenFlow13", "show", "SOCK"}},
	{"of14_show", []string{"-O", "OpenFlow14", "show", "SOCK"}},
	{"of15_show", []string{"-O", "OpenFlow15", "show", "SOCK"}},
	{"of10_queue_stats", []string{"-O", "OpenFlow10", "queue-stats", "SOCK"}},
	{"of11_queue_stats_1", []string{"-O", "OpenFlow11", "queue-stats", "SOCK", "1", "0"}},
	{"of13_queue_stats", []string{"-O", "OpenFlow13", "queue-stats", "SOCK", "ANY"}},
	{"of14_queue_stats", []string{"-O", "OpenFlow14", "queue-stats", "SOCK"}},
	{"of10_queue_get_config", []string{"-O", "OpenFlow10", "queue-get-config", "SOCK", "1"}},
	{"of11_queue_get_config", []string{"-O", "OpenFlow11", "queue-get-config", "SOCK", "2"}},
	{"of12_queue_get_config_any", []string{"-O", "OpenFlow12", "queue-get-config", "SOCK", "ANY"}},
	{"of14_queue_desc", []string{"-O", "OpenFlow14", "queue-get-config", "SOCK", "ANY"}},
	{"of14_table_desc", []string{"-O", "OpenFlow14", "dump-table-desc", "SOCK"}},
	{"of10_mod_port", []string{"-O", "OpenFlow10", "mod-port", "SOCK", "p1", "no-flood"}},
	{"of12_mod_port", []string{"-O", "OpenFlow12", "mod-port", "SOCK", "p1", "no-receive"}},
	{"of14_mod_port", []string{"-O", "OpenFlow14", "mod-port", "SOCK", "p2", "down"}},
	{"of11_mod_table", []string{"-O", "OpenFlow11", "mod-table", "SOCK", "0", "continue"}},
	{"of14_mod_table", []string{"-O", "OpenFlow14", "mod-table", "SOCK", "1", "vacancy:10,90"}},
}

// proxy relays OpenFlow connections from a unix socket to the switch and
// records every message in each direction.
type proxy struct {
	l      net.Listener
	target string
	wg     sync.WaitGroup
	mu     sync.Mutex
	recs   []captured // guarded by mu
}

func (p *proxy) run() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("unix", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Add(2)
		go p.pump(c, s, true)
		go p.pump(s, c, false)
	}
}

func (p *proxy) pump(from, to net.Conn, sent bool) {
	defer p.wg.Done()
	defer to.Close()
	for {
		b, err := readMsg(from)
		if err != nil {
			return
		}
		p.mu.Lock()
		p.recs = append(p.recs, captured{sent: sent, data: b})
		p.mu.Unlock()
		if _, err := to.Write(b); err != nil {
			return
		}
	}
}

func (p *proxy) take() []captured {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.recs
	p.recs = nil
	return r
}

// recordStats runs every stats command through a recording proxy in
// front of a real ovs-vswitchd and returns the golden-file text.
func recordStats(t *testing.T, ofctl string) string {
	sock := startOVS(t)
	dir := filepath.Dir(sock)
	env := append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_LOGDIR="+dir, "OVS_DBDIR="+dir, "OVS_SYSCONFDIR="+dir)
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	db := "--db=unix:" + filepath.Join(dir, "db.sock")
	for i := 1; i <= 2; i++ {
		run("ovs-vsctl", db, "--timeout=10", "add-port", "br0", fmt.Sprintf("p%d", i), "--",
			"set", "interface", fmt.Sprintf("p%d", i), "type=dummy", fmt.Sprintf("ofport_request=%d", i),
			fmt.Sprintf("mac_in_use=\"00:00:00:00:00:0%d\"", i))
	}
	var flows strings.Builder
	for _, f := range statsFlows {
		flows.WriteString(f + "\n")
	}
	for i := 0; i < bigFlows; i++ {
		fmt.Fprintf(&flows, "table=%d,priority=%d,ip,nw_dst=10.%d.%d.1,actions=output:2\n", bigTable, i+1, i/250, i%250)
	}
	ff := filepath.Join(dir, "flows.txt")
	if err := os.WriteFile(ff, []byte(flows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(ofctl, "-O", "OpenFlow14", "add-flows", "unix:"+sock, ff)
	// Traffic, so that counters are not all zero.
	for i := 0; i < 3; i++ {
		run("ovs-appctl", "-t", "ovs-vswitchd", "netdev-dummy/receive", "p1",
			"in_port(1),eth(src=00:00:00:00:00:01,dst=00:00:00:00:00:02),eth_type(0x0800),ipv4(src=10.1.1.1,dst=10.2.2.2,proto=17,tos=0,ttl=64,frag=no),udp(src=1,dst=2)")
	}

	psock := filepath.Join(dir, "proxy.sock")
	l, err := net.Listen("unix", psock)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: sock}
	p.wg.Add(1)
	go p.run()
	defer func() { l.Close(); p.wg.Wait() }()

	var sb strings.Builder
	for _, c := range statsCaptureCmds {
		args := make([]string, len(c.args))
		for i, a := range c.args {
			if a == "SOCK" {
				a = "unix:" + psock
			}
			args[i] = a
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := exec.CommandContext(ctx, ofctl, append([]string{"--timeout=4"}, args...)...).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("ovs-ofctl %v: %v\n%s", c.args, err, out)
		}
		time.Sleep(50 * time.Millisecond) // let the proxy drain the closed connection
		fmt.Fprintf(&sb, "# %s: ovs-ofctl %s\n", c.name, strings.Join(c.args, " "))
		for _, r := range p.take() {
			dir := "<"
			if r.sent {
				dir = ">"
			}
			fmt.Fprintf(&sb, "%s %s\n", dir, hex.EncodeToString(r.data))
		}
	}
	// Port status: a monitor per version sees p3 added, brought down and
	// deleted.
	for _, v := range []string{"10", "13", "14", "15"} {
		// Service connections get asynchronous messages only once they
		// set a miss_send_len, hence the 128.
		mon := exec.Command(ofctl, "-O", "OpenFlow"+v, "monitor", "unix:"+psock, "128")
		var monOut strings.Builder
		mon.Env, mon.Dir, mon.Stdout, mon.Stderr = env, dir, &monOut, &monOut
		if err := mon.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		run("ovs-vsctl", db, "--timeout=10", "add-port", "br0", "p3", "--", "set", "interface", "p3", "type=dummy", "ofport_request=3")
		time.Sleep(200 * time.Millisecond)
		run(ofctl, "mod-port", "unix:"+sock, "p3", "down")
		time.Sleep(200 * time.Millisecond)
		run("ovs-vsctl", db, "--timeout=10", "del-port", "br0", "p3")
		time.Sleep(300 * time.Millisecond)
		mon.Process.Kill()
		mon.Wait()
		time.Sleep(50 * time.Millisecond)
		fmt.Fprintf(&sb, "# of%s_monitor_port_status: ovs-ofctl -O OpenFlow%s monitor SOCK 128 (p3 added, downed, deleted)\n", v, v)
		statuses := 0
		for _, r := range p.take() {
			dir := "<"
			if r.sent {
				dir = ">"
			} else if r.data[1] == 12 {
				statuses++
			}
			fmt.Fprintf(&sb, "%s %s\n", dir, hex.EncodeToString(r.data))
		}
		if statuses < 3 {
			t.Fatalf("OpenFlow%s monitor saw %d port status messages; it printed:\n%s", v, statuses, monOut.String())
		}
	}
	return sb.String()
}

func readStatsCaptures(t testing.TB) []captured { return readCaptureFile(t, statsCapturesFile) }

// TestRecordStatsCaptures rewrites testdata/stats_captures.txt with -update
// (run testdata/capture.sh); otherwise it does nothing, because the
// switch's replies carry durations that change on every run.
func TestRecordStatsCaptures(t *testing.T) {
	if !*update {
		t.Skip("ofp: stats captures are recorded only with -update")
	}
	got := recordStats(t, needOVSOfctl(t))
	if err := os.WriteFile(statsCapturesFile, []byte(got), 0o644); err != nil {
		t.Fatal(err)
	}
}
