// Command storm measures how an upcall storm affects established
// megaflows in gvs-vswitchd (in-process, dummy datapath, the rig of
// tests/perf/internal/ovlrig):
//
//  1. setup rate: -setup-flows new flows (each its own megaflow) are
//     injected on p3, at most -window in flight, and timed until the last
//     leaves on p4;
//  2. capacity: the -established flows are injected on p1 for -duration,
//     at most -window in flight (as fast as the switch takes them), and
//     the packets leaving p2 counted;
//  3. before: the established flows are offered at a fixed rate
//     (-est-rate, default a quarter of that capacity) for -duration and
//     the packets leaving p2 counted;
//  4. during: the same while another goroutine offers new flows on p3 at
//     -factor times the measured setup rate.
//
// It prints the established rates before and during the storm and their
// ratio (the reliability goal is >= 0.90), what the storm offered and
// what the switch took, the misses its workers shed, and the megaflow
// count against the flow limit. A storm whose packet rate alone is near
// a worker's capacity shares the worker's poll rounds with the
// established port, so the closed-loop rate during the storm is printed
// too, for what it is. Not a test: timings depend on the machine.
// Usage: go run ./tests/perf/storm [-duration 5s] [-factor 10]
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gvs-project/gvs/tests/perf/internal/ovlrig"
)

func main() {
	var o ovlrig.Options
	duration := flag.Duration("duration", 5*time.Second, "length of the before and during measurements")
	factor := flag.Float64("factor", 10, "storm rate as a multiple of the measured setup rate")
	setupFlows := flag.Int("setup-flows", 5000, "new flows timed to measure the setup rate")
	window := flag.Uint64("window", 512, "established packets in flight when measuring capacity")
	estRate := flag.Float64("est-rate", 0, "established packets offered per second (0: a quarter of the measured capacity)")
	missShare := flag.Int("miss-share", -1, "the datapath's miss budget in permille of a saturated worker (-1: the default)")
	flag.IntVar(&o.Established, "established", 100, "established flows")
	flag.IntVar(&o.FlowLimit, "flow-limit", 0, "other_config:flow-limit (0: 200000)")
	flag.IntVar(&o.Workers, "workers", 0, "poll-mode workers (0: the daemon's default)")
	flag.Parse()
	o.MaxIdle = 10 * time.Second
	if err := run(o, *duration, *factor, *setupFlows, *window, *estRate, *missShare); err != nil {
		fmt.Fprintln(os.Stderr, "storm:", err)
		os.Exit(1)
	}
}

