package main

import (
	"fmt"
	"slices"
	"strings"
)

// summary is one job's results, per forwarder in round order.
type summary struct {
	job
	rounds map[string][]result
}

// ratios are a/b per round (rounds where either is missing or zero are
// left out).
func ratios(a, b []result) []float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if a[i].Mpps > 0 && b[i].Mpps > 0 {
			r = append(r, a[i].Mpps/b[i].Mpps)
		}
	}
	return r
}

// cpuRatios are a's CPU per frame over b's, per round: how close b
// comes to a's cost per frame (steadier than rates on a shared machine,
// where a forwarder does not always get its whole core).
func cpuRatios(a, b []result) []float64 {
	var r []float64
	for i := range min(len(a), len(b)) {
		if a[i].NsPerPkt > 0 && b[i].NsPerPkt > 0 {
			r = append(r, a[i].NsPerPkt/b[i].NsPerPkt)
		}
	}
	return r
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// spread prints values as "min-max" with two decimals ("1.23" when
// they agree to two decimals, "-" when there are none).
func spread(v []float64, prec int) string {
	if len(v) == 0 {
		return "-"
	}
	lo, hi := slices.Min(v), slices.Max(v)
	a, b := fmt.Sprintf("%.*f", prec, lo), fmt.Sprintf("%.*f", prec, hi)
	if a == b {
		return a
	}
	return a + "-" + b
}

func field(rs []result, f func(result) float64) []float64 {
	var v []float64
	for _, r := range rs {
		v = append(v, f(r))
	}
	return v
}

// table renders the summaries: Mpps (range over rounds) per forwarder,
// the per-round ratios gvs/ovs and gvs/raw (range, median), and CPU
// time per forwarded frame.
func table(all []summary) string {
	var b strings.Builder
	base := false
	fmt.Fprintf(&b, "| pipeline | N | ovs Mpps | gvs Mpps | raw Mpps | gvs/ovs per round (median) | gvs/raw per round (median) | ovs ns CPU/frame | gvs ns CPU/frame | raw/gvs CPU per frame (median) |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	mpps := func(r result) float64 { return r.Mpps }
	ns := func(r result) float64 { return r.NsPerPkt }
	for _, s := range all {
		if len(s.rounds["gvs-base"]) > 0 {
			base = true
		}
	}
	if base {
		b.Reset()
		fmt.Fprintf(&b, "| pipeline | N | ovs Mpps | gvs Mpps | raw Mpps | gvs/ovs per round (median) | gvs/raw per round (median) | ovs ns CPU/frame | gvs ns CPU/frame | raw/gvs CPU per frame (median) | gvs-base Mpps | gvs-base/ovs (median) | gvs-base/raw (median) | gvs-base ns CPU/frame |\n")
		fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	}
	for _, s := range all {
		ro := func(a, c string) string {
			r := ratios(s.rounds[a], s.rounds[c])
			if len(r) == 0 {
				return "-"
			}
			return fmt.Sprintf("%s (%.2f)", spread(r, 2), median(r))
		}
		name := s.p.name
		if s.p.tcp {
			name += fmt.Sprintf(" (gvs %s Gbit/s, ovs %s)", spread(field(s.rounds["gvs"], func(r result) float64 { return r.Gbps }), 2),
				spread(field(s.rounds["ovs"], func(r result) float64 { return r.Gbps }), 2))
		}
		cpu := cpuRatios(s.rounds["raw"], s.rounds["gvs"])
		cpuCol := "-"
		if len(cpu) > 0 {
			cpuCol = fmt.Sprintf("%s (%.2f)", spread(cpu, 2), median(cpu))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, s.n,
			spread(field(s.rounds["ovs"], mpps), 3), spread(field(s.rounds["gvs"], mpps), 3), spread(field(s.rounds["raw"], mpps), 3),
			ro("gvs", "ovs"), ro("gvs", "raw"),
			spread(field(s.rounds["ovs"], ns), 0), spread(field(s.rounds["gvs"], ns), 0), cpuCol)
		if base {
			row := b.String()
			b.Reset()
			b.WriteString(strings.TrimSuffix(row, "\n"))
			fmt.Fprintf(&b, " %s | %s | %s | %s |\n", spread(field(s.rounds["gvs-base"], mpps), 3), ro("gvs-base", "ovs"), ro("gvs-base", "raw"),
				spread(field(s.rounds["gvs-base"], ns), 0))
		}
	}
	b.WriteString(afxdpTable(all))
	return b.String()
}

// afxdpTable renders, when a run measured AF_XDP ports, gvs and Open
// vSwitch with afxdp ports (rates, the per-round ratio, CPU per frame)
// beside gvs with system (AF_PACKET) ports, and gvs's AF_PACKET CPU per
// frame over its AF_XDP one per round.
func afxdpTable(all []summary) string {
	var b strings.Builder
	mpps := func(r result) float64 { return r.Mpps }
	ns := func(r result) float64 { return r.NsPerPkt }
	for _, s := range all {
		if len(s.rounds["gvs-afxdp"]) == 0 && len(s.rounds["ovs-afxdp"]) == 0 {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\n| pipeline | N | ovs-afxdp Mpps | gvs-afxdp Mpps | gvs (AF_PACKET) Mpps | gvs-afxdp/ovs-afxdp per round (median) | ovs-afxdp ns CPU/frame | gvs-afxdp ns CPU/frame | gvs (AF_PACKET) ns CPU/frame | gvs AF_PACKET/AF_XDP CPU per frame (median) |\n")
			fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		}
		col := func(r []float64) string {
			if len(r) == 0 {
				return "-"
			}
			return fmt.Sprintf("%s (%.2f)", spread(r, 2), median(r))
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.p.name, s.n,
			spread(field(s.rounds["ovs-afxdp"], mpps), 3), spread(field(s.rounds["gvs-afxdp"], mpps), 3), spread(field(s.rounds["gvs"], mpps), 3),
			col(ratios(s.rounds["gvs-afxdp"], s.rounds["ovs-afxdp"])),
			spread(field(s.rounds["ovs-afxdp"], ns), 0), spread(field(s.rounds["gvs-afxdp"], ns), 0), spread(field(s.rounds["gvs"], ns), 0),
			col(cpuRatios(s.rounds["gvs"], s.rounds["gvs-afxdp"])))
	}
	return b.String()
}
