// Command vethbench measures forwarding over veth pairs, in one run, for
// three forwarders between the same two interfaces:
//
//   - raw: a bare AF_PACKET loop (gvs's afpacket port, receive then send,
//     no parsing): the limit of these ports on this machine;
//   - gvs: the gvs userspace datapath (one worker, afpacket ports, one
//     wildcarded megaflow or one megaflow per 5-tuple);
//   - gvs-1pmd, gvs-2pmd: the same datapath with the daemon's PMD
//     placement: N PMD threads pinned to the first N cores and the
//     generator's port with N rx queues (an AF_PACKET fanout group);
//   - ovs: Debian's ovs-vswitchd with datapath_type=netdev and type=system
//     ports on the same veths, with the equivalent OpenFlow flow
//     (in_port=1,actions=output:2).
//
// Topology: namespace gvsb-gen holds g0, peer vbgen in the root namespace;
// namespace gvsb-sink holds s0, peer vbsink. A generator process (this
// binary re-executed in gvsb-gen) sends 64-byte UDP frames with -flows
// distinct 5-tuples as fast as it can through an AF_PACKET socket; the
// sink is s0's receive counter (the kernel counts every frame that
// arrives, then drops it: no userspace sink competes for the two cores).
// Each forwarder runs alone for -duration while the generator runs, and
// the rate is the sink's counter delta over the measured window.
//
// Run as root: go run ./tests/perf/vethbench -flows 1,256,10000 -duration 5s
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/flow"
	"github.com/gvs-project/gvs/datapath/netdev/afpacket"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
	"github.com/gvs-project/gvs/datapath/pmd"
)

const (
	nsGen, nsSink   = "gvsb-gen", "gvsb-sink"
	ifGen, ifSink   = "vbgen", "vbsink"
	genInner, sinkI = "g0", "s0"
)

func main() {
	mode := flag.String("mode", "bench", "bench | gen (internal: the generator)")
	flows := flag.String("flows", "1,256,10000", "comma-separated numbers of distinct 5-tuples")
	dur := flag.Duration("duration", 5*time.Second, "measured time per forwarder and flow count")
	which := flag.String("forwarders", "raw,gvs,gvs-perflow,ovs", "forwarders to measure")
	genFlows := flag.Int("n", 1, "generator: distinct 5-tuples")
	genDur := flag.Duration("for", 5*time.Second, "generator: how long to send")
	flag.Parse()
	var err error
	switch *mode {
	case "gen":
		err = generate(genInner, *genFlows, *genDur)
	default:
		err = bench(*flows, *which, *dur)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "vethbench:", err)
		os.Exit(1)
	}
}

func sh(args ...string) error {
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func teardown() {
	exec.Command("ip", "link", "del", ifGen).Run()
	exec.Command("ip", "link", "del", ifSink).Run()
	exec.Command("ip", "netns", "del", nsGen).Run()
	exec.Command("ip", "netns", "del", nsSink).Run()
}

func setup() error {
	teardown()
	for _, h := range [][3]string{{nsGen, ifGen, genInner}, {nsSink, ifSink, sinkI}} {
		steps := [][]string{
			{"ip", "netns", "add", h[0]},
			{"ip", "link", "add", h[1], "type", "veth", "peer", "name", h[2]},
			{"ip", "link", "set", h[2], "netns", h[0]},
			{"ip", "-n", h[0], "link", "set", h[2], "up"},
			{"ip", "link", "set", h[1], "up"},
			{"ip", "netns", "exec", h[0], "sysctl", "-qw", "net.ipv6.conf." + h[2] + ".disable_ipv6=1"},
		}
		for _, s := range steps {
			if err := sh(s...); err != nil {
				return err
			}
		}
		os.WriteFile("/proc/sys/net/ipv6/conf/"+h[1]+"/disable_ipv6", []byte("1"), 0o644)
	}
	return nil
}

func sinkCount() (uint64, error) {
	out, err := exec.Command("ip", "netns", "exec", nsSink, "cat", "/sys/class/net/"+sinkI+"/statistics/rx_packets").Output()
	if err != nil {
		return 0, fmt.Errorf("reading sink counter: %w", err)
	}
	return strconv.ParseUint(strings.TrimSpace(string(out)), 10, 64)
}

// measure runs the generator for dur plus a warm-up and returns the
// forwarded rate in Mpps over the window after the warm-up.
func measure(nflows int, dur time.Duration) (float64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	warm := time.Second
	gen := exec.Command("ip", "netns", "exec", nsGen, self, "-mode", "gen", "-n", strconv.Itoa(nflows), "-for", (warm + dur + time.Second).String())
	gen.Stderr = os.Stderr
	if err := gen.Start(); err != nil {
		return 0, err
	}
	defer gen.Wait()
	time.Sleep(warm)
	a, err := sinkCount()
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	time.Sleep(dur)
	b, err := sinkCount()
	if err != nil {
		return 0, err
	}
	return float64(b-a) / time.Since(t0).Seconds() / 1e6, nil
}

// frame builds 64-byte UDP frame i (60 bytes on the wire without FCS).
func frame(i int) []byte {
	f := make([]byte, 60)
	copy(f[0:6], []byte{0x02, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{0x02, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], 46)
	binary.BigEndian.PutUint32(ip[12:], 0xc6120000|uint32(i>>16&0xff)) // 198.18.0.0/15, benchmarking range
	binary.BigEndian.PutUint32(ip[16:], 0xc6130000|uint32(i&0xffff))
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:20]))
	binary.BigEndian.PutUint16(ip[20:], uint16(1024+i%50000))
	binary.BigEndian.PutUint16(ip[22:], uint16(2000+i/50000))
	binary.BigEndian.PutUint16(ip[24:], 26)
	return f
}

