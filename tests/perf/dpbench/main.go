// Command dpbench measures gvs-vswitchd as users deploy it, side by side
// with Open vSwitch 3.1's ovs-vswitchd (issue 20): each switch configured
// only through ovs-vsctl and ovs-ofctl (datapath_type=netdev, type=system
// ports on veths, other_config:pmd-cpu-mask), pinned with taskset to the
// same core, with the generator and the sink's receive processing on the
// other core, in interleaved rounds (ovs, gvs, raw, ovs, gvs, raw, ...),
// and a ratio per round.
//
// Topology (namespaces this program makes and deletes):
//
//	dpb-gen: g0 ── pg ┐                ┌ ps ── s0 :dpb-sink
//	                  └─ br0 (dpb-sw) ─┘
//
// pg is OpenFlow port 1, ps port 2. The generator (this binary
// re-executed with -mode gen in dpb-gen) sends 64-byte UDP frames with
// sendmmsg as fast as it can; the sink is s0's kernel receive counter
// (frames are addressed to a MAC no interface has, so the kernel drops
// them early), with s0's receive processing steered to the generator's
// core by RPS. "raw" is a bare AF_PACKET receive-and-send loop between pg
// and ps (gvs's afpacket ports, no parsing: -mode raw) on the switch's
// core: the ceiling of these ports here.
//
// Forwarders ovs-afxdp and gvs-afxdp are the same switches with pg and
// ps as type=afxdp ports (AF_XDP sockets, best-effort mode: native XDP
// on these veths) instead of type=system, so that one run compares Open
// vSwitch and gvs on AF_XDP, and gvs on AF_XDP with gvs on AF_PACKET,
// round by round (-forwarders ovs-afxdp,gvs-afxdp,gvs).
//
// Pipelines (-pipelines NAME or NAME:N1/N2, see pipelines.go): output,
// NORMAL with N source MACs, the conntrack pipeline with N connections,
// the OVN pipeline (br-int as ovn-controller lays it out, from
// ovnflows.txt: see gen-ovn-flows.sh) and TCP with iperf3. Each
// measurement reports Mpps at the sink (TCP: Gbit/s by iperf3) and CPU
// time per forwarded packet: the utime+stime of the switch's processes
// (/proc/PID/stat) over the window divided by the frames forwarded.
//
// Run as root from the repository root:
//
//	go build -o /tmp/dpbench-gvs ./cmd/gvs-vswitchd
//	go run ./tests/perf/dpbench -rounds 3 -duration 4s
//	go run ./tests/perf/dpbench -quick       # a smoke check, about a minute
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

type options struct {
	jobs       []job
	forwarders []string
	rounds     int
	duration   time.Duration
	warm       time.Duration
	gvsBin     string
	gvsBase    string
	switchCPU  int
	genCPU     int
	profileDir string
	ovnFlows   string
	rps        bool
}

func main() {
	mode := flag.String("mode", "bench", "bench | gen | raw (gen and raw are internal)")
	var o options
	spec := flag.String("pipelines", "output,normal,ct,ovn,tcp", "pipelines, comma-separated, each NAME or NAME:N1/N2/...")
	fwd := flag.String("forwarders", "ovs,gvs,raw", "forwarders in each round, in order (ovs, gvs, raw, gvs-base; ovs-afxdp, gvs-afxdp: the switch with type=afxdp ports)")
	quick := flag.Bool("quick", false, "smoke check: one round of 1s per pipeline at its smallest size")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds per pipeline and size")
	flag.DurationVar(&o.duration, "duration", 4*time.Second, "measured window per round and forwarder")
	flag.DurationVar(&o.warm, "warm", time.Second, "traffic before the window (plus 1s per 200,000 flows)")
	flag.StringVar(&o.gvsBin, "gvs", "/tmp/dpbench-gvs", "gvs-vswitchd binary (go build -o /tmp/dpbench-gvs ./cmd/gvs-vswitchd)")
	flag.StringVar(&o.gvsBase, "gvs-base", "", "another gvs-vswitchd binary, measured as forwarder gvs-base (a before/after comparison)")
	flag.IntVar(&o.switchCPU, "switch-cpu", 0, "the core of the switch (and of raw)")
	flag.IntVar(&o.genCPU, "gen-cpu", 1, "the core of the generator and the sink")
	flag.StringVar(&o.profileDir, "profile", "", "write a CPU profile of gvs-vswitchd over each gvs window to this directory")
	flag.StringVar(&o.ovnFlows, "ovn-flows", "tests/perf/dpbench/ovnflows.txt", "the OVN pipeline's flow file")
	flag.BoolVar(&o.rps, "rps", false, "steer the hosts' receive processing to the generator's core (RPS; each frame then costs the switch's core an inter-processor interrupt, a VM exit here)")
	genPipe := flag.String("pipeline", "", "gen: the pipeline")
	genN := flag.Int("n", 1, "gen: flows")
	genFor := flag.Duration("for", time.Second, "gen: how long to send")
	flag.Parse()

	var err error
	switch *mode {
	case "gen":
		err = genMain(*genPipe, *genN, *genFor)
	case "raw":
		err = rawMain()
	case "bench":
		if *quick {
			o.rounds, o.duration, o.warm = 1, time.Second, 500*time.Millisecond
		}
		if o.jobs, err = parseJobs(*spec, *quick); err != nil {
			break
		}
		o.forwarders = strings.Split(*fwd, ",")
		for _, f := range o.forwarders {
			switch {
			case f == "gvs-base" && o.gvsBase == "":
				err = fmt.Errorf("forwarder gvs-base needs -gvs-base")
			case f != "ovs" && f != "gvs" && f != "raw" && f != "gvs-base" && f != "ovs-afxdp" && f != "gvs-afxdp":
				err = fmt.Errorf("unknown forwarder %q (want ovs, gvs, raw, gvs-base, ovs-afxdp or gvs-afxdp)", f)
			}
		}
		if err == nil {
			err = bench(o)
		}
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dpbench:", err)
		os.Exit(1)
	}
}

