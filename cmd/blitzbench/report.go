package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// row is one comparison with its measured medians.
type row struct {
	comparison
	// OursNs and BaseNs are the medians of the comparison's metric (ns/op
	// unless Metric says otherwise).
	OursNs, BaseNs         float64
	OursAllocs, BaseAllocs float64
	Measured               bool // both sides have a result
}

// Label names the comparison on the chart and in the tables.
func (r row) Label() string {
	return fmt.Sprintf("%s: %s vs %s", strings.TrimPrefix(r.Benchmark, "Benchmark"), r.Ours, r.Baseline)
}

// Speedup is how many times better ours is than the baseline: the baseline's metric over ours (every
// metric is lower-is-better: time, bytes, lateness).
func (r row) Speedup() float64 { return r.BaseNs / r.OursNs }

// buildRows pairs every comparison with its medians in rs.
func buildRows(cs []comparison, rs *results) []row {
	rows := make([]row, 0, len(cs))
	for _, c := range cs {
		r := row{comparison: c}
		ours, base := c.Benchmark+"/"+c.Ours, c.Benchmark+"/"+c.Baseline
		var okO, okB bool
		r.OursNs, okO = rs.median(ours, c.metric())
		r.BaseNs, okB = rs.median(base, c.metric())
		r.OursAllocs, _ = rs.median(ours, "allocs/op")
		r.BaseAllocs, _ = rs.median(base, "allocs/op")
		r.Measured = okO && okB && r.OursNs > 0
		rows = append(rows, r)
	}
	return rows
}

// writeTable prints the rows as an aligned text table.
func writeTable(w io.Writer, rows []row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "comparison\tmetric\tours\tbaseline\tspeedup\tours allocs\tbaseline allocs\t")
	for _, r := range rows {
		if !r.Measured {
			fmt.Fprintf(tw, "%s\t%s\tnot measured\t\t\t\t\t\n", r.Label(), r.metricLabel())
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fx\t%s\t%s\t\n", r.Label(), r.metricLabel(),
			num(r.OursNs), num(r.BaseNs), r.Speedup(), num(r.OursAllocs), num(r.BaseAllocs))
	}
	return tw.Flush()
}

// writeMarkdown prints the rows as the Markdown table that BENCHMARKS.md carries, with Tokio's
// figure for the same shape where there is one (tokioFigures).
func writeMarkdown(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| benchmark | ours | baseline | ours | baseline | Tokio | speedup | ours allocs | baseline allocs |")
	fmt.Fprintln(w, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, r := range rows {
		name := fmt.Sprintf("`%s` (%s)", r.Benchmark, r.metricLabel())
		tokio := ""
		if v, ok := tokioFigures[r.Benchmark+"/"+r.Ours]; ok {
			tokio = num(v)
		}
		if !r.Measured {
			fmt.Fprintf(w, "| %s | %s | %s | not measured | | %s | | | |\n", name, r.Ours, r.Baseline, tokio)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | **%.2fx** | %s | %s |\n", name, r.Ours, r.Baseline,
			num(r.OursNs), num(r.BaseNs), tokio, r.Speedup(), num(r.OursAllocs), num(r.BaseAllocs))
	}
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
