// Command soak runs gvs-vswitchd (in-process, the rig of
// tests/perf/internal/ovlrig) under steady mixed load for -duration and
// shows whether memory and goroutines stay flat:
//
//   - established traffic: the 100 established flows offered on p1 at
//     -est-rate packets per second;
//   - new flows: random 5-tuples and MACs offered on p3 at -new-rate per
//     second (each its own megaflow, through conntrack zone 7 and NORMAL
//     with a MAC table of 1,000 entries, so it keeps evicting);
//   - flow churn: every -churn-every an OpenFlow rule is added and
//     deleted with ovs-ofctl (every change makes a revalidation round);
//   - flushes: conntrack zone 7 every -flush-every, the MAC table every
//     five of those.
//
// With -hostile (the default) the hostile clients of hostile.go run
// beside that load: a client pipelining selects it never reads the
// replies of, a monitor client that never reads while a 1 MB value
// changes twice a second, and an OpenFlow peer on br0.mgmt that never
// answers; the samples then show gvs's OVSDB backlog, the slow clients it
// dropped and the probes on br0.mgmt, and the forwarding rate.
//
// Megaflows expire after other_config:max-idle = 1 s. Every -interval it
// prints the heap in use (after a GC), the resident set, goroutines, open
// descriptors, megaflows and conntrack entries. The verdict compares the
// last sample with the first one after -warmup: stable when the heap and
// the resident set are within -tolerance (or 8 MiB) and the goroutines
// within 5. Not a test (it runs for minutes): go run ./tests/perf/soak
// -duration 10m
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/tests/perf/internal/ovlrig"
)

type options struct {
	duration, interval, warmup time.Duration
	churnEvery, flushEvery     time.Duration
	estRate, newRate           float64
	tolerance                  float64
	hostile                    bool
	stall                      time.Duration
	cpuprofile                 string
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long to run")
	flag.DurationVar(&o.interval, "interval", 30*time.Second, "time between samples")
	flag.DurationVar(&o.warmup, "warmup", time.Minute, "samples before this are not compared")
	flag.DurationVar(&o.churnEvery, "churn-every", 200*time.Millisecond, "time between OpenFlow rule add+delete")
	flag.DurationVar(&o.flushEvery, "flush-every", time.Second, "time between conntrack zone 7 flushes")
	flag.Float64Var(&o.estRate, "est-rate", 20000, "established packets offered per second")
	flag.Float64Var(&o.newRate, "new-rate", 5000, "new flows offered per second")
	flag.Float64Var(&o.tolerance, "tolerance", 0.20, "allowed growth of heap and RSS from the first sample after warm-up")
	flag.BoolVar(&o.hostile, "hostile", true, "run the hostile OVSDB and OpenFlow clients beside the load")
	flag.DurationVar(&o.stall, "stall", 0, "GVS_OVSDB_STALL_TIMEOUT for the daemon (0: its default, 60 s)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soak:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if o.stall > 0 {
		os.Setenv("GVS_OVSDB_STALL_TIMEOUT", o.stall.String())
	}
	ok, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	if !ok {
		pprof.StopCPUProfile()
		os.Exit(2)
	}
}

type sample struct {
	at                 time.Duration
	heap, rss          uint64
	goroutines, fds    int
	megaflows, conns   int
	estSent, estFwd    uint64
	newSent, newRecv   uint64
	churns, flushes    int64
	shed, limitRefused uint64
	fwdRate            float64
	backlog, dropped   int64
}