func bench(o options) error {
	for _, b := range []string{"ip", "taskset", "ovs-vsctl", "ovs-ofctl", "ovs-appctl", "ovs-vswitchd", "ovsdb-server", "iperf3", "ethtool"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s not found (Debian packages iproute2, util-linux, openvswitch-switch, iperf3, ethtool): %w", b, err)
		}
	}
	for _, f := range o.forwarders {
		if bin := o.binary(f); bin != "" {
			if _, err := os.Stat(bin); err != nil {
				return fmt.Errorf("gvs-vswitchd binary: %w (go build -o %s ./cmd/gvs-vswitchd)", err, bin)
			}
		}
	}
	if runtime.NumCPU() <= max(o.switchCPU, o.genCPU) || o.switchCPU == o.genCPU {
		return fmt.Errorf("need distinct cores -switch-cpu %d and -gen-cpu %d (%d CPUs)", o.switchCPU, o.genCPU, runtime.NumCPU())
	}
	work, err := os.MkdirTemp("", "dpbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := setupTopology(o.genCPU, o.rps); err != nil {
		teardown()
		return err
	}
	defer teardown()
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("dpbench %s: %d CPUs, switch on CPU %d, generator and sink on CPU %d, %d rounds of %v, load %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), o.switchCPU, o.genCPU, o.rounds, o.duration,
		strings.Join(strings.Fields(string(load))[:3], " "))
	var all []summary
	for _, j := range o.jobs {
		s := summary{job: j, rounds: map[string][]result{}}
		for r := 1; r <= o.rounds; r++ {
			for _, f := range o.forwarders {
				res, err := measureOne(o, work, j, f, r)
				if err != nil {
					return fmt.Errorf("%s n=%d round %d %s: %w", j.p.name, j.n, r, f, err)
				}
				s.rounds[f] = append(s.rounds[f], res)
				fmt.Printf("  %-7s %8d  round %d  %-4s %s\n", j.p.name, j.n, r, f, res)
			}
		}
		all = append(all, s)
	}
	fmt.Println()
	fmt.Print(table(all))
	return nil
}

// binary is forwarder f's gvs-vswitchd ("" for the others).
func (o options) binary(f string) string {
	switch f {
	case "gvs", "gvs-afxdp":
		return o.gvsBin
	case "gvs-base":
		return o.gvsBase
	}
	return ""
}

// measureOne starts forwarder f, offers job j's traffic and measures.
func measureOne(o options, work string, j job, f string, round int) (result, error) {
	var pids []int
	var stop func()
	switch f {
	case "raw":
		self, err := os.Executable()
		if err != nil {
			return result{}, err
		}
		c := exec.Command("ip", "netns", "exec", nsSwitch, "taskset", "-c", strconv.Itoa(o.switchCPU), self, "-mode", "raw")
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			return result{}, err
		}
		pids = []int{c.Process.Pid}
		stop = func() { stopCmd(c) }
		time.Sleep(200 * time.Millisecond)
	default:
		sw, err := startSwitch(o, work, f, j)
		if err != nil {
			return result{}, err
		}
		pids = sw.Pids()
		stop = sw.Stop
	}
	defer stop()
	var prof *exec.Cmd
	if o.binary(f) != "" && o.profileDir != "" {
		out := fmt.Sprintf("%s/%s-%s-%d-r%d.pprof", o.profileDir, f, j.p.name, j.n, round)
		secs := max(1, int(o.duration.Seconds()))
		prof = exec.Command("ip", "netns", "exec", nsSwitch, "taskset", "-c", strconv.Itoa(o.genCPU), "curl", "-sf", "-o", out,
			fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", metricsAddr, secs))
		defer func() {
			if prof.Process != nil {
				prof.Wait()
			}
		}()
	}
	if j.p.tcp {
		return measureTCP(o, pids, prof)
	}
	return measureUDP(o, j, pids, prof)
}
