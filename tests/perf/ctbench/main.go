// Command ctbench measures the zone-keyed connection tracker the way Open
// vSwitch's `ovstest test-conntrack` does:
//
//	ctbench [-cpuprofile FILE] [-v] [-gc] [-noreuse] benchmark-zones N_CONNS N_ZONES ITERATIONS
//	ctbench [-cpuprofile FILE] benchmark N_THREADS N_PKTS BATCH_SIZE [CHANGE_CONNECTION]
//
// benchmark-zones fills N_ZONES zones with N_CONNS UDP connections each,
// then per iteration flushes zone 1, commits its N_CONNS connections again
// (one packet per call), looks them up again without commit and flushes
// an empty zone, and prints min/max/95th percentile/average in µs in the
// layout of test-conntrack. benchmark runs N_THREADS goroutines each
// sending N_PKTS packets, BATCH_SIZE per call, through ct(commit).
//
// benchmark-zones does what test-conntrack does, no more: every call gets
// the same timestamp, taken once before the run (test-conntrack passes
// one `now` to conntrack_execute), only the packet's connection handle is
// reset between calls (pkt_metadata_init_conn), and "Avg" is the same
// statistic as Open vSwitch's stopwatch: an exponentially weighted moving
// average with weight 0.01 that starts at the first sample (so mostly the
// first iteration). The arithmetic mean is printed after the table. The
// collector is not forced after the untimed initial insert (-gc does):
// the connections committed in the timed iterations would then fill the
// pages it freed all over the heap instead of contiguous ones; without it
// no collection runs during the timed iterations at either of issue 7's
// workloads (GODEBUG=gctrace=1 shows it).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gvs-project/gvs/datapath/conntrack"
	"github.com/gvs-project/gvs/datapath/odp"
	"github.com/gvs-project/gvs/datapath/packet"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ctbench [-cpuprofile FILE] [-v] [-gc] [-noreuse] benchmark-zones N_CONNS N_ZONES ITERATIONS\n       ctbench [-cpuprofile FILE] benchmark N_THREADS N_PKTS BATCH_SIZE [CHANGE_CONNECTION]")
	os.Exit(2)
}

func arg(s string) uint64 {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctbench: bad number %q: %v\n", s, err)
		os.Exit(2)
	}
	return v
}

// udpFrame builds an Ethernet/IPv4/UDP frame with valid checksums.
func udpFrame(sport, dport uint16) []byte {
	f := make([]byte, 14+20+8+4)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], 32)
	ip[8] = 64
	ip[9] = 17
	copy(ip[12:], []byte{10, 1, 1, 1})
	copy(ip[16:], []byte{10, 2, 2, 2})
	binary.BigEndian.PutUint16(ip[10:], packet.Checksum(ip[:20]))
	u := ip[20:]
	binary.BigEndian.PutUint16(u[0:], sport)
	binary.BigEndian.PutUint16(u[2:], dport)
	binary.BigEndian.PutUint16(u[4:], 12)
	sum := packet.PseudoHeaderIPv4(0x0a010101, 0x0a020202, 17, 12)
	c := packet.Fold(packet.ChecksumPartial(u, sum))
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(u[6:], c)
	return f
}

func ct(s string) *odp.CtParams {
	acts, err := odp.ParseActions(s)
	if err != nil {
		panic(err)
	}
	return acts[0].Ct
}

type stopwatch struct{ samples []float64 }

func (s *stopwatch) add(d time.Duration) { s.samples = append(s.samples, float64(d.Nanoseconds())/1e3) }