func run(o options) (bool, error) {
	r, err := ovlrig.Start(ovlrig.Options{Established: 100, MaxIdle: time.Second, MACTable: 1000})
	if err != nil {
		return false, err
	}
	defer r.Close()
	frames := make([][]byte, 100)
	for i := range frames {
		frames[i] = ovlrig.EstablishedFrame(i)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var estSent, newSent atomic.Uint64
	var churns, flushes atomic.Int64
	var errMu sync.Mutex
	var firstErr error
	fail := func(err error) {
		errMu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		errMu.Unlock()
	}
	pace := func(rate float64, send func(n uint64)) {
		defer wg.Done()
		start := time.Now()
		var sent uint64
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			target := uint64(rate * time.Since(start).Seconds())
			for ; sent < target; sent++ {
				send(sent)
			}
		}
	}
	every := func(d time.Duration, f func(i int64)) {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for i := int64(0); ; i++ {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			f(i)
		}
	}
	wg.Add(4)
	go pace(o.estRate, func(n uint64) {
		r.P1.Inject(frames[n%uint64(len(frames))])
		estSent.Add(1)
	})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	buf := make([]byte, 0, 128)
	go pace(o.newRate, func(uint64) {
		r.P3.Inject(ovlrig.StormFrame(buf[:cap(buf)], rng))
		newSent.Add(1)
	})
	go every(o.churnEvery, func(i int64) {
		rule := fmt.Sprintf("priority=200,udp,in_port=1,nw_dst=10.200.%d.%d", i>>8&255, i&255)
		if _, err := r.Cmd("ovs-ofctl", "add-flow", "br0", rule+",actions=drop"); err != nil {
			fail(err)
			return
		}
		if _, err := r.Cmd("ovs-ofctl", "--strict", "del-flows", "br0", rule); err != nil {
			fail(err)
			return
		}
		churns.Add(1)
	})
	go every(o.flushEvery, func(i int64) {
		if _, err := r.Appctl("dpctl/flush-conntrack", "zone=7"); err != nil {
			fail(err)
			return
		}
		if i%5 == 4 {
			if _, err := r.Appctl("fdb/flush", "br0"); err != nil {
				fail(err)
				return
			}
		}
		flushes.Add(1)
	})

	var hs *hostileStats
	if o.hostile {
		hs = startHostile(r.Dir, stop, &wg, fail)
	}

	fmt.Printf("%8s %10s %10s %6s %5s %9s %7s %10s %10s %9s %9s %7s %9s %7s %7s\n",
		"time", "heap MiB", "RSS MiB", "gorout", "fds", "megaflows", "ct", "est sent", "est fwd", "fwd/s", "new recv", "churns",
		"backlog", "dropped", "ofprobe")
	var samples []sample
	start := time.Now()
	var prevFwd uint64
	prevAt := time.Now()
	take := func() sample {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		now := time.Now()
		s := sample{at: time.Since(start).Round(time.Second), heap: ms.HeapInuse, rss: rss(), goroutines: runtime.NumGoroutine(),
			fds: fds(), megaflows: r.DP.FlowCount(), conns: r.DP.Conntrack().Count(),
			estSent: estSent.Load(), estFwd: r.P2.Stats().TxPackets, newSent: newSent.Load(), newRecv: r.P3.Stats().RxPackets,
			churns: churns.Load(), flushes: flushes.Load(), shed: r.DP.MissesShed()}
		if d := now.Sub(prevAt).Seconds(); d > 0 && s.estFwd >= prevFwd && prevFwd > 0 {
			s.fwdRate = float64(s.estFwd-prevFwd) / d
		}
		prevFwd, prevAt = s.estFwd, now
		if out, err := r.Appctl("memory/show"); err == nil {
			s.backlog, s.dropped = memField(out, "ovsdb-backlog"), memField(out, "ovsdb-slow-clients-dropped")
		}
		var probes int64
		if hs != nil {
			probes = hs.ofEchoes.Load()
		}
		fmt.Printf("%8v %10.1f %10.1f %6d %5d %9d %7d %10d %10d %9.0f %9d %7d %9d %7d %7d\n", s.at, mib(s.heap), mib(s.rss), s.goroutines, s.fds,
			s.megaflows, s.conns, s.estSent, s.estFwd, s.fwdRate, s.newRecv, s.churns, s.backlog, s.dropped, probes)
		return s
	}
	samples = append(samples, take())
	deadline := time.After(o.duration)
	tick := time.NewTicker(o.interval)
	running := true
	for running {
		select {
		case <-tick.C:
			samples = append(samples, take())
		case <-deadline:
			running = false
		}
	}
	tick.Stop()
	close(stop)
	wg.Wait()
	if firstErr != nil {
		return false, firstErr
	}
	last := take()
	var first *sample
	for i := range samples {
		if samples[i].at >= o.warmup {
			first = &samples[i]
			break
		}
	}
	if first == nil || first.at == last.at {
		return false, fmt.Errorf("no sample after the %v warm-up to compare with: run longer than -warmup + -interval", o.warmup)
	}
	within := func(a, b uint64) bool {
		return float64(b) <= float64(a)*(1+o.tolerance) || b <= a+8<<20
	}
	ok := within(first.heap, last.heap) && within(first.rss, last.rss) && last.goroutines <= first.goroutines+5
	verdict := "STABLE"
	if !ok {
		verdict = "GROWING"
	}
	fmt.Printf("verdict: %s: heap %.1f -> %.1f MiB, RSS %.1f -> %.1f MiB, goroutines %d -> %d (from %v to %v; tolerance %.0f%% or 8 MiB)\n",
		verdict, mib(first.heap), mib(last.heap), mib(first.rss), mib(last.rss), first.goroutines, last.goroutines,
		first.at, last.at, 100*o.tolerance)
	fmt.Printf("load: %d established packets offered (%d forwarded), %d new flows offered (%d received, %d shed), %d rule add+delete, %d zone flushes\n",
		last.estSent, last.estFwd, last.newSent, last.newRecv, last.shed, last.churns, last.flushes)
	if hs != nil {
		fmt.Printf("hostile: %d pipelining rounds (%d selects written, replies never read), %d 1 MB updates to a monitor that never reads (%d slow clients dropped: gvs counted %d), %d probes on idle br0.mgmt connections (%d closed)\n",
			hs.pipeRounds.Load(), hs.selectsWritten.Load(), hs.bigWrites.Load(), hs.monitorsDropped.Load(), last.dropped, hs.ofEchoes.Load(), hs.ofClosed.Load())
	}
	return ok, nil
}

// memField reads a NAME:VALUE field of memory/show.
func memField(out, name string) int64 {
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, name+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// rss reads VmRSS from /proc/self/status.
func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func fds() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}