// generate sends frames on ifname (inside the generator namespace) as
// fast as the socket takes them, for d.
func generate(ifname string, nflows int, d time.Duration) error {
	runtime.LockOSThread()
	dev, err := afpacket.Open(afpacket.Config{Name: ifname, NoPromisc: true})
	if err != nil {
		return err
	}
	defer dev.Close()
	frames := make([][]byte, nflows)
	for i := range frames {
		frames[i] = frame(i)
	}
	pool := packet.NewPool(2 * packet.BatchSize)
	var b packet.Batch
	next := 0
	end := time.Now().Add(d)
	for i := 0; ; i++ {
		if i%64 == 0 && time.Now().After(end) {
			return nil
		}
		for b.N < packet.BatchSize {
			p := pool.Get()
			p.SetData(frames[next])
			b.Add(p)
			if next++; next == nflows {
				next = 0
			}
		}
		dev.Send(0, &b, pool)
	}
}

type forwarder interface {
	start(nflows int) error
	stop()
}

// rawFwd is the bare AF_PACKET loop: the ports' limit.
type rawFwd struct {
	in, out *afpacket.Device
	quit    atomic.Bool
	done    chan struct{}
}

func (r *rawFwd) start(int) error {
	var err error
	if r.in, err = afpacket.Open(afpacket.Config{Name: ifGen}); err != nil {
		return err
	}
	if r.out, err = afpacket.Open(afpacket.Config{Name: ifSink}); err != nil {
		return err
	}
	r.done = make(chan struct{})
	r.quit.Store(false)
	go func() {
		defer close(r.done)
		runtime.LockOSThread()
		pool := packet.NewPool(4 * packet.BatchSize)
		var b packet.Batch
		for !r.quit.Load() {
			if n, _ := r.in.Recv(0, &b, pool); n == 0 {
				continue
			}
			r.out.Send(0, &b, pool)
		}
	}()
	return nil
}

func (r *rawFwd) stop() {
	r.quit.Store(true)
	<-r.done
	r.in.Close()
	r.out.Close()
}

// gvsFwd is the gvs datapath with one worker, or with pmds PMD threads
// and as many rx queues on the generator's port.
type gvsFwd struct {
	perFlow bool
	pmds    int
	dp      *dpnetdev.Datapath
	devs    []*afpacket.Device
}

func (g *gvsFwd) start(nflows int) error {
	cfg := dpif.DefaultConfig()
	cfg.FlowLimit = nflows + 16
	g.dp = dpnetdev.New("vethbench", cfg)
	rxqs := 1
	if g.pmds > 0 {
		cores := pmd.DiscoverLayout("/").Cores()
		if len(cores) < g.pmds {
			return fmt.Errorf("%d PMD threads need %d cores, the machine has %d", g.pmds, g.pmds, len(cores))
		}
		g.dp.SetPMDLayout(pmd.NewLayout(cores), true, 0)
		mask := 0
		for _, c := range cores[:g.pmds] {
			mask |= 1 << c.ID
		}
		g.dp.ConfigurePMD(fmt.Sprintf("%x", mask), pmd.Cycles, true)
		rxqs = g.pmds
	}
	for i, name := range []string{ifGen, ifSink} {
		n := 1
		if name == ifGen {
			n = rxqs
		}
		d, err := afpacket.Open(afpacket.Config{Name: name, RxQueues: n})
		if err != nil {
			return err
		}
		g.devs = append(g.devs, d)
		if _, err := g.dp.AddPort(d, uint32(i+1)); err != nil {
			return err
		}
	}
	acts := odp.Actions{odp.Output(2)}
	if !g.perFlow {
		var m flow.Match
		m.Key.InPort, m.Mask.InPort, m.Mask.RecircID = 1, ^uint32(0), ^uint32(0)
		if err := g.dp.FlowPut(&dpif.FlowPut{Match: m, Actions: acts, Flags: dpif.PutCreate}); err != nil {
			return err
		}
	} else {
		var k flow.Key
		var mask flow.Mask
		mask.RecircID, mask.InPort, mask.EthType = ^uint32(0), ^uint32(0), 0xffff
		mask.NwSrc, mask.NwDst, mask.NwProto, mask.NwFrag = ^uint32(0), ^uint32(0), 0xff, 0xff
		mask.TpSrc, mask.TpDst = 0xffff, 0xffff
		for i := 0; i < nflows; i++ {
			p := packet.FromBytes(frame(i))
			p.Md.InPort = 1
			flow.Extract(p, &k)
			if err := g.dp.FlowPut(&dpif.FlowPut{Match: flow.Match{Key: k, Mask: mask}, Actions: acts, Flags: dpif.PutCreate}); err != nil {
				return err
			}
		}
	}
	return g.dp.Start()
}