func run(o ovlrig.Options, d time.Duration, factor float64, setupFlows int, window uint64, estRate float64, missShare int) error {
	r, err := ovlrig.Start(o)
	if err != nil {
		return err
	}
	defer r.Close()
	if missShare >= 0 {
		r.DP.SetMissShare(missShare)
	}
	frames := make([][]byte, o.Established)
	for i := range frames {
		frames[i] = ovlrig.EstablishedFrame(i)
	}
	warm := func() error {
		w := ovlrig.NewWindow(r.P1, r.P2, window)
		for _, f := range frames {
			if err := w.Inject(f, 10*time.Second); err != nil {
				return err
			}
		}
		return waitDelivered(w)
	}
	if err := warm(); err != nil {
		return err
	}

	// 1. Setup rate.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	buf := make([]byte, 0, 128)
	sw := ovlrig.NewWindow(r.P3, r.P4, window)
	flowsBefore := r.DP.FlowCount()
	start := time.Now()
	for i := 0; i < setupFlows; i++ {
		if err := sw.Inject(ovlrig.StormFrame(buf[:cap(buf)], rng), 10*time.Second); err != nil {
			return err
		}
	}
	if err := waitDelivered(sw); err != nil {
		return err
	}
	setupRate := float64(setupFlows) / time.Since(start).Seconds()
	fmt.Printf("setup rate: %.0f new flows/s (%d flows, %d megaflows made)\n", setupRate, setupFlows, r.DP.FlowCount()-flowsBefore)
	r.DP.FlowFlush()
	for i := 0; i < 2; i++ {
		if _, err := r.Appctl("revalidator/wait"); err != nil {
			return err
		}
	}
	if err := warm(); err != nil {
		return err
	}

	// 2. Capacity, 3. the fixed rate alone.
	capacity, err := established(r, frames, window, d)
	if err != nil {
		return err
	}
	if estRate <= 0 {
		estRate = capacity / 4
	}
	before, beforeDrops, err := paced(r, frames, estRate, d)
	if err != nil {
		return err
	}
	fmt.Printf("established: capacity %.0f packets/s; offered %.0f/s alone: forwarded %.0f/s (%d receive-queue drops)\n",
		capacity, estRate, before, beforeDrops)

	// 3. Established rate during a storm.
	rate := factor * setupRate
	var offered, maxFlows atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	s3 := r.P3.Stats()
	wg.Add(2)
	go func() {
		defer wg.Done()
		buf := make([]byte, 0, 128)
		t0 := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			target := int64(rate * time.Since(t0).Seconds())
			for n := offered.Load(); n < target; n++ {
				r.P3.Inject(ovlrig.StormFrame(buf[:cap(buf)], rng))
				offered.Add(1)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if n := int64(r.DP.FlowCount()); n > maxFlows.Load() {
				maxFlows.Store(n)
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // the storm reaches its rate
	shed0 := r.DP.MissesShed()
	during, duringDrops, err := paced(r, frames, estRate, d)
	var closedLoop float64
	if err == nil {
		closedLoop, err = established(r, frames, window, d)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	storm := 2*d + 200*time.Millisecond
	e3 := r.P3.Stats()
	recv, drop := e3.RxPackets-s3.RxPackets, e3.RxDropped-s3.RxDropped
	fmt.Printf("storm: offered %d new flows (%.0f/s, %.1f× the setup rate), switch took %d (%.0f/s), receive-queue drops %d\n",
		offered.Load(), float64(offered.Load())/storm.Seconds(), float64(offered.Load())/storm.Seconds()/setupRate,
		recv, float64(recv)/storm.Seconds(), drop)
	show, _ := r.Appctl("upcall/show")
	fmt.Printf("megaflows: max %d during the storm; upcall/show: %s\n", maxFlows.Load(), strings.TrimSpace(strings.SplitN(show, "\n", 3)[1]))
	fmt.Printf("misses shed by the workers' miss budget: %d\n", r.DP.MissesShed()-shed0)
	fmt.Printf("established during the storm: offered %.0f/s: forwarded %.0f/s (%d receive-queue drops); closed loop %.0f/s (%.2f of capacity)\n",
		estRate, during, duringDrops, closedLoop, closedLoop/capacity)
	fmt.Printf("ratio during/before: %.3f (goal >= 0.90) [GOMAXPROCS %d, workers %d]\n", during/before, runtime.GOMAXPROCS(0), r.DP.Workers())
	return nil
}

// established injects the established flows round-robin for d, at most
// window in flight, and returns the packets per second leaving p2.
func established(r *ovlrig.Rig, frames [][]byte, window uint64, d time.Duration) (float64, error) {
	w := ovlrig.NewWindow(r.P1, r.P2, window)
	start := time.Now()
	for i := 0; time.Since(start) < d; i++ {
		if err := w.Inject(frames[i%len(frames)], 10*time.Second); err != nil {
			return 0, err
		}
	}
	el := time.Since(start)
	n := w.Delivered()
	if err := waitDelivered(w); err != nil {
		return 0, err
	}
	return float64(n) / el.Seconds(), nil
}

func waitDelivered(w *ovlrig.Window) error {
	deadline := time.Now().Add(30 * time.Second)
	for w.Delivered() < w.Sent {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d frames delivered after 30 s", w.Delivered(), w.Sent)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// pacedWindow bounds the established packets in flight in paced.
const pacedWindow = 512

// paced offers the established flows round-robin at rate packets per
// second for d, with at most pacedWindow in flight (frames the full
// receive queue refuses are dropped and counted), and returns the
// packets per second leaving p2 and the drops. When the switch falls
// behind, fewer than rate×d are offered and the forwarded rate shows it.
func paced(r *ovlrig.Rig, frames [][]byte, rate float64, d time.Duration) (float64, uint64, error) {
	tx0, drop0 := r.P2.Stats().TxPackets, r.P1.Stats().RxDropped
	start := time.Now()
	sent := 0
	for el := time.Duration(0); el < d; el = time.Since(start) {
		// Catch up with the rate, but never more than pacedWindow in
		// flight: a generator that lost the CPU for a while would
		// otherwise burst more than the receive queue holds at once.
		inFlight := func() int {
			return sent - int(r.P2.Stats().TxPackets-tx0) - int(r.P1.Stats().RxDropped-drop0)
		}
		for target := int(rate * el.Seconds()); sent < target && inFlight() < pacedWindow; sent++ {
			r.P1.Inject(frames[sent%len(frames)])
		}
		time.Sleep(50 * time.Microsecond)
	}
	drops := r.P1.Stats().RxDropped - drop0
	want := uint64(sent) - drops
	deadline := time.Now().Add(30 * time.Second)
	for r.P2.Stats().TxPackets-tx0 < want {
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%d of %d established packets forwarded after 30 s", r.P2.Stats().TxPackets-tx0, want)
		}
		time.Sleep(time.Millisecond)
	}
	return float64(r.P2.Stats().TxPackets-tx0) / d.Seconds(), drops, nil
}
