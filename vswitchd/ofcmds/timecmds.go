package ofcmds

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gvs-project/gvs/unixctl"
)

// maxRealWarp bounds how long one time/warp waits: ovs-appctl gives up
// after OVS_CTL_TIMEOUT (30 s in Open vSwitch's test suite).
const maxRealWarp = 25 * time.Second

// timeCommands are Open vSwitch's virtual-time commands (timeval.c,
// registered with --enable-dummy) and revalidator/purge, which its test
// suite uses around nearly every timing-sensitive check.
//
// gvs's layers read the wall clock (there is no clock to stop or move,
// except the bonds' and LACP's, which a warp beyond the longest real wait
// moves on by the rest), so time/warp advances time the only way it can:
// it waits the warped span in real time, then revalidates, so that timeouts, aging and
// statistics have moved on by at least that much when it replies
// "warped". time/stop freezes only CFM's clock (which the warp's steps
// then move on).
func (d *Commands) timeCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "time/stop", Run: func(context.Context, []string) (string, error) { d.sw.StopClock(); return "", nil }},
		{Name: "time/warp", Usage: "[large_msecs] msecs", MinArgs: 1, MaxArgs: 2, Run: d.cmdTimeWarp},
		{Name: "revalidator/purge", Run: d.cmdRevalidatorPurge},
	}
}

// parseWarp reads time/warp's arguments as Open vSwitch does (atoll:
// what is not a number is 0): with two, the total span and the step;
// with one, the step alone. It returns the span to advance and the step.
func parseWarp(args []string) (span, step time.Duration, err error) {
	atoll := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	var total, st int64
	if len(args) > 1 {
		total, st = atoll(args[0]), atoll(args[1])
	} else {
		st = atoll(args[0])
	}
	if st <= 0 || total < 0 {
		return 0, 0, errors.New("invalid MSECS")
	}
	return time.Duration(max(total, st)) * time.Millisecond, time.Duration(st) * time.Millisecond, nil
}

func (d *Commands) cmdTimeWarp(ctx context.Context, args []string) (string, error) {
	span, step, err := parseWarp(args)
	if err != nil {
		return "", err
	}
	if !d.warping.CompareAndSwap(false, true) {
		return "", errors.New("A previous warp in progress")
	}
	defer d.warping.Store(false)
	waited := min(span, maxRealWarp)
	// The real wait goes step by step: CFM's stopped clock moves on by
	// each step as it ends (backer.WarpStep). Steps end at fixed times
	// from the start, so that timer lateness does not add up.
	start := time.Now()
	for done := time.Duration(0); done < waited; {
		n := min(step, waited-done)
		done += n
		if w := time.Until(start.Add(done)); w > 0 {
			t := time.NewTimer(w)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return "", ctx.Err()
			case <-d.ctx.Done():
				t.Stop()
				return "", d.ctx.Err()
			}
		}
		d.sw.WarpStep(n)
	}
	// The bonds' clock takes what the real wait could not.
	d.sw.Warp(span-waited, step)
	for _, br := range d.sw.View().OFBridges() {
		br.Upcalls().Revalidate()
	}
	// What CFM's steps changed is in the database before the reply.
	d.sw.WaitStatus(ctx, time.Second)
	return "warped", nil
}

// cmdRevalidatorPurge is revalidator/purge: every datapath flow goes, so
// that the next packets are upcalls again; what the flows counted is
// credited to their rules first, as Open vSwitch's purge pushes the
// statistics of the flows it deletes.
func (d *Commands) cmdRevalidatorPurge(context.Context, []string) (string, error) {
	for _, br := range d.sw.View().OFBridges() {
		br.Upcalls().Revalidate()
	}
	for _, dp := range d.datapaths() {
		dp.FlowFlush()
	}
	return "", nil
}
