package tests

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gvs-project/gvs/cmd/vswitchd"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/datapath/netdev/dummy"
	"github.com/gvs-project/gvs/internal/nstest"
)

// The overload rig: br0 (dummy datapath, fail_mode=secure, a MAC table of
// 1,000 entries) with four dummy ports. p1→p2 (VLAN 20) carries the
// established flows: 100 UDP flows, each its own megaflow through
// ct(commit,zone=8). p3→p4 (VLAN 10) carries the storm: random MACs and
// 5-tuples through ct(commit,zone=7) and NORMAL; the rule reads the
// source address and port, so every storm packet is a megaflow of its
// own. Conntrack zone 7 is limited to 500 connections.
const (
	ovlEstablished = 100
	ovlFlowLimit   = 2000 // other_config:flow-limit (set on the datapath)
	ovlZoneLimit   = 500
	ovlMACTable    = 1000
)

type overloadRig struct {
	d          *vswitchd.Daemon
	env        []string
	dp         *dpnetdev.Datapath
	metricsURL string
	p1, p2     *dummy.Device
	p3, p4     *dummy.Device
	appctl     func(args ...string) string
	ofctl      func(args ...string) string
}

func newOverloadRig(t *testing.T) *overloadRig {
	t.Helper()
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
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
	r := &overloadRig{d: d, env: env, metricsURL: "http://" + d.MetricsAddr().String() + "/metrics"}
	r.appctl = func(args ...string) string {
		return run(t, env, append([]string{"ovs-appctl", "-t", "gvs-vswitchd"}, args...)...)
	}
	r.ofctl = func(args ...string) string { return run(t, env, append([]string{"ovs-ofctl"}, args...)...) }
	vsctl := func(args ...string) string {
		return run(t, env, append([]string{"ovs-vsctl", "--timeout=20"}, args...)...)
	}
	vsctl("init")
	vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail_mode=secure",
		"other_config:mac-table-size="+strconv.Itoa(ovlMACTable))
	for i, tag := range []string{"20", "20", "10", "10"} {
		p := fmt.Sprintf("p%d", i+1)
		vsctl("add-port", "br0", p, "tag="+tag, "--", "set", "interface", p, "type=dummy", fmt.Sprintf("ofport_request=%d", i+1))
	}
	r.dp = d.Datapath("dummy")
	dev := func(name string) *dummy.Device {
		pi, ok := r.dp.PortByName(name)
		if !ok {
			t.Fatalf("no datapath port %s", name)
		}
		return pi.Device.(*dummy.Device)
	}
	r.p1, r.p2, r.p3, r.p4 = dev("p1"), dev("p2"), dev("p3"), dev("p4")
	var flows strings.Builder
	for i := 0; i < ovlEstablished; i++ {
		fmt.Fprintf(&flows, "priority=100,udp,in_port=1,nw_dst=10.1.0.%d,actions=ct(commit,zone=8),output:2\n", i)
	}
	// Moving the source address and port into registers reads them:
	// every storm packet gets a megaflow of its own.
	flows.WriteString("priority=10,udp,in_port=3,actions=move:NXM_OF_IP_SRC[]->NXM_NX_REG0[],move:NXM_OF_UDP_SRC[]->NXM_NX_REG1[0..15],ct(commit,zone=7),NORMAL\n")
	file := filepath.Join(dir, "flows.txt")
	if err := os.WriteFile(file, []byte(flows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r.ofctl("add-flows", "br0", file)
	r.appctl("dpctl/ct-set-limits", fmt.Sprintf("zone=%d,limit=%d", 7, ovlZoneLimit))
	vsctl("set", "Open_vSwitch", ".", "other_config:max-idle=1000")
	// other_config:flow-limit is not read from the database yet: the
	// datapath's configured limit is the dynamic limit's ceiling.
	r.dp.SetFlowLimit(ovlFlowLimit)
	r.appctl("revalidator/wait")
	return r
}

// ovlUDPFrame builds an Ethernet/IPv4/UDP frame (IP checksum set, UDP
// checksum 0) into buf.
func ovlUDPFrame(buf []byte, src, dst [6]byte, sip, dip [4]byte, sport, dport uint16) []byte {
	f := append(buf[:0], dst[:]...)
	f = append(f, src[:]...)
	f = append(f, 0x08, 0x00)
	ip := len(f)
	f = append(f, 0x45, 0, 0, 28+18, 0, 0, 0x40, 0, 64, 17, 0, 0)
	f = append(f, sip[:]...)
	f = append(f, dip[:]...)
	binary.BigEndian.PutUint16(f[ip+10:], ipChecksum(f[ip:ip+20]))
	f = binary.BigEndian.AppendUint16(f, sport)
	f = binary.BigEndian.AppendUint16(f, dport)
	f = append(f, 0, 8+18, 0, 0)
	return append(f, make([]byte, 18)...)
}

var (
	estSrcMAC = [6]byte{0x50, 0x54, 0, 0, 1, 1}
	estDstMAC = [6]byte{0x50, 0x54, 0, 0, 2, 2}
)

func establishedFrame(i int) []byte {
	return ovlUDPFrame(nil, estSrcMAC, estDstMAC, [4]byte{10, 0, 0, 1}, [4]byte{10, 1, 0, byte(i)}, 1000, 2000)
}

// stormFrame is a frame with random unicast MACs and a random 5-tuple.
func stormFrame(buf []byte, rng *rand.Rand) []byte {
	var src, dst [6]byte
	binary.BigEndian.PutUint64(buf[:8], rng.Uint64())
	copy(src[:], buf[:6])
	binary.BigEndian.PutUint64(buf[:8], rng.Uint64())
	copy(dst[:], buf[:6])
	src[0], dst[0] = 0x02, 0x02 // locally administered unicast
	x := rng.Uint64()
	return ovlUDPFrame(buf, src, dst, [4]byte{10, 2, byte(x), byte(x >> 8)}, [4]byte{10, 3, byte(x >> 16), byte(x >> 24)},
		uint16(x>>32), uint16(x>>48))
}

// injectWindowed injects frame on in, waiting while more than window
// frames are in flight (injected on in but not yet transmitted on out),
// so that in's receive queue never overflows.
func injectWindowed(t *testing.T, in, out *dummy.Device, frame []byte, sent *uint64, base uint64, window uint64) {
	deadline := time.Now().Add(30 * time.Second)
	for *sent-(out.Stats().TxPackets-base) >= window {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d frames in flight for 30 s", in.Name(), *sent-(out.Stats().TxPackets-base))
		}
		time.Sleep(20 * time.Microsecond)
	}
	if !in.Inject(frame) {
		t.Fatalf("%s: receive queue full with a window of %d", in.Name(), window)
	}
	*sent++
}

