package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// verdict is what a row may claim.
type verdict int

const (
	notMeasured verdict = iota // a side has no result in any run
	unreliable                 // most runs are below the b.N floor: the figures are start-up
	withinNoise                // the ratio's range over the runs includes 1x: no direction
	faster                     // ours is better in every run
	slower                     // ours is worse in every run
)

func (v verdict) String() string {
	switch v {
	case notMeasured:
		return "not measured"
	case unreliable:
		return "unreliable"
	case withinNoise:
		return "within noise"
	case faster:
		return "faster"
	case slower:
		return "slower"
	}
	return fmt.Sprintf("verdict(%d)", int(v))
}

// charted reports whether a row with this verdict has a bar on the chart.
func (v verdict) charted() bool { return v == withinNoise || v == faster || v == slower }

// row is one comparison with what its runs measured.
type row struct {
	comparison
	// OursNs and BaseNs are the medians, over the kept runs, of the comparison's metric (ns/op unless
	// Metric says otherwise).
	OursNs, BaseNs float64
	// Ratio is the median over the kept runs of run i's baseline over run i's ours; Lo and Hi are the
	// smallest and largest of those ratios.
	Ratio, Lo, Hi float64
	// Runs is how many runs measured both sides; Kept how many of those had both b.N at the floor
	// MinN or above. LowN is the smallest b.N below the floor, when there is one.
	Runs, Kept, MinN, LowN int
	// OursAllocs and BaseAllocs are allocations per unit of the metric (AllocsKnown), not per op:
	// a batch benchmark's op holds many units.
	OursAllocs, BaseAllocs float64
	AllocsKnown            bool
	Verdict                verdict
}

// Label names the comparison on the chart and in the tables.
func (r row) Label() string {
	return fmt.Sprintf("%s: %s vs %s", strings.TrimPrefix(r.Benchmark, "Benchmark"), r.Ours, r.Baseline)
}

// Speedup is how many times better ours is than the baseline: the median of the baseline's metric
// over ours, run by run (every metric is lower-is-better: time, bytes, lateness).
func (r row) Speedup() float64 { return r.Ratio }

// Measured reports whether the row has figures worth printing (they may still be unreliable).
func (r row) Measured() bool { return r.Verdict != notMeasured }

// buildRows pairs every comparison with its runs in rs.
func buildRows(cs []comparison, rs *results) []row {
	rows := make([]row, 0, len(cs))
	for _, c := range cs {
		rows = append(rows, buildRow(c, rs))
	}
	return rows
}

// buildRow pairs run i of ours with run i of the baseline, drops the pairs where either side's b.N is
// below the floor, and summarises the ratios of the rest.
func buildRow(c comparison, rs *results) row {
	r := row{comparison: c, MinN: shapeOf(c).MinN}
	ours := rs.runsOf(c.Module, c.Benchmark+"/"+c.Ours)
	base := rs.runsOf(c.Module, c.Benchmark+"/"+c.Baseline)
	var runs []int
	for run := range ours {
		if _, ok := base[run]; ok {
			runs = append(runs, run)
		}
	}
	slices.Sort(runs)
	var ratios, os, bs, oa, ba []float64
	allocsKnown := true
	for _, run := range runs {
		o, b := ours[run], base[run]
		ov, okO := o.Metrics[c.metric()]
		bv, okB := b.Metrics[c.metric()]
		if !okO || !okB || ov <= 0 {
			continue
		}
		r.Runs++
		if low := min(o.N, b.N); low < r.MinN {
			if r.LowN == 0 || low < r.LowN {
				r.LowN = low
			}
			continue
		}
		r.Kept++
		ratios = append(ratios, bv/ov)
		os, bs = append(os, ov), append(bs, bv)
		opa, okO := allocsPerUnit(o, c.metric())
		bpa, okB := allocsPerUnit(b, c.metric())
		allocsKnown = allocsKnown && okO && okB
		oa, ba = append(oa, opa), append(ba, bpa)
	}
	switch {
	case r.Runs == 0:
		r.Verdict = notMeasured
		return r
	case r.Kept == 0 || 2*r.Kept < r.Runs:
		r.Verdict = unreliable
		return r
	}
	r.Ratio, _ = medianOf(ratios)
	r.Lo, r.Hi = slices.Min(ratios), slices.Max(ratios)
	r.OursNs, _ = medianOf(os)
	r.BaseNs, _ = medianOf(bs)
	if allocsKnown {
		r.OursAllocs, _ = medianOf(oa)
		r.BaseAllocs, _ = medianOf(ba)
		r.AllocsKnown = true
	}
	switch {
	case r.Kept > 1 && r.Lo <= 1 && r.Hi >= 1:
		r.Verdict = withinNoise
	case r.Ratio > 1:
		r.Verdict = faster
	default:
		r.Verdict = slower
	}
	return r
}

