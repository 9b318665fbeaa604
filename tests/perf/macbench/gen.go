package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/gvs-project/gvs/tests/perf/internal/vnet"
)

// The generator is this binary re-executed with -mode gen. It opens a
// send-only packet socket on g0 in each guest namespace and rtnetlink
// sockets for the counters of both guests and both flood counters, then
// obeys one command per line on stdin and answers each with one JSON
// line (genReport) on stdout:
//
//	probe                      send a probe pair until it crosses both bridges
//	warm WINDOW STALL LIMIT    one pass over all N flows, gA's side then gB's
//	run SETTLE DURATION        random flows from both sides; counters over DURATION
//	quit
//
// One thread drives both guests alternately, as vethbench's generator
// drives one: on two cores the generator, the kernel's veth work and the
// switch already share the machine.

const genBatch = 32

// macX and macY are flow i's two addresses (locally administered
// unicast): gA sends x_i → y_i, gB sends y_i → x_i.
func macX(i int) [6]byte {
	return [6]byte{0x02, 0x00, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}
func macY(i int) [6]byte {
	return [6]byte{0x02, 0x01, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

// The probe's addresses are outside every flow's.
var probeX, probeY = [6]byte{0x02, 0xff, 0, 0, 0, 1}, [6]byte{0x02, 0xff, 0, 0, 0, 2}

// frameLen is a 64-byte frame without its FCS.
const frameLen = 60

// template is a 60-byte Ethernet/IPv4/UDP frame from 198.18.0.1 to
// 198.19.0.1 (the benchmarking range) with its IP checksum set; the
// generator rewrites only the addresses and the UDP source port (whose
// checksum is 0, so nothing else changes).
func template() []byte {
	f := make([]byte, frameLen)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:34]
	ip[0], ip[8], ip[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(ip[2:], frameLen-14)
	copy(ip[12:], []byte{198, 18, 0, 1})
	copy(ip[16:], []byte{198, 19, 0, 1})
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	binary.BigEndian.PutUint16(f[36:], 2000)
	binary.BigEndian.PutUint16(f[38:], frameLen-34)
	return f
}

// setFlow writes flow i's addresses into f: from gA (src x_i, dst y_i)
// or from gB (src y_i, dst x_i).
func setFlow(f []byte, i int, fromA bool) {
	x, y := macX(i), macY(i)
	if fromA {
		copy(f[0:6], y[:])
		copy(f[6:12], x[:])
	} else {
		copy(f[0:6], x[:])
		copy(f[6:12], y[:])
	}
	binary.BigEndian.PutUint16(f[34:], uint16(1024+i%60000))
}

// genReport is the generator's answer to one command.
type genReport struct {
	Cmd string
	Err string
	// probe
	ProbeMillis int64
	// warm: frames sent and counted lost (not delivered to the far guest
	// within the stall time) per side, and whether the pass finished.
	SentA, SentB uint64
	LostA, LostB uint64
	Complete     bool
	Seconds      float64
	// run: kernel counter deltas over the measured window.
	TxA, TxB         uint64 // sent by g0 in gA, gB
	RxA, RxB         uint64 // received by g0 in gA, gB
	FloodA, FloodB   uint64 // received by f0 in fA, fB
	TxDropA, TxDropB uint64 // refused by the veth (peer backlog full)
	Offered          uint64 // frames handed to sendmmsg
}

type generator struct {
	n              int
	txA, txB       *vnet.TxSocket
	gA, gB, fA, fB *vnet.LinkStats
	bufA, bufB     [][]byte
	rng            *rand.Rand
}

func openGenerator(n int, seed uint64) (*generator, error) {
	g := &generator{n: n, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	var err error
	for _, s := range []struct {
		ns, ifname string
		dst        **vnet.LinkStats
	}{{nsGA, guestIf, &g.gA}, {nsGB, guestIf, &g.gB}, {nsFA, floodIf, &g.fA}, {nsFB, floodIf, &g.fB}} {
		if *s.dst, err = vnet.OpenLinkStats(s.ns, s.ifname); err != nil {
			return nil, err
		}
	}
	if g.txA, err = vnet.OpenTx(nsGA, g.gA.Ifindex, genBatch); err != nil {
		return nil, err
	}
	if g.txB, err = vnet.OpenTx(nsGB, g.gB.Ifindex, genBatch); err != nil {
		return nil, err
	}
	t := template()
	for range genBatch {
		g.bufA = append(g.bufA, append([]byte(nil), t...))
		g.bufB = append(g.bufB, append([]byte(nil), t...))
	}
	return g, nil
}

func genMain(n int, seed uint64, in io.Reader, out io.Writer) error {
	runtime.LockOSThread()
	g, err := openGenerator(n, seed)
	enc := json.NewEncoder(out)
	if err != nil {
		enc.Encode(genReport{Cmd: "open", Err: err.Error()})
		return err
	}
	enc.Encode(genReport{Cmd: "open"})
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var r genReport
		switch {
		case f[0] == "probe":
			r = g.probe()
		case f[0] == "warm" && len(f) == 4:
			w, err1 := strconv.Atoi(f[1])
			stall, err2 := time.ParseDuration(f[2])
			limit, err3 := time.ParseDuration(f[3])
			if err := errors.Join(err1, err2, err3); err != nil || w < 1 {
				r = genReport{Cmd: "warm", Err: fmt.Sprintf("bad arguments %q", f[1:])}
				break
			}
			r = g.warm(w, stall, limit)
		case f[0] == "run" && len(f) == 3:
			settle, err1 := time.ParseDuration(f[1])
			dur, err2 := time.ParseDuration(f[2])
			if err := errors.Join(err1, err2); err != nil {
				r = genReport{Cmd: "run", Err: err.Error()}
				break
			}
			r = g.run(settle, dur)
		case f[0] == "quit":
			return nil
		default:
			r = genReport{Cmd: f[0], Err: "unknown command"}
		}
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return sc.Err()
}

// probe sends x→y from gA every 50 ms until the far guest and both
// flood counters have seen a frame (the switch polls all ports), then
// y→x from gB until gA sees it. The harness flushes the tables after.
func (g *generator) probe() genReport {
	start := time.Now()
	deadline := start.Add(60 * time.Second)
	f := g.bufA[0]
	for _, side := range []struct {
		tx    *vnet.TxSocket
		src   [6]byte
		dst   [6]byte
		watch []*vnet.LinkStats
	}{{g.txA, probeX, probeY, []*vnet.LinkStats{g.gB, g.fA, g.fB}}, {g.txB, probeY, probeX, []*vnet.LinkStats{g.gA}}} {
		base := make([]uint64, len(side.watch))
		for i, s := range side.watch {
			c, err := s.Read()
			if err != nil {
				return genReport{Cmd: "probe", Err: err.Error()}
			}
			base[i] = c.RxPackets
		}
		copy(f[0:6], side.dst[:])
		copy(f[6:12], side.src[:])
		for seen := false; !seen; {
			if time.Now().After(deadline) {
				return genReport{Cmd: "probe", Err: "no probe frame crossed the switch within 60s"}
			}
			if _, err := side.tx.Send([][]byte{f}, true); err != nil {
				return genReport{Cmd: "probe", Err: err.Error()}
			}
			time.Sleep(50 * time.Millisecond)
			seen = true
			for i, s := range side.watch {
				c, err := s.Read()
				if err != nil {
					return genReport{Cmd: "probe", Err: err.Error()}
				}
				seen = seen && c.RxPackets > base[i]
			}
		}
	}
	return genReport{Cmd: "probe", ProbeMillis: time.Since(start).Milliseconds()}
}

// warm sends every flow once from gA, then once from gB, keeping at most
// window frames in flight (sent but not yet counted by the far guest,
// which gets every frame exactly once whether it was forwarded or
// flooded), so that no receive queue overflows. A frame not delivered
// within stall counts as lost; the pass gives up after limit.
func (g *generator) warm(window int, stall, limit time.Duration) genReport {
	start := time.Now()
	deadline := start.Add(limit)
	r := genReport{Cmd: "warm", Complete: true}
	var err error
	var done bool
	r.SentA, r.LostA, done, err = g.warmSide(g.txA, g.gB, g.bufA, true, window, stall, deadline)
	if err == nil && done {
		r.SentB, r.LostB, done, err = g.warmSide(g.txB, g.gA, g.bufB, false, window, stall, deadline)
	}
	r.Complete = done
	r.Seconds = time.Since(start).Seconds()
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

func (g *generator) warmSide(tx *vnet.TxSocket, far *vnet.LinkStats, buf [][]byte, fromA bool, window int, stall time.Duration, deadline time.Time) (sent, lost uint64, done bool, err error) {
	c, err := far.Read()
	if err != nil {
		return 0, 0, false, err
	}
	base := c.RxPackets
	var lastDelivered uint64
	lastProgress := time.Now()
	for i := 0; ; {
		if c, err = far.Read(); err != nil {
			return sent, lost, false, err
		}
		delivered := c.RxPackets - base
		now := time.Now()
		if delivered != lastDelivered {
			lastDelivered, lastProgress = delivered, now
		}
		inflight := int64(sent) - int64(lost) - int64(delivered)
		if inflight < 0 { // frames counted lost arrived after all
			lost -= uint64(-inflight)
			inflight = 0
		}
		if inflight > 0 && now.Sub(lastProgress) > stall {
			lost += uint64(inflight)
			inflight, lastProgress = 0, now
		}
		if i == g.n && inflight == 0 {
			return sent, lost, true, nil
		}
		if now.After(deadline) {
			return sent, lost, false, nil
		}
		room := int64(window) - inflight
		if room <= 0 || i == g.n {
			time.Sleep(20 * time.Microsecond)
			continue
		}
		k := int(min(room, int64(len(buf)), int64(g.n-i)))
		for j := range k {
			setFlow(buf[j], i+j, fromA)
		}
		if _, err := tx.Send(buf[:k], true); err != nil {
			return sent, lost, false, err
		}
		sent += uint64(k)
		i += k
	}
}

// counters reads gA, gB, fA, fB in that order.
func (g *generator) counters() ([4]vnet.LinkCounters, error) {
	var c [4]vnet.LinkCounters
	var err error
	for i, s := range []*vnet.LinkStats{g.gA, g.gB, g.fA, g.fB} {
		if c[i], err = s.Read(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// run sends random flows from both guests as fast as the sockets take
// them, alternating batches, and reports the counters' deltas over dur
// after settle.
func (g *generator) run(settle, dur time.Duration) genReport {
	r := genReport{Cmd: "run"}
	start := time.Now()
	measureAt, end := start.Add(settle), start.Add(settle+dur)
	var c0 [4]vnet.LinkCounters
	var t0 time.Time
	measuring := false
	var offered uint64
	for it := 0; ; it++ {
		if it%16 == 0 {
			now := time.Now()
			if !measuring && now.After(measureAt) {
				var err error
				if c0, err = g.counters(); err != nil {
					r.Err = err.Error()
					return r
				}
				t0, measuring, offered = time.Now(), true, 0
			} else if measuring && now.After(end) {
				break
			}
		}
		for _, side := range []struct {
			tx    *vnet.TxSocket
			buf   [][]byte
			fromA bool
		}{{g.txA, g.bufA, true}, {g.txB, g.bufB, false}} {
			for _, f := range side.buf {
				setFlow(f, g.rng.IntN(g.n), side.fromA)
			}
			if _, err := side.tx.Send(side.buf, false); err != nil {
				r.Err = err.Error()
				return r
			}
			offered += uint64(len(side.buf))
		}
	}
	c1, err := g.counters()
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Seconds = time.Since(t0).Seconds()
	r.Offered = offered
	r.TxA, r.TxB = c1[0].TxPackets-c0[0].TxPackets, c1[1].TxPackets-c0[1].TxPackets
	r.RxA, r.RxB = c1[0].RxPackets-c0[0].RxPackets, c1[1].RxPackets-c0[1].RxPackets
	r.FloodA, r.FloodB = c1[2].RxPackets-c0[2].RxPackets, c1[3].RxPackets-c0[3].RxPackets
	r.TxDropA, r.TxDropB = c1[0].TxDropped-c0[0].TxDropped, c1[1].TxDropped-c0[1].TxDropped
	return r
}

// genProcess is the harness's handle on a running generator.
type genProcess struct {
	in   io.WriteCloser
	dec  *json.Decoder
	wait func() error
}

func (p *genProcess) do(cmd string, timeout time.Duration) (genReport, error) {
	if _, err := fmt.Fprintln(p.in, cmd); err != nil {
		return genReport{}, fmt.Errorf("generator %s: %w", cmd, err)
	}
	return p.next(cmd, timeout)
}

func (p *genProcess) next(cmd string, timeout time.Duration) (genReport, error) {
	type res struct {
		r   genReport
		err error
	}
	ch := make(chan res, 1)
	go func() {
		var r genReport
		err := p.dec.Decode(&r)
		ch <- res{r, err}
	}()
	select {
	case x := <-ch:
		if x.err != nil {
			return x.r, fmt.Errorf("generator %s: %w", cmd, x.err)
		}
		if x.r.Err != "" {
			return x.r, fmt.Errorf("generator %s: %s", cmd, x.r.Err)
		}
		return x.r, nil
	case <-time.After(timeout):
		return genReport{}, fmt.Errorf("generator %s: no answer within %v", cmd, timeout)
	}
}

func newDecoder(r io.Reader) *json.Decoder { return json.NewDecoder(r) }

func (p *genProcess) close() {
	fmt.Fprintln(p.in, "quit")
	p.in.Close()
	p.wait()
}