func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// settleTo waits (up to 5 s) for f to drop to at most want and returns the
// last value.
func settleTo(want int, f func() int) int {
	deadline := time.Now().Add(5 * time.Second)
	n := f()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		n = f()
	}
	return n
}

var upcallShowRE = regexp.MustCompile(`\(current (\d+)\) \(avg \d+\) \(max (\d+)\) \(limit (\d+)\)`)

// rulePackets sums n_packets of dump-flows lines containing sub.
func rulePackets(dump, sub string) (n uint64, rules int) {
	re := regexp.MustCompile(`n_packets=(\d+)`)
	for _, l := range strings.Split(dump, "\n") {
		if !strings.Contains(l, sub) {
			continue
		}
		if m := re.FindStringSubmatch(l); m != nil {
			v, _ := strconv.ParseUint(m[1], 10, 64)
			n += v
			rules++
		}
	}
	return n, rules
}

// TestOverloadStormKeepsEstablishedFlowsAndLeaksNothing offers a storm of
// new flows on p3 (as fast as one goroutine can inject: far more than the
// switch sets up, so p3's bounded receive queue overflows and counts its
// drops) while 10,000 established-flow packets go p1→p2. It asserts
// counts only: every established packet is forwarded, the megaflows never
// exceed the flow limit, storm misses beyond the limit are executed
// without a megaflow and still counted by their rule (so the dynamic
// limit, not the datapath's hard per-worker bound, refused them: that one
// does not credit rules), misses shed by the workers' miss budget are
// counted as lost, the zone limit
// refuses connections in zone 7 only, the full MAC table evicts and
// counts. Then, after max-idle and revalidation, zone and MAC flushes,
// megaflows, ukeys, conntrack and MAC entries, goroutines, file
// descriptors and heap are back to their baseline and every counter
// equals what was injected.
func TestOverloadStormKeepsEstablishedFlowsAndLeaksNothing(t *testing.T) {
	r := newOverloadRig(t)
	ct := r.dp.Conntrack()

	// Warm up the established megaflows.
	var estSent uint64
	frames := make([][]byte, ovlEstablished)
	for i := range frames {
		frames[i] = establishedFrame(i)
		injectWindowed(t, r.p1, r.p2, frames[i], &estSent, 0, 512)
	}
	waitFor(t, "warm-up packets on p2", func() bool { return r.p2.Stats().TxPackets == estSent })
	r.appctl("revalidator/wait")
	if n := r.dp.FlowCount(); n != ovlEstablished {
		t.Fatalf("%d megaflows after warm-up, want %d", n, ovlEstablished)
	}
	baseUkeys := r.ukeys(t)
	baseGoroutines := settleTo(0, runtime.NumGoroutine)
	baseFDs := openFDs(t)
	baseHeap := heapInuse()
	if got := ct.ZoneCount(8); got != ovlEstablished {
		t.Fatalf("zone 8 holds %d connections after warm-up, want %d", got, ovlEstablished)
	}
	dpBase := r.dp.Stats()
	shedBase := r.dp.MissesShed()

	// The storm.
	var offered, maxFlows atomic.Int64
	var maxHeap atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		buf := make([]byte, 0, 128)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i := 0; i < 64; i++ {
				r.p3.Inject(stormFrame(buf[:cap(buf)], rng))
			}
			offered.Add(64)
		}
	}()
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if n := int64(r.dp.FlowCount()); n > maxFlows.Load() {
				maxFlows.Store(n)
			}
			if i%100 == 0 {
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > maxHeap.Load() {
					maxHeap.Store(ms.HeapInuse)
				}
			}
		}
	}()
	const perFlow = 100
	for k := 0; k < perFlow; k++ {
		for i := range frames {
			injectWindowed(t, r.p1, r.p2, frames[i], &estSent, 0, 512)
		}
	}
	// Keep the storm up until it has offered at least 10× the flow
	// limit and filled the datapath to the limit, then stop it and let
	// the queues drain.
	waitFor(t, "storm offered 10× the flow limit", func() bool { return offered.Load() >= 10*ovlFlowLimit })
	waitFor(t, "megaflows at the flow limit", func() bool { return maxFlows.Load() >= ovlFlowLimit })
	close(stop)
	wg.Wait()
	waitFor(t, "established packets on p2", func() bool { return r.p2.Stats().TxPackets == estSent })
	waitFor(t, "p3's queue drained", func() bool {
		s := r.p3.Stats()
		return s.RxPackets+s.RxDropped == uint64(offered.Load())
	})
	s3 := r.p3.Stats()
	// A received storm packet is forwarded (through its megaflow, or
	// executed without one over the flow limit) or, while the worker is
	// saturated and megaflow hits wait, shed by its miss budget.
	shed := r.dp.MissesShed() - shedBase
	stormFwd := s3.RxPackets - shed
	waitFor(t, "received storm packets on p4", func() bool { return r.p4.Stats().TxPackets == stormFwd })
	t.Logf("storm: offered %d, received %d (queue drops %d, shed %d), established %d; max megaflows %d; max heap %d MiB (base %d MiB)",
		offered.Load(), s3.RxPackets, s3.RxDropped, shed, estSent, maxFlows.Load(), maxHeap.Load()>>20, baseHeap>>20)

	// During the storm.
	if s1 := r.p1.Stats(); s1.RxPackets != estSent || s1.RxDropped != 0 {
		t.Errorf("p1 received %d (dropped %d), want %d, 0", s1.RxPackets, s1.RxDropped, estSent)
	}
	if s3.RxDropped == 0 {
		t.Errorf("the storm never overflowed p3's receive queue: it was not offered faster than the switch takes it")
	}
	if m := maxFlows.Load(); m > ovlFlowLimit {
		t.Errorf("megaflows reached %d, over the flow limit %d", m, ovlFlowLimit)
	}
	r.appctl("revalidator/wait") // rule counters are megaflow statistics pushed by revalidation
	show := r.appctl("upcall/show")
	mm := upcallShowRE.FindStringSubmatch(show)
	if mm == nil {
		t.Fatalf("upcall/show:\n%s", show)
	}
	if mm[3] != strconv.Itoa(ovlFlowLimit) {
		t.Errorf("upcall/show limit %s, want %d:\n%s", mm[3], ovlFlowLimit, show)
	}
	dump := r.ofctl("dump-flows", "br0")
	if n, rules := rulePackets(dump, "nw_dst=10.1.0."); n != estSent || rules != ovlEstablished {
		t.Errorf("established rules: %d rules with %d packets, want %d rules, %d packets", rules, n, ovlEstablished, estSent)
	}
	if n, _ := rulePackets(dump, "zone=7"); n != stormFwd {
		t.Errorf("storm rule counted %d packets, want every forwarded storm packet: %d", n, stormFwd)
	}
	dpNow := r.dp.Stats()
	misses := dpNow.Missed - dpBase.Missed
	if misses <= ovlFlowLimit {
		t.Errorf("%d storm misses: the storm did not go past the flow limit", misses)
	}
	if passes := dpNow.Hit + dpNow.Missed; passes != estSent+s3.RxPackets {
		t.Errorf("datapath saw %d packets (hit+missed), want %d injected and received", passes, estSent+s3.RxPackets)
	}
	if lost := dpNow.Lost - dpBase.Lost; lost != shed {
		t.Errorf("datapath lost %d packets, want the %d its miss budget shed", lost, shed)
	}
	if got := ct.ZoneCount(7); got != ovlZoneLimit || ct.ZoneRefused(7) == 0 {
		t.Errorf("zone 7: %d connections, %d refused; want the limit %d and refusals", got, ct.ZoneRefused(7), ovlZoneLimit)
	}
	if got := ct.ZoneCount(8); got != ovlEstablished || ct.ZoneRefused(8) != 0 {
		t.Errorf("zone 8: %d connections, %d refused; want %d, 0", got, ct.ZoneRefused(8), ovlEstablished)
	}
	fdb := r.appctl("fdb/stats-show", "br0")
	if !strings.Contains(fdb, fmt.Sprintf("Current/maximum MAC entries in the table: %d/%d", ovlMACTable, ovlMACTable)) ||
		strings.Contains(fdb, "evicted MAC entries     : 0\n") {
		t.Errorf("a full MAC table should evict and count:\n%s", fdb)
	}
	if m := maxHeap.Load(); m > baseHeap+64<<20 {
		t.Errorf("heap in use reached %d MiB during the storm (base %d MiB)", m>>20, baseHeap>>20)
	}

	// No leaked state: max-idle plus a revalidation round, then flushes.
	r.appctl("revalidator/wait") // the storm megaflows' last statistics
	trickle := make(chan struct{})
	var trickled sync.WaitGroup
	trickled.Add(1)
	go func() { // keep the established megaflows in use
		defer trickled.Done()
		for {
			select {
			case <-trickle:
				return
			case <-time.After(200 * time.Millisecond):
			}
			for i := range frames {
				if r.p1.Inject(frames[i]) {
					atomic.AddUint64(&estSent, 1)
				}
			}
		}
	}()
	waitFor(t, "storm megaflows expired", func() bool { return r.dp.FlowCount() == ovlEstablished })
	close(trickle)
	trickled.Wait()
	waitFor(t, "trickled packets on p2", func() bool { return r.p2.Stats().TxPackets == atomic.LoadUint64(&estSent) })
	r.appctl("revalidator/wait")
	r.appctl("revalidator/wait") // ukeys go after two rounds without their megaflow
	r.appctl("dpctl/flush-conntrack", "zone=7")
	r.appctl("fdb/flush", "br0")

	if n := r.dp.FlowCount(); n != ovlEstablished {
		t.Errorf("%d megaflows after max-idle, want the %d established", n, ovlEstablished)
	}
	if got := r.ukeys(t); got != baseUkeys {
		t.Errorf("%v ukeys, want the baseline %v", got, baseUkeys)
	}
	if got := ct.ZoneCount(7); got != 0 {
		t.Errorf("zone 7 holds %d connections after its flush", got)
	}
	if got := ct.ZoneCount(8); got != ovlEstablished {
		t.Errorf("zone 8 holds %d connections, want %d", got, ovlEstablished)
	}
	if fdb := r.appctl("fdb/stats-show", "br0"); !strings.Contains(fdb, fmt.Sprintf("table: 0/%d", ovlMACTable)) {
		t.Errorf("MAC table after fdb/flush:\n%s", fdb)
	}
	if g := settleTo(baseGoroutines+5, runtime.NumGoroutine); g > baseGoroutines+5 {
		t.Errorf("%d goroutines, baseline %d", g, baseGoroutines)
		buf := make([]byte, 1<<20)
		t.Logf("%s", buf[:runtime.Stack(buf, true)])
	}
	if n := settleTo(baseFDs+2, func() int { return openFDs(t) }); n > baseFDs+2 {
		t.Errorf("%d open file descriptors, baseline %d", n, baseFDs)
	}
	if h := heapInuse(); h > baseHeap+16<<20 {
		t.Errorf("heap in use %d MiB, baseline %d MiB", h>>20, baseHeap>>20)
	}
	dump = r.ofctl("dump-flows", "br0")
	if n, _ := rulePackets(dump, "nw_dst=10.1.0."); n != estSent {
		t.Errorf("established rules counted %d packets, want %d", n, estSent)
	}
	if n, _ := rulePackets(dump, "zone=7"); n != stormFwd {
		t.Errorf("storm rule counted %d packets, want %d", n, stormFwd)
	}
	if s := r.p2.Stats(); s.TxPackets != estSent {
		t.Errorf("p2 sent %d, want %d", s.TxPackets, estSent)
	}
	if s := r.p1.Stats(); s.RxPackets != estSent {
		t.Errorf("p1 received %d, want %d", s.RxPackets, estSent)
	}
}

