package console

import (
	"fmt"
	"strings"
	"time"
)

// The chart is drawn on the server as inline SVG (no script needed, and
// the Content-Security-Policy allows it: presentation attributes are not
// inline style). Each plot is chartPoints wide at chartDX apart.
const (
	chartDX     = 5
	chartWidth  = chartPoints * chartDX
	chartHeight = 100
)

// renderChart writes the chart view: the last minute summed in a table,
// then calls/s and p50/p99 latency over the last ten minutes.
func renderChart(o *out, d pageData) {
	o.m("<section id=\"view-chart\" data-view=\"chart\">\n<h2>Calls and latency</h2>\n")
	m := d.Minute
	o.m("<table class=\"chart-summary\">\n<thead><tr><th>span</th><th>calls</th><th>calls/s</th><th>failed</th>" +
		"<th>p50</th><th>p99</th></tr></thead>\n<tbody>")
	o.row("", "", "last minute", fmt.Sprint(m.Calls), fmt.Sprintf("%.2f", m.CallsPerSec), fmt.Sprint(m.Failed),
		latText(m.P50), latText(m.P99))
	o.m("</tbody></table>\n")
	if len(d.Chart) == 0 {
		o.m("</section>\n")
		return
	}
	maxRate, maxLat := 0.0, time.Duration(0)
	for _, p := range d.Chart {
		maxRate, maxLat = max(maxRate, p.CallsPerSec), max(maxLat, p.P99)
	}
	plot(o, "calls per second, last 10 minutes", fmt.Sprintf("%.2f/s", maxRate), []line{
		{"rate", func(p chartPoint) (float64, bool) { return frac(p.CallsPerSec, maxRate), true }},
	}, d.Chart)
	plot(o, "p50 and p99 latency, last 10 minutes", latText(maxLat), []line{
		{"p99", func(p chartPoint) (float64, bool) { return frac(float64(p.P99), float64(maxLat)), p.Calls > 0 }},
		{"p50", func(p chartPoint) (float64, bool) { return frac(float64(p.P50), float64(maxLat)), p.Calls > 0 }},
	}, d.Chart)
	o.m("<p class=\"note\">Points of " + chartStep.String() + "; latencies read from log-spaced bins, " +
		"within a factor of 1.19 of the true value. <span class=\"key-p50\">p50</span> " +
		"<span class=\"key-p99\">p99</span></p>\n</section>\n")
}

// line is one polyline of a plot: a point's height as a fraction of the
// plot's, and whether the point has one (a gap otherwise).
type line struct {
	class string
	y     func(chartPoint) (float64, bool)
}

func plot(o *out, label, top string, lines []line, pts []chartPoint) {
	o.m(fmt.Sprintf(`<svg class="chart" viewBox="-2 -14 %d %d" width="%d" height="%d" role="img" aria-label="`,
		chartWidth+64, chartHeight+30, chartWidth+64, chartHeight+30) + esc(label) + "\">\n")
	o.m(fmt.Sprintf(`<line class="axis" x1="0" y1="%d" x2="%d" y2="%d"/>`, chartHeight, chartWidth, chartHeight))
	o.m(`<text class="label" x="0" y="-3">` + esc(top) + `</text>`)
	o.m(fmt.Sprintf(`<text class="label" x="0" y="%d">-10 min</text><text class="label" x="%d" y="%d">now</text>`,
		chartHeight+13, chartWidth-22, chartHeight+13))
	for _, l := range lines {
		var seg []string
		var lastY float64
		flush := func(x int) {
			if len(seg) == 1 { // a lone point: a short dash, as a polyline of one point draws nothing
				seg = append(seg, fmt.Sprintf("%d,%.1f", x+chartDX-2, lastY))
			}
			if len(seg) > 0 {
				o.m(`<polyline class="` + l.class + `" points="` + strings.Join(seg, " ") + `"/>`)
			}
			seg = seg[:0]
		}
		for i, p := range pts {
			f, ok := l.y(p)
			if !ok {
				flush((i - 1) * chartDX)
				continue
			}
			lastY = float64(chartHeight) * (1 - f)
			seg = append(seg, fmt.Sprintf("%d,%.1f", i*chartDX, lastY))
		}
		flush((len(pts) - 1) * chartDX)
	}
	o.m("\n</svg>\n")
}

func frac(v, of float64) float64 {
	if of <= 0 {
		return 0
	}
	return v / of
}

func latText(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