func (g *gvsFwd) stop() {
	g.dp.Close()
	for _, d := range g.devs {
		d.Close()
	}
	g.devs = nil
}

// ovsFwd is Debian's ovs-vswitchd with the netdev datapath.
type ovsFwd struct {
	dir string
	env []string
}

func (o *ovsFwd) run(args ...string) error {
	c := exec.Command(args[0], args[1:]...)
	c.Env = o.env
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (o *ovsFwd) start(int) error {
	for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s not found (Debian package openvswitch-switch): %w", b, err)
		}
	}
	dir, err := os.MkdirTemp("", "vethbench-ovs")
	if err != nil {
		return err
	}
	o.dir = dir
	o.env = append(os.Environ(), "OVS_RUNDIR="+dir, "OVS_DBDIR="+dir, "OVS_LOGDIR="+dir, "OVS_PKGDATADIR=/usr/share/openvswitch")
	db := filepath.Join(dir, "conf.db")
	steps := [][]string{
		{"ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema"},
		{"ovsdb-server", db, "--remote=punix:" + filepath.Join(dir, "db.sock"), "--pidfile", "--detach", "--log-file"},
		{"ovs-vsctl", "--no-wait", "init"},
		{"ovs-vswitchd", "--pidfile", "--detach", "--log-file", "-vconsole:off"},
		{"ovs-vsctl", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev"},
		{"ovs-vsctl", "add-port", "br0", ifGen, "--", "set", "interface", ifGen, "ofport_request=1"},
		{"ovs-vsctl", "add-port", "br0", ifSink, "--", "set", "interface", ifSink, "ofport_request=2"},
		{"ovs-ofctl", "del-flows", "br0"},
		{"ovs-ofctl", "add-flow", "br0", "in_port=1,actions=output:2"},
	}
	for _, s := range steps {
		if err := o.run(s...); err != nil {
			return err
		}
	}
	return nil
}

func (o *ovsFwd) stop() {
	o.run("ovs-appctl", "-t", "ovs-vswitchd", "exit")
	o.run("ovs-appctl", "-t", "ovsdb-server", "exit")
	os.RemoveAll(o.dir)
}

func bench(flowList, which string, dur time.Duration) error {
	if err := setup(); err != nil {
		return err
	}
	defer teardown()
	fws := map[string]forwarder{
		"raw": &rawFwd{}, "gvs": &gvsFwd{}, "gvs-perflow": &gvsFwd{perFlow: true}, "ovs": &ovsFwd{},
		// PMD threads as the daemon places them: the generator-side port
		// with n_rxq=N (an AF_PACKET fanout group), pmd-cpu-mask of the
		// first N cores, each thread pinned to its core.
		"gvs-1pmd": &gvsFwd{pmds: 1}, "gvs-2pmd": &gvsFwd{pmds: 2},
	}
	names := strings.Split(which, ",")
	fmt.Printf("vethbench: 64-byte UDP frames over veth pairs, %v per measurement, %d CPUs\n", dur, runtime.NumCPU())
	fmt.Printf("%8s", "flows")
	for _, n := range names {
		fmt.Printf(" %12s", n+" Mpps")
	}
	fmt.Printf(" %10s %10s\n", "gvs/ovs", "gvs/raw")
	for _, fs := range strings.Split(flowList, ",") {
		nflows, err := strconv.Atoi(fs)
		if err != nil || nflows < 1 {
			return fmt.Errorf("bad flow count %q", fs)
		}
		rates := map[string]float64{}
		fmt.Printf("%8d", nflows)
		for _, n := range names {
			fw, ok := fws[n]
			if !ok {
				return fmt.Errorf("unknown forwarder %q", n)
			}
			if err := fw.start(nflows); err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			r, err := measure(nflows, dur)
			fw.stop()
			if err != nil {
				return fmt.Errorf("%s: %w", n, err)
			}
			rates[n] = r
			fmt.Printf(" %12.3f", r)
		}
		ratio := func(a, b string) string {
			if rates[a] == 0 || rates[b] == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2f", rates[a]/rates[b])
		}
		fmt.Printf(" %10s %10s\n", ratio("gvs", "ovs"), ratio("gvs", "raw"))
	}
	return nil
}
