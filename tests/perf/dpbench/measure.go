package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/gvs-project/gvs/tests/perf/internal/vnet"
)

// result is one forwarder's measurement in one round.
type result struct {
	Mpps     float64 // frames per second at the sink (TCP: both hosts)
	Gbps     float64 // TCP only: iperf3's received rate
	NsPerPkt float64 // the forwarder's CPU time per forwarded frame
	Frames   uint64
}

func (r result) String() string {
	s := fmt.Sprintf("%7.3f Mpps  %6.0f ns CPU/frame", r.Mpps, r.NsPerPkt)
	if r.Gbps > 0 {
		s += fmt.Sprintf("  %6.2f Gbit/s", r.Gbps)
	}
	return s
}

// clockTick is USER_HZ, the unit of /proc/PID/stat's times (100 on
// every Linux architecture gvs builds for).
const clockTick = 10 * time.Millisecond

func cpuOf(pids []int) (time.Duration, error) {
	var t uint64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
		}
		v, err := cpuTicks(string(b))
		if err != nil {
			return 0, fmt.Errorf("cpu time of %d: %w", pid, err)
		}
		t += v
	}
	return time.Duration(t) * clockTick, nil
}

// warmFor is the traffic before the window: -warm plus a second per
// 200,000 flows, so that every flow (MAC, connection) is set up first.
func warmFor(o options, n int) time.Duration {
	return o.warm + time.Duration(n)*time.Second/200000
}

// window reads the counters and CPU times at the start and the end of
// the measured window.
type window struct {
	t0        time.Time
	c0        []vnet.LinkCounters
	cpu0      time.Duration
	links     []*vnet.LinkStats
	pids      []int
	elapsed   time.Duration
	frames    uint64
	cpu       time.Duration
	profStart *exec.Cmd
}

func openWindow(links []*vnet.LinkStats, pids []int, prof *exec.Cmd) (*window, error) {
	w := &window{links: links, pids: pids, profStart: prof}
	if prof != nil {
		if err := prof.Start(); err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
	}
	var err error
	if w.cpu0, err = cpuOf(pids); err != nil {
		return nil, err
	}
	for _, l := range links {
		c, err := l.Read()
		if err != nil {
			return nil, err
		}
		w.c0 = append(w.c0, c)
	}
	w.t0 = time.Now()
	return w, nil
}

func (w *window) close() error {
	w.elapsed = time.Since(w.t0)
	for i, l := range w.links {
		c, err := l.Read()
		if err != nil {
			return err
		}
		w.frames += c.RxPackets - w.c0[i].RxPackets
	}
	cpu, err := cpuOf(w.pids)
	if err != nil {
		return err
	}
	w.cpu = cpu - w.cpu0
	return nil
}

func (w *window) result() result {
	r := result{Frames: w.frames, Mpps: float64(w.frames) / w.elapsed.Seconds() / 1e6}
	if w.frames > 0 {
		r.NsPerPkt = float64(w.cpu.Nanoseconds()) / float64(w.frames)
	}
	return r
}

func measureUDP(o options, j job, pids []int, prof *exec.Cmd) (result, error) {
	sink, err := vnet.OpenLinkStats(nsSink, ifSink)
	if err != nil {
		return result{}, err
	}
	defer sink.Close()
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	if j.p.learnSink {
		if err := sendFromSink(learnFrame()); err != nil {
			return result{}, err
		}
	}
	warm := warmFor(o, j.n)
	gen := exec.Command("ip", "netns", "exec", nsGen, "taskset", "-c", strconv.Itoa(o.genCPU), self, "-mode", "gen",
		"-pipeline", j.p.name, "-n", strconv.Itoa(j.n), "-for", (warm + o.duration + time.Second).String())
	gen.Stderr = os.Stderr
	if err := gen.Start(); err != nil {
		return result{}, err
	}
	time.Sleep(warm)
	w, err := openWindow([]*vnet.LinkStats{sink}, pids, prof)
	if err != nil {
		stopCmd(gen)
		return result{}, err
	}
	time.Sleep(o.duration)
	err = w.close()
	if gerr := gen.Wait(); gerr != nil && err == nil {
		err = fmt.Errorf("generator: %w", gerr)
	}
	if err != nil {
		return result{}, err
	}
	return w.result(), nil
}

// sendFromSink sends frame f from s0 a few times.
func sendFromSink(f []byte) error {
	ls, err := vnet.OpenLinkStats(nsSink, ifSink)
	if err != nil {
		return err
	}
	ls.Close()
	tx, err := vnet.OpenTx(nsSink, ls.Ifindex, 1)
	if err != nil {
		return err
	}
	defer tx.Close()
	for range 3 {
		if _, err := tx.Send([][]byte{f}, true); err != nil {
			return fmt.Errorf("sending from the sink: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// measureTCP runs one iperf3 stream from the generator's host to the
// sink's, both on the generator's core, and counts frames both ways.
func measureTCP(o options, pids []int, prof *exec.Cmd) (result, error) {
	links := make([]*vnet.LinkStats, 0, 2)
	for _, e := range [][2]string{{nsSink, ifSink}, {nsGen, ifGen}} {
		l, err := vnet.OpenLinkStats(e[0], e[1])
		if err != nil {
			return result{}, err
		}
		defer l.Close()
		links = append(links, l)
	}
	cpu := strconv.Itoa(o.genCPU)
	srv := exec.Command("ip", "netns", "exec", nsSink, "taskset", "-c", cpu, "iperf3", "-s", "-1", "-B", ipSink)
	if err := srv.Start(); err != nil {
		return result{}, err
	}
	defer stopCmd(srv)
	time.Sleep(300 * time.Millisecond)
	warm := max(1, int(o.warm.Seconds()+0.5))
	secs := max(1, int(o.duration.Seconds()+0.5))
	cli := exec.Command("ip", "netns", "exec", nsGen, "taskset", "-c", cpu, "iperf3", "-c", ipSink, "-J",
		"-O", strconv.Itoa(warm), "-t", strconv.Itoa(secs))
	out, err := cli.StdoutPipe()
	if err != nil {
		return result{}, err
	}
	if err := cli.Start(); err != nil {
		return result{}, err
	}
	time.Sleep(time.Duration(warm) * time.Second)
	w, err := openWindow(links, pids, prof)
	if err != nil {
		stopCmd(cli)
		return result{}, err
	}
	time.Sleep(time.Duration(secs) * time.Second)
	err = w.close()
	var rep iperfReport
	derr := json.NewDecoder(out).Decode(&rep)
	if werr := cli.Wait(); werr != nil && err == nil {
		err = fmt.Errorf("iperf3 client: %w (%s)", werr, rep.Error)
	}
	if err == nil && derr != nil {
		err = fmt.Errorf("iperf3 -J output: %w", derr)
	}
	if err != nil {
		return result{}, err
	}
	r := w.result()
	r.Gbps = rep.End.SumReceived.BitsPerSecond / 1e9
	return r, nil
}

// iperfReport is the part of `iperf3 -J` that dpbench reads.
type iperfReport struct {
	End struct {
		SumReceived struct {
			BitsPerSecond float64 `json:"bits_per_second"`
		} `json:"sum_received"`
	} `json:"end"`
	Error string `json:"error"`
}