// ukeys reads the bridge's tracked megaflows from /metrics.
func (r *overloadRig) ukeys(t *testing.T) float64 {
	v, ok := metricValue(scrape(t, r.metricsURL), "gvs_openflow_megaflows_tracked", "bridge=br0")
	if !ok {
		t.Fatal("no gvs_openflow_megaflows_tracked for br0 in /metrics")
	}
	return v
}

// OpenFlow 1.0 messages for the flooding controller.
func of10FlowModDrop(xid uint32) []byte {
	m := make([]byte, 72)
	m[0], m[1] = 1, 14 // OFPT_FLOW_MOD
	binary.BigEndian.PutUint16(m[2:], 72)
	binary.BigEndian.PutUint32(m[4:], xid)
	binary.BigEndian.PutUint32(m[8:], 1<<22-1) // OFPFW_ALL
	// cookie 0, command OFPFC_ADD, no timeouts
	binary.BigEndian.PutUint16(m[8+40+14:], 1)          // priority
	binary.BigEndian.PutUint32(m[8+40+16:], 0xffffffff) // buffer_id: none
	binary.BigEndian.PutUint16(m[8+40+20:], 0xffff)     // out_port: OFPP_NONE
	return m
}

func of10DescRequest(xid uint32) []byte {
	m := []byte{1, 16, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0} // OFPT_STATS_REQUEST, OFPST_DESC
	binary.BigEndian.PutUint32(m[4:], xid)
	return m
}