// allocsPerUnit returns a result's allocations per unit of metric: allocs/op itself for ns/op, and for
// a metric "ns/<unit>" allocs/op over the units in one op (ns/op divided by ns/<unit>). Other metrics
// (bytes/task, p99-us) do not say how many units an op holds.
func allocsPerUnit(res result, metric string) (float64, bool) {
	allocs, ok := res.Metrics["allocs/op"]
	if !ok {
		return 0, false
	}
	if metric == "ns/op" {
		return allocs, true
	}
	perUnit, okU := res.Metrics[metric]
	perOp, okO := res.Metrics["ns/op"]
	if !strings.HasPrefix(metric, "ns/") || !okU || !okO || perUnit <= 0 || perOp <= 0 {
		return 0, false
	}
	return allocs / (perOp / perUnit), true
}

// writeTable prints the header lines and the rows as an aligned text table.
func writeTable(w io.Writer, header []string, rows []row) error {
	for _, h := range header {
		fmt.Fprintln(w, h)
	}
	if len(header) > 0 {
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "comparison\tmetric\tours\tbaseline\tspeedup\trange\truns\tverdict\tallocs/unit ours\tbaseline\t")
	for _, r := range rows {
		c := r.cells()
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Label(), r.metricLabel(),
			c.ours, c.base, c.speedup, c.rng, c.runs, c.verdict, c.oursAllocs, c.baseAllocs)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, legend)
	return nil
}

// legend explains the columns, under both tables.
const legend = `speedup: median over the runs of baseline/ours (run i of each, made one after the other); range: the
smallest and largest of those ratios. "within noise": the range includes 1x, so no direction is claimed.
"unreliable": most runs stopped below the b.N floor, their figure is mostly start-up; it is left off the
chart. allocs/unit: allocations per unit of the metric (per op for ns/op; "-" where the benchmark does
not say how many units an op holds).`

// cells are a row's formatted figures, shared by both tables.
type rowCells struct {
	ours, base, speedup, rng, runs, verdict, oursAllocs, baseAllocs string
}

func (r row) cells() rowCells {
	c := rowCells{verdict: r.Verdict.String(), oursAllocs: "-", baseAllocs: "-"}
	switch r.Verdict {
	case notMeasured:
		return c
	case unreliable:
		c.runs = fmt.Sprintf("%d/%d", r.Kept, r.Runs)
		c.verdict = fmt.Sprintf("unreliable: b.N %d < %d", r.LowN, r.MinN)
		return c
	}
	c.ours, c.base = num(r.OursNs), num(r.BaseNs)
	c.speedup = num(r.Ratio) + "x"
	c.rng = num(r.Lo) + "-" + num(r.Hi) + "x"
	c.runs = fmt.Sprintf("%d", r.Kept)
	if r.Kept < r.Runs {
		c.runs = fmt.Sprintf("%d/%d", r.Kept, r.Runs)
	}
	if r.AllocsKnown {
		c.oursAllocs, c.baseAllocs = allocNum(r.OursAllocs), allocNum(r.BaseAllocs)
	}
	return c
}

// writeMarkdown prints the header lines and the rows as the Markdown table that BENCHMARKS.md carries,
// with Tokio's figure for the same shape where there is one (tokioFigures).
func writeMarkdown(w io.Writer, header []string, rows []row) {
	for _, h := range header {
		fmt.Fprintf(w, "%s  \n", h)
	}
	if len(header) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| benchmark | ours | baseline | ours | baseline | Tokio | speedup | range | runs | verdict | allocs/unit ours | allocs/unit baseline |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
	for _, r := range rows {
		name := fmt.Sprintf("`%s` (%s)", r.Benchmark, r.metricLabel())
		tokio := ""
		if v, ok := tokioFigures[r.Benchmark+"/"+r.Ours]; ok {
			tokio = num(v)
		}
		c := r.cells()
		speedup := c.speedup
		if r.Verdict == faster || r.Verdict == slower {
			speedup = "**" + speedup + "**"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, r.Ours, r.Baseline,
			c.ours, c.base, tokio, speedup, c.rng, c.runs, c.verdict, c.oursAllocs, c.baseAllocs)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.ReplaceAll(legend, "\n", " "))
}

// metricLabel says what the figures are: "ns per push+pop", "bytes/task per idle task".
func (r row) metricLabel() string {
	if r.Metric == "" {
		return "ns per " + r.Unit
	}
	return r.Metric + ", per " + r.Unit
}

// num formats a measurement with as many digits as it deserves.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// allocNum formats allocations per unit: whole numbers as such, fractions with two significant digits.
func allocNum(v float64) string {
	switch {
	case v == math.Trunc(v) || v >= 10:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2g", v)
	}
}
