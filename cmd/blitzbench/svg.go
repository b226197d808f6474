package main

import (
	"fmt"
	"html"
	"io"
	"math"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = valueLeft + 150
	labelWidth  = 410 // left column with the comparison names
	barAreaLeft = labelWidth + 10
	barAreaW    = 470                         // the log axis
	valueLeft   = barAreaLeft + barAreaW + 12 // right column with the speedup and its range
	rowHeight   = 24
	footerH     = 48
	axisMin     = 0.1 // the axis never reaches beyond these: a bar past them stops at the edge
	axisMax     = 100.0
)

// Bar colours by verdict.
const (
	colorFaster = "#2e7d32"
	colorSlower = "#c62828"
	colorNoise  = "#9e9e9e"
)

// writeSVG draws one horizontal bar per row with a direction or within noise: the median speedup of
// ours over the baseline on a logarithmic axis (clamped to axisMin-axisMax), with a line at 1x and a
// whisker over the range of the runs. Green bars mean ours is faster in every run, red slower, grey
// within noise. Unreliable and unmeasured rows are left off and counted in the footer. note, when not
// empty, is printed under the title (a load warning).
func writeSVG(w io.Writer, title, note string, rows []row) error {
	var charted []row
	left := 0
	for _, r := range rows {
		if r.Verdict.charted() {
			charted = append(charted, r)
		} else {
			left++
		}
	}
	headerH := 54
	if note != "" {
		headerH += 18
	}
	lo, hi := axisRange(charted)
	x := func(v float64) float64 {
		v = min(max(v, lo), hi)
		return barAreaLeft + barAreaW*(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}
	axisY := headerH + rowHeight*len(charted)
	height := axisY + footerH
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }

	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`,
		chartWidth, height, chartWidth, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>`)
	p(`<text x="10" y="22" font-size="16" font-weight="bold">%s</text>`, html.EscapeString(title))
	p(`<text x="10" y="42" fill="#555">speedup of blitz over the Go-standard equivalent (baseline / ours: time, bytes or lateness), median of the runs, log scale</text>`)
	if note != "" {
		p(`<text x="10" y="60" fill="#b26a00">%s</text>`, html.EscapeString(note))
	}
	for _, tick := range axisTicks(lo, hi) {
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, x(tick), headerH, x(tick), axisY, tickColor(tick))
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%gx</text>`, x(tick), axisY+16, tick)
	}
	for i, r := range charted {
		y := headerH + i*rowHeight
		end := x(r.Ratio)
		barLeft, width := math.Min(x(1), end), math.Abs(end-x(1))
		color := colorFaster
		switch r.Verdict {
		case slower:
			color = colorSlower
		case withinNoise:
			color = colorNoise
		}
		mid := float64(y) + rowHeight/2
		p(`<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`, labelWidth, mid, html.EscapeString(r.Label()))
		p(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`, barLeft, y+5, math.Max(width, 1), rowHeight-10, color)
		if r.Kept > 1 {
			l, h := x(r.Lo), x(r.Hi)
			p(`<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f" stroke="#333" fill="none"/>`,
				l, mid, h, l, mid-4, mid+4, h, mid-4, mid+4)
		}
		value := num(r.Ratio) + "x"
		if r.Kept > 1 {
			value += fmt.Sprintf(" (%s-%s)", num(r.Lo), num(r.Hi))
		}
		p(`<text x="%d" y="%.1f" dominant-baseline="middle" fill="%s">%s</text>`, valueLeft, mid, color, value)
	}
	footer := fmt.Sprintf("green, red: faster, slower in every run; grey: within noise; whiskers: the range over the runs; axis clamped to %gx-%gx", axisMin, axisMax)
	if left > 0 {
		footer += fmt.Sprintf("; %d rows left off (unreliable or not measured, see the table)", left)
	}
	p(`<text x="10" y="%d" fill="#555">%s</text>`, axisY+38, html.EscapeString(footer))
	p(`</svg>`)
	return nil
}

// axisRange returns a logarithmic axis covering 0.5x-2x and every charted ratio and range with some
// room, clamped to axisMin-axisMax.
func axisRange(rows []row) (lo, hi float64) {
	lo, hi = 0.5, 2
	for _, r := range rows {
		lo = math.Min(lo, math.Min(r.Lo, r.Ratio)/1.3)
		hi = math.Max(hi, math.Max(r.Hi, r.Ratio)*1.3)
	}
	return math.Max(lo, axisMin), math.Min(hi, axisMax)
}

// axisTicks returns the 1-2-5 values between lo and hi.
func axisTicks(lo, hi float64) []float64 {
	var ticks []float64
	for decade := math.Pow(10, math.Floor(math.Log10(lo))); decade <= hi; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if t := decade * m; t >= lo*(1-1e-9) && t <= hi*(1+1e-9) {
				ticks = append(ticks, math.Round(t*1000)/1000)
			}
		}
	}
	return ticks
}

func tickColor(tick float64) string {
	if tick == 1 {
		return "#000"
	}
	return "#ddd"
}