// stats returns the minimum, maximum, 95th percentile, Open vSwitch's
// long-term average (lib/stopwatch.c: EWMA, alpha 0.01, seeded with the
// first sample) and the arithmetic mean, in µs.
func (s *stopwatch) stats() (mn, mx, p95, ewma, mean float64) {
	if len(s.samples) == 0 {
		return
	}
	ewma = s.samples[0]
	for _, x := range s.samples[1:] {
		ewma = x*0.01 + 0.99*ewma
	}
	v := slices.Clone(s.samples)
	slices.Sort(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return v[0], v[len(v)-1], v[min(len(v)-1, len(v)*95/100)], ewma, sum / float64(len(v))
}

func benchmarkZones(nConns, nZones, iterations uint64, verbose, gcAfterInsert, noReuse bool) {
	if nConns == 0 || nConns >= 1<<32 || nZones == 0 || nZones >= 1<<16 || iterations == 0 {
		fmt.Fprintln(os.Stderr, "ctbench: need 1 <= n_conns < 2^32, 1 <= n_zones < 2^16, iterations > 0")
		os.Exit(2)
	}
	tr := conntrack.New(conntrack.Config{NoReuse: noReuse})
	start := time.Now()
	pkts := make([]*packet.Packet, nConns)
	for i := range pkts {
		sport, dport := uint16(i>>16), uint16(i)
		if sport == 0 {
			sport = 0xffff
		}
		if dport == 0 {
			dport = 0xffff
		}
		p := packet.New(64)
		p.SetData(udpFrame(sport, dport))
		pkts[i] = p
	}
	fmt.Printf("initial packet generation time: %d ms\n", time.Since(start).Milliseconds())
	var b packet.Batch
	now := tr.Now()
	// One reader, as a datapath worker: it quiesces between the phases
	// (outside the timings), as a worker does once per loop iteration.
	rd := tr.NewReader()
	defer rd.Close()
	exec := func(p *packet.Packet, a *odp.CtParams) {
		b.N = 0
		b.Add(p)
		rd.ExecuteAt(&b, a, now)
		p.Md.CtConn = 0
	}
	if noReuse {
		exec = func(p *packet.Packet, a *odp.CtParams) {
			b.N = 0
			b.Add(p)
			tr.ExecuteAt(&b, a, now)
			p.Md.CtConn = 0
		}
	}
	quiesce := func() {
		if !noReuse {
			rd.Quiesce()
		}
	}
	commits := make([]*odp.CtParams, nZones)
	for z := range commits {
		commits[z] = ct(fmt.Sprintf("ct(commit,zone=%d)", z))
	}
	start = time.Now()
	for z := range nZones {
		for _, p := range pkts {
			exec(p, commits[z])
		}
	}
	fmt.Printf("initial insert time: %d ms\n", time.Since(start).Milliseconds())
	if gcAfterInsert {
		runtime.GC()
	}
	commit1, lookup1 := ct("ct(commit,zone=1)"), ct("ct(zone=1)")
	var swCommit, swLookup, swFull, swEmpty stopwatch
	var faults []int64 // minor page faults of each commit phase
	quiesce()
	start = time.Now()
	// One monotonic clock read at each end, as time_usec() in
	// test-conntrack (time.Now reads the wall clock too).
	mono := func() time.Duration { return time.Since(start) }
	for range iterations {
		t0 := mono()
		tr.FlushZone(1)
		swFull.add(mono() - t0)
		quiesce()

		f0 := minorFaults()
		t0 = mono()
		for _, p := range pkts {
			exec(p, commit1)
		}
		swCommit.add(mono() - t0)
		faults = append(faults, minorFaults()-f0)
		quiesce()

		t0 = mono()
		for _, p := range pkts {
			exec(p, lookup1)
		}
		swLookup.add(mono() - t0)
		quiesce()

		t0 = mono()
		tr.FlushZone(0xffff)
		swEmpty.add(mono() - t0)
		quiesce()
	}
	fmt.Printf("flush run time: %d ms\n", time.Since(start).Milliseconds())
	c := [4]*stopwatch{&swCommit, &swLookup, &swFull, &swEmpty}
	var mn, mx, p95, avg, mean [4]float64
	for i, s := range c {
		mn[i], mx[i], p95[i], avg[i], mean[i] = s.stats()
	}
	if verbose {
		for i := range swCommit.samples {
			fmt.Printf("iteration %d: %.2f %.2f %.2f %.2f us, %d page faults in the commits\n", i, swCommit.samples[i], swLookup.samples[i], swFull.samples[i], swEmpty.samples[i], faults[i])
		}
		rs := tr.ReuseStats()
		fmt.Printf("reused connections: %d, flushed zones not reused (paged out): %d, pooled %d, limbo %d\n", rs.Reused, rs.ColdDropped, rs.Pooled, rs.Limbo)
	}
	fmt.Println("results:")
	fmt.Println("         | ct execute (commit) | ct execute (no commit) | flush full zone | flush empty zone |")
	fmt.Println("+--------+---------------------+------------------------+-----------------+------------------+")
	fmt.Printf("| Min    | %16d us | %19d us | %12d us | %13d us |\n", int64(mn[0]), int64(mn[1]), int64(mn[2]), int64(mn[3]))
	fmt.Printf("| Max    | %16d us | %19d us | %12d us | %13d us |\n", int64(mx[0]), int64(mx[1]), int64(mx[2]), int64(mx[3]))
	fmt.Printf("| 95%%ile | %16.2f us | %19.2f us | %12.2f us | %13.2f us |\n", p95[0], p95[1], p95[2], p95[3])
	fmt.Printf("| Avg    | %16.2f us | %19.2f us | %12.2f us | %13.2f us |\n", avg[0], avg[1], avg[2], avg[3])
	fmt.Printf("arithmetic mean: %.2f us, %.2f us, %.2f us, %.2f us\n", mean[0], mean[1], mean[2], mean[3])
}

func benchmark(nThreads, nPkts, batchSize uint64, change bool) {
	if nThreads == 0 {
		fmt.Fprintln(os.Stderr, "ctbench: n_threads must be at least one")
		os.Exit(2)
	}
	if batchSize == 0 || batchSize > packet.BatchSize {
		fmt.Fprintf(os.Stderr, "ctbench: batch_size must be between 1 and %d\n", packet.BatchSize)
		os.Exit(2)
	}
	tr := conntrack.New(conntrack.Config{})
	commit := ct("ct(commit)")
	var ready, done sync.WaitGroup
	startGate := make(chan struct{})
	ready.Add(int(nThreads))
	done.Add(int(nThreads))
	for tid := range nThreads {
		go func() {
			defer done.Done()
			var b packet.Batch
			pkts := make([]*packet.Packet, batchSize)
			for i := range pkts {
				dport := uint16(2)
				if change {
					dport = uint16(i + 2)
				}
				pkts[i] = packet.New(64)
				pkts[i].SetData(udpFrame(uint16(1+tid), dport))
			}
			ready.Done()
			<-startGate
			for i := uint64(0); i < nPkts; i += batchSize {
				b.N = 0
				for _, p := range pkts {
					p.Md = packet.Metadata{}
					b.Add(p)
				}
				tr.Execute(&b, commit)
			}
		}()
	}
	ready.Wait()
	start := time.Now()
	close(startGate)
	done.Wait()
	fmt.Printf("conntrack:  %5d ms\n", time.Since(start).Milliseconds())
}

func main() {
	prof := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	verbose := flag.Bool("v", false, "benchmark-zones: print every iteration's samples")
	gc := flag.Bool("gc", false, "benchmark-zones: run the collector after the initial insert")
	noReuse := flag.Bool("noreuse", false, "benchmark-zones: leave flushed connections to the collector (conntrack.Config.NoReuse), without a conntrack.Reader")
	flag.Usage = usage
	flag.Parse()
	args := flag.Args()
	if len(args) < 1 {
		usage()
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ctbench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "ctbench:", err)
			os.Exit(1)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	switch a := args[1:]; args[0] {
	case "benchmark-zones":
		if len(a) != 3 {
			usage()
		}
		benchmarkZones(arg(a[0]), arg(a[1]), arg(a[2]), *verbose, *gc, *noReuse)
	case "benchmark":
		if len(a) < 3 || len(a) > 4 {
			usage()
		}
		benchmark(arg(a[0]), arg(a[1]), arg(a[2]), len(a) == 4 && arg(a[3]) != 0)
	default:
		usage()
	}
}

// minorFaults returns the process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}