// TestBackpressureBoundsAFloodingControllerAndServesOthers connects to
// br0.mgmt and writes flow_mods (all the same rule, so the table does not
// grow) and description requests as fast as it can, never reading a
// reply. The switch's bounded send queue fills, its handler stops
// reading, and the client's writes block: backpressure, with the
// switch's heap bounded. Meanwhile ovs-ofctl on another connection is
// served; once the flooder goes, goroutines and descriptors return to
// their baseline.
func TestBackpressureBoundsAFloodingControllerAndServesOthers(t *testing.T) {
	nstest.RequireBinary(t, "ovs-vsctl", "openvswitch-switch")
	nstest.RequireBinary(t, "ovs-ofctl", "openvswitch-common")
	_, env := startDaemon(t)
	run(t, env, "ovs-vsctl", "--timeout=20", "init")
	run(t, env, "ovs-vsctl", "--timeout=20", "add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=dummy", "fail_mode=secure")
	var rundir string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "OVS_RUNDIR="); ok {
			rundir = v
		}
	}
	baseGoroutines := settleTo(0, runtime.NumGoroutine)
	baseFDs := openFDs(t)
	baseHeap := heapInuse()

	c, err := net.Dial("unix", filepath.Join(rundir, "br0.mgmt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte{1, 0, 0, 8, 0, 0, 0, 1}); err != nil { // OFPT_HELLO
		t.Fatal(err)
	}
	var chunk []byte
	for i := 0; i < 64; i++ {
		chunk = append(chunk, of10FlowModDrop(uint32(2*i))...)
		chunk = append(chunk, of10DescRequest(uint32(2*i+1))...)
	}
	const maxBytes = 256 << 20
	written, stalled := 0, false
	var maxHeap uint64
	for written < maxBytes {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := c.Write(chunk)
		written += n
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			stalled = true
			break
		}
		if err != nil {
			t.Fatalf("write after %d bytes: %v", written, err)
		}
		if written%(len(chunk)*256) == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			maxHeap = max(maxHeap, ms.HeapInuse)
		}
	}
	if !stalled {
		t.Fatalf("wrote %d MiB without the switch pushing back", written>>20)
	}
	t.Logf("the flooding controller stalled after %d KiB (%d flow_mods)", written>>10, written/len(chunk)*64)
	// Stalled for another second: nothing grows.
	time.Sleep(time.Second)
	if h := heapInuse(); h > baseHeap+64<<20 || maxHeap > baseHeap+64<<20 {
		t.Errorf("heap in use %d MiB (max %d MiB) with a flooding controller, baseline %d MiB", h>>20, maxHeap>>20, baseHeap>>20)
	}
	// Other connections are served.
	out := run(t, env, "ovs-ofctl", "--timeout=10", "dump-flows", "br0")
	if !strings.Contains(out, "priority=1 actions=drop") {
		t.Errorf("dump-flows on another connection:\n%s", out)
	}
	run(t, env, "ovs-ofctl", "--timeout=10", "add-flow", "br0", "priority=2,actions=drop")
	c.Close()
	if g := settleTo(baseGoroutines+2, runtime.NumGoroutine); g > baseGoroutines+2 {
		t.Errorf("%d goroutines after the flooder left, baseline %d", g, baseGoroutines)
	}
	if n := settleTo(baseFDs, func() int { return openFDs(t) }); n > baseFDs {
		t.Errorf("%d open file descriptors after the flooder left, baseline %d", n, baseFDs)
	}
}
