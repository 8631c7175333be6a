package storm

import (
	"bytes"
	"fmt"
	"image/color"
	"os"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Report is a run's outcome.
type Report struct {
	Options Options
	Arms    []*Arm
}

// Arm is one arm's outcome.
type Arm struct {
	Name     string
	Governed bool
	// Upstream429 and UpstreamOK count the upstream's answers.
	Upstream429, UpstreamOK int
	// Calls the agents meant to make; Succeeded and Failed (gave up, or
	// unfinished at MaxDuration).
	Calls, Succeeded, Failed int
	// Elapsed is the time to finish: until the last agent was done.
	Elapsed time.Duration
	// Goodput is successful calls per second over Elapsed.
	Goodput float64
	// Latency is per class, from an agent's first try to its success.
	Latency map[class]Percentiles

	answers []answer
}

// Percentiles of a latency distribution (nearest rank).
type Percentiles struct {
	P50, P99 time.Duration
	N        int
}

func percentiles(ls []time.Duration) Percentiles {
	if len(ls) == 0 {
		return Percentiles{}
	}
	s := slices.Clone(ls)
	slices.Sort(s)
	at := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Percentiles{P50: at(0.50), P99: at(0.99), N: len(s)}
}

// Markdown is the results table.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("| arm | upstream 429s | upstream 200s | goodput (calls/s) | interactive p50 / p99 | background p50 / p99 | time to finish | calls failed |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	ms := func(p Percentiles) string {
		if p.N == 0 {
			return "–"
		}
		return fmt.Sprintf("%d ms / %d ms", p.P50.Milliseconds(), p.P99.Milliseconds())
	}
	for _, a := range r.Arms {
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f | %s | %s | %.1f s | %d of %d |\n", a.Name, a.Upstream429, a.UpstreamOK, a.Goodput,
			ms(a.Latency[interactive]), ms(a.Latency[background]), a.Elapsed.Seconds(), a.Failed, a.Calls)
	}
	return b.String()
}

// Setup describes the run's parameters in a sentence.
func (r *Report) Setup() string {
	o := r.Options
	return fmt.Sprintf("Upstream quota %d requests/s, burst %d, 429 with Retry-After in whole seconds; governor quota %.1f/s, burst %d; "+
		"%d interactive agents × %d calls "+
		"(%v think time) and %d background agents × %d calls (back to back), each call one `egress.fetch` through the dispatcher "+
		"(3 attempts honouring retry_after_ms) inside an agent loop of exponential backoff (200 ms × 2^n, +0–50%% jitter, at least "+
		"retry_after_ms, up to 8 tries); each arm bounded at %v.",
		o.Rate, o.Burst, float64(o.governorPer100s())/100, o.Burst-o.Headroom, o.Interactive, o.InteractiveCalls, o.Think, o.Background, o.BackgroundCalls, o.MaxDuration)
}

// binWidth is the plot's time resolution.
const binWidth = 500 * time.Millisecond

// Plot writes a PNG: for each arm, the upstream's 200s and 429s per second
// over time, on one scale.
func (r *Report) Plot(path string) error {
	var plots [][]*plot.Plot
	ymax := 1.0
	for _, a := range r.Arms {
		ok, tooMany := a.series()
		for _, s := range [][]plotter.XY{ok, tooMany} {
			for _, p := range s {
				ymax = max(ymax, p.Y)
			}
		}
		p := plot.New()
		p.Title.Text = "(" + a.Name + ")"
		p.X.Label.Text = "seconds since the agents started"
		p.Y.Label.Text = "upstream answers / s"
		p.Add(plotter.NewGrid())
		for _, l := range []struct {
			name string
			xy   plotter.XYs
			c    color.RGBA
		}{{"200 OK", ok, color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}}, {"429 Too Many Requests", tooMany, color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}}} {
			line, err := plotter.NewLine(l.xy)
			if err != nil {
				return err
			}
			line.Color = l.c
			line.Width = vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(l.name, line)
		}
		p.Legend.Top = true
		plots = append(plots, []*plot.Plot{p})
	}
	var xmax float64
	for _, a := range r.Arms {
		xmax = max(xmax, a.Elapsed.Seconds())
	}
	for _, row := range plots {
		row[0].Y.Min, row[0].Y.Max = 0, ymax*1.15
		row[0].X.Min, row[0].X.Max = 0, xmax
	}
	img := vgimg.New(vg.Points(720), vg.Points(260*float64(len(plots))))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(18)}
	canvases := plot.Align(plots, tiles, dc)
	for i, row := range plots {
		row[0].Draw(canvases[i][0])
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// series bins the upstream's answers into per-second rates.
func (a *Arm) series() (ok, tooMany plotter.XYs) {
	n := int(a.Elapsed/binWidth) + 1
	okc, tmc := make([]float64, n), make([]float64, n)
	for _, ans := range a.answers {
		i := min(int(ans.at/binWidth), n-1)
		if ans.status == 429 {
			tmc[i]++
		} else {
			okc[i]++
		}
	}
	per := float64(time.Second) / float64(binWidth)
	for i := range n {
		x := (float64(i) + 0.5) * binWidth.Seconds()
		ok = append(ok, plotter.XY{X: x, Y: okc[i] * per})
		tooMany = append(tooMany, plotter.XY{X: x, Y: tmc[i] * per})
	}
	return ok, tooMany
}

// Doc markers: UpdateDoc replaces what is between them.
const (
	beginMarker = "<!-- storm:begin -->"
	endMarker   = "<!-- storm:end -->"
)

// UpdateDoc replaces the results between the storm markers of the
// Markdown file at path with this run's setup, table and plot (plotRef, a
// path relative to the file).
func (r *Report) UpdateDoc(path, plotRef, command string) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(doc)
	i, j := strings.Index(s, beginMarker), strings.Index(s, endMarker)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s … %s section to replace", path, beginMarker, endMarker)
	}
	var b strings.Builder
	b.WriteString(beginMarker + "\n")
	fmt.Fprintf(&b, "Measured with `%s` on %s.\n\n", command, time.Now().UTC().Format("2006-01-02"))
	b.WriteString(r.Setup() + "\n\n")
	b.WriteString(r.Markdown())
	if plotRef != "" {
		fmt.Fprintf(&b, "\n![Upstream answers per second over time, per arm](%s)\n", plotRef)
	}
	s = s[:i] + b.String() + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
