package dpctl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gvs-project/gvs/datapath/dpif"
	"github.com/gvs-project/gvs/datapath/dpnetdev"
	"github.com/gvs-project/gvs/ofproto/upcall"
	"github.com/gvs-project/gvs/unixctl"
)

// pmdCommands are Open vSwitch's dpif-netdev/pmd-stats-show and
// upcall/show over gvs's poll-mode workers.
func (d *Commands) pmdCommands() []unixctl.Command {
	return []unixctl.Command{
		{Name: "dpif-netdev/pmd-stats-show", Usage: "[-pmd core] [dp]", MaxArgs: 3, Run: d.cmdPmdStatsShow},
		{Name: "dpif-netdev/pmd-rxq-show", Usage: "[-pmd core] [-secs secs] [dp]", MaxArgs: 5, Run: d.cmdPmdRxqShow},
		{Name: "dpif-netdev/pmd-stats-clear", Usage: "[-pmd core] [dp]", MaxArgs: 3, Run: d.cmdPmdStatsClear},
		{Name: "dpif-netdev/pmd-rxq-rebalance", Usage: "[dp]", MaxArgs: 1, Run: d.cmdPmdRxqRebalance},
		{Name: "upcall/show", Run: d.cmdUpcallShow},
	}
}

// cmdPmdStatsShow prints each thread's counters in Open vSwitch 3.1's
// layout: the PMD threads by core, then the main thread (which polls
// the ports PMD threads do not). Caches gvs does not have (partial
// hardware offload, optimized miniflow extract, the simple-match and
// signature-match caches) show 0 hits; the output-batch average and the
// cycle counts, which gvs does not measure, are left out.
func (d *Commands) cmdPmdStatsShow(_ context.Context, args []string) (string, error) {
	core, name, err := parsePmdArgs(args)
	if err != nil {
		return "", err
	}
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, t := range dp.Threads() {
		if core >= 0 && (t.Main || t.Core != core) {
			continue
		}
		writeThreadHeader(&b, t)
		writePmdStats(&b, t.Stats)
	}
	return b.String(), nil
}

// cmdPmdStatsClear zeroes the counters pmd-stats-show prints.
func (d *Commands) cmdPmdStatsClear(_ context.Context, args []string) (string, error) {
	core, name, err := parsePmdArgs(args)
	if err != nil {
		return "", err
	}
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", err
	}
	dp.ClearThreadStats(core)
	return "", nil
}

// cmdPmdRxqRebalance assigns the rx queues again.
func (d *Commands) cmdPmdRxqRebalance(_ context.Context, args []string) (string, error) {
	name := ""
	if len(args) > 0 {
		name = args[0]
	}
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", errors.New("please specify an existing datapath")
	}
	dp.Rebalance()
	return "pmd rxq rebalance requested.\n", nil
}

// parsePmdArgs reads "[-pmd core] [dp]".
func parsePmdArgs(args []string) (core int, name string, err error) {
	core = -1
	for i := 0; i < len(args); i++ {
		if args[i] == "-pmd" {
			if i+1 >= len(args) {
				return 0, "", errors.New("-pmd requires a core number")
			}
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 0 {
				return 0, "", fmt.Errorf("invalid pmd core %q", args[i+1])
			}
			core = n
			i++
			continue
		}
		name = args[i]
	}
	return core, name, nil
}

// writeThreadHeader is Open vSwitch's format_pmd_thread.
func writeThreadHeader(b *strings.Builder, t dpnetdev.Thread) {
	if t.Main {
		b.WriteString("main thread:\n")
		return
	}
	fmt.Fprintf(b, "pmd thread numa_id %d core_id %d:\n", t.NUMA, t.Core)
}

