package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The plot: one SVG with three panels side by side, N on a log axis:
// delivered Mpps (log axis), flood copies per frame sent, and per frame
// delivered. Hand-written SVG, as tests/perf/metricsplot draws, so the
// harness needs nothing beyond the standard library.

type point struct{ x, y float64 }

type panel struct {
	title string
	logY  bool
	unit  string
	get   func(result) (float64, bool)
}

var seriesColor = map[string]string{"gvs": "#1f77b4", "ovs": "#d62728", "ovs-raised": "#ff7f0e"}

func colorOf(name string, i int) string {
	if c, ok := seriesColor[name]; ok {
		return c
	}
	other := []string{"#2ca02c", "#9467bd", "#8c564b", "#17becf"}
	return other[i%len(other)]
}

func plotSVG(rs []result, caption string) string {
	panels := []panel{
		{title: "delivered Mpps (log)", logY: true, get: func(r result) (float64, bool) { return r.DeliveredMpps, r.Err == "" && r.DeliveredMpps > 0 }},
		{title: "flood % of frames sent", unit: "%", get: func(r result) (float64, bool) { return r.FloodPctSent, r.Err == "" }},
		{title: "flood % of frames delivered", unit: "%", get: func(r result) (float64, bool) { return r.FloodPctDelivered, r.Err == "" }},
	}
	var names []string
	var xs []float64
	tableMax := map[string]int{}
	for _, r := range rs {
		if !slices.Contains(names, r.Forwarder) {
			names = append(names, r.Forwarder)
		}
		if r.FDBMax > 0 {
			tableMax[r.Forwarder] = r.FDBMax
		}
		xs = append(xs, float64(r.N))
	}
	if len(xs) == 0 {
		xs = []float64{1, 10}
	}
	xmin, xmax := math.Log10(slices.Min(xs)), math.Log10(slices.Max(xs))
	if xmax-xmin < 1 {
		xmax = xmin + 1
	}
	const pw, ph, left, right, top, bottom = 320, 260, 56, 14, 48, 44
	w, h := pw*len(panels), ph+40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="8" y="16" font-size="13">%s</text>`+"\n", xmlEscape(caption))
	for pi, p := range panels {
		ox := float64(pi * pw)
		series := map[string][]point{}
		var ys []float64
		for _, r := range rs {
			if v, ok := p.get(r); ok {
				series[r.Forwarder] = append(series[r.Forwarder], point{float64(r.N), v})
				ys = append(ys, v)
			}
		}
		var ymin, ymax float64
		if p.logY {
			ymin, ymax = -3, 1
			if len(ys) > 0 {
				ymin = math.Floor(math.Log10(slices.Min(ys)))
				ymax = math.Ceil(math.Log10(slices.Max(ys)))
				if ymax <= ymin {
					ymax = ymin + 1
				}
			}
		} else {
			ymax = 1
			if len(ys) > 0 {
				ymax = niceCeil(slices.Max(ys))
			}
		}
		x := func(v float64) float64 {
			return ox + left + (math.Log10(v)-xmin)/(xmax-xmin)*(pw-left-right)
		}
		y := func(v float64) float64 {
			if p.logY {
				v = math.Log10(max(v, math.Pow(10, ymin)))
			}
			return top + (1-(v-ymin)/(ymax-ymin))*(ph-top-bottom)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="36" font-size="12">%s</text>`+"\n", ox+left, p.title)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="black"/>`+"\n", ox+left, ph-bottom, ox+pw-right, ph-bottom)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="black"/>`+"\n", ox+left, top, ox+left, ph-bottom)
		// y ticks
		var ticks []float64
		if p.logY {
			for e := ymin; e <= ymax; e++ {
				ticks = append(ticks, math.Pow(10, e))
			}
		} else {
			for i := 0; i <= 4; i++ {
				ticks = append(ticks, ymax*float64(i)/4)
			}
		}
		for _, t := range ticks {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", ox+left, y(t), ox+pw-right, y(t))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%s%s</text>`+"\n", ox+left-4, y(t)+4, fmtTick(t), p.unit)
		}
		// x ticks: the decades in range
		for e := math.Ceil(xmin); e <= xmax; e++ {
			v := math.Pow(10, e)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(v), ph-bottom+14, fmtN(v))
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">N (bidirectional flows)</text>`+"\n", ox+left+(pw-left-right)/2, ph-bottom+30)
		for si, name := range names {
			pts := series[name]
			slices.SortFunc(pts, func(a, c point) int { return cmp.Compare(a.x, c.x) })
			var poly strings.Builder
			for _, pt := range pts {
				fmt.Fprintf(&poly, "%.1f,%.1f ", x(pt.x), y(pt.y))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(pt.x), y(pt.y), colorOf(name, si))
			}
			if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", colorOf(name, si), strings.TrimSpace(poly.String()))
			}
		}
	}
	// legend along the bottom
	for si, name := range names {
		lx := 8 + si*240
		label := name
		if m := tableMax[name]; m > 0 {
			label = fmt.Sprintf("%s (MAC table max %d per bridge)", name, m)
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="14" height="4" fill="%s"/>`+"\n", lx, h-16, colorOf(name, si))
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", lx+18, h-11, xmlEscape(label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= v {
			return m * e
		}
	}
	return 10 * e
}

func fmtTick(v float64) string {
	if v == 0 {
		return "0"
	}
	if v >= 1 && v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
}

func fmtN(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