// writePmdStats writes one thread's counters. Packets received are the
// datapath passes (every pass is an EMC hit, a megaflow hit or a miss)
// less the recirculations.
func writePmdStats(b *strings.Builder, s dpif.Stats) {
	passes := s.EMCHit + s.MegaflowHit + s.Missed
	recv := uint64(0)
	if passes > s.Recirc {
		recv = passes - s.Recirc
	}
	ratio := func(a, b uint64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	fmt.Fprintf(b, "  packets received: %d\n", recv)
	fmt.Fprintf(b, "  packet recirculations: %d\n", s.Recirc)
	fmt.Fprintf(b, "  avg. datapath passes per packet: %.02f\n", ratio(recv+s.Recirc, recv))
	b.WriteString("  phwol hits: 0\n  mfex opt hits: 0\n  simple match hits: 0\n")
	fmt.Fprintf(b, "  emc hits: %d\n", s.EMCHit)
	b.WriteString("  smc hits: 0\n")
	fmt.Fprintf(b, "  megaflow hits: %d\n", s.MegaflowHit)
	fmt.Fprintf(b, "  avg. subtable lookups per megaflow hit: %.02f\n", ratio(s.Lookups, s.MegaflowHit))
	fmt.Fprintf(b, "  miss with success upcall: %d\n", s.UpcallOK)
	fmt.Fprintf(b, "  miss with failed upcall: %d\n", s.UpcallFail)
}

// cmdUpcallShow prints, per datapath, Open vSwitch's upcall/show: the
// megaflows (current, running average and maximum at revalidation
// rounds, and the dynamic limit: ofproto/upcall/flowlimit.go), the
// duration of the last revalidation round, and that flows are keyed by
// UFID. The per-revalidator key counts are left out (gvs revalidates per
// bridge, not with a pool of threads).
func (d *Commands) cmdUpcallShow(context.Context, []string) (string, error) {
	var b strings.Builder
	for _, dp := range d.datapaths() {
		fmt.Fprintf(&b, "%s:\n", DPName(dp))
		st := upcall.FlowLimitStatus{Limit: dp.Config().FlowLimit}
		if d.sw != nil {
			if fl := d.sw.View().SharedFlowLimit(strings.TrimPrefix(dp.Name(), "ovs-")); fl != nil {
				st = fl.Status()
			}
		}
		fmt.Fprintf(&b, "  flows         : (current %d) (avg %d) (max %d) (limit %d)\n", dp.FlowCount(), st.Avg, st.Max, st.Limit)
		fmt.Fprintf(&b, "  dump duration : %dms\n", st.DumpDuration.Milliseconds())
		b.WriteString("  ufid enabled : true\n\n")
	}
	return b.String(), nil
}

// pmdUsageMaxSecs is the longest pmd usage window Open vSwitch keeps.
const pmdUsageMaxSecs = 60

// pmdUsageInterval is the length of Open vSwitch's usage intervals.
const pmdUsageInterval = 5

// cmdPmdRxqShow lists which PMD thread polls which port's receive
// queues, in Open vSwitch 3.1's pmd-rxq-show layout (the window asked
// for is rounded up to whole 5-second intervals). gvs does not count
// cycles per queue, so every usage reads "NOT AVAIL", as Open vSwitch
// prints before it has measured.
func (d *Commands) cmdPmdRxqShow(_ context.Context, args []string) (string, error) {
	core, secs, name := -1, pmdUsageMaxSecs, ""
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "-pmd" && i+1 < len(args):
			n, err := strconv.Atoi(args[i+1])
			if err != nil || n < 0 {
				return "", fmt.Errorf("invalid pmd core %q", args[i+1])
			}
			core = n
			i++
		case args[i] == "-secs" && i+1 < len(args):
			// As Open vSwitch: anything but 1..60 means the whole window.
			if n, err := strconv.Atoi(args[i+1]); err == nil && n > 0 && n <= pmdUsageMaxSecs {
				secs = n
			}
			i++
		default:
			name = args[i]
		}
	}
	secs = (secs + pmdUsageInterval - 1) / pmdUsageInterval * pmdUsageInterval
	dp, err := d.findDatapath(name)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Displaying last %d seconds pmd usage %%\n", secs)
	for _, t := range dp.Threads() {
		if t.Main || core >= 0 && t.Core != core {
			continue
		}
		fmt.Fprintf(&b, "pmd thread numa_id %d core_id %d:\n  isolated : %t\n", t.NUMA, t.Core, t.Isolated)
		qs := t.RxQueues
		slices.SortFunc(qs, func(a, b dpnetdev.RxQueue) int {
			if c := strings.Compare(a.Port, b.Port); c != 0 {
				return c
			}
			return a.Queue - b.Queue
		})
		for _, q := range qs {
			fmt.Fprintf(&b, "  port: %-16s  queue-id: %2d (enabled)   pmd usage: NOT AVAIL\n", q.Port, q.Queue)
		}
		if len(qs) > 0 {
			b.WriteString("  overhead: NOT AVAIL\n")
		}
	}
	return b.String(), nil
}
