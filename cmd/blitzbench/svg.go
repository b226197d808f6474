package main

import (
	"fmt"
	"html"
	"io"
	"math"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 960
	labelWidth  = 400 // left column with the comparison names
	barAreaLeft = labelWidth + 10
	barAreaW    = chartWidth - barAreaLeft - 70 // room on the right for the value text
	rowHeight   = 26
	headerH     = 54
	footerH     = 30
)

// writeSVG draws one horizontal bar per measured row: the speedup of ours over the baseline on a
// logarithmic axis, with a line at 1x. Green bars mean ours is faster, red that it is slower.
func writeSVG(w io.Writer, title string, rows []row) error {
	var measured []row
	for _, r := range rows {
		if r.Measured {
			measured = append(measured, r)
		}
	}
	lo, hi := axisRange(measured)
	x := func(v float64) float64 {
		return barAreaLeft + barAreaW*(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}
	height := headerH + rowHeight*len(measured) + footerH
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }

	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`,
		chartWidth, height, chartWidth, height)
	p(`<rect width="100%%" height="100%%" fill="white"/>`)
	p(`<text x="10" y="22" font-size="16" font-weight="bold">%s</text>`, html.EscapeString(title))
	p(`<text x="10" y="42" fill="#555">speedup of blitz over the Go-standard equivalent (baseline / ours: time, bytes or lateness), log scale</text>`)
	axisY := headerH + rowHeight*len(measured)
	for _, tick := range axisTicks(lo, hi) {
		p(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`, x(tick), headerH, x(tick), axisY, tickColor(tick))
		p(`<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%gx</text>`, x(tick), axisY+18, tick)
	}
	for i, r := range measured {
		y := headerH + i*rowHeight
		end := x(r.Speedup())
		left, width := math.Min(x(1), end), math.Abs(end-x(1))
		color := "#2e7d32"
		if r.Speedup() < 1 {
			color = "#c62828"
		}
		p(`<text x="%d" y="%d" text-anchor="end">%s</text>`, labelWidth, y+17, html.EscapeString(r.Label()))
		p(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`, left, y+4, math.Max(width, 1), rowHeight-8, color)
		p(`<text x="%.1f" y="%d">%.2fx</text>`, math.Max(end, x(1))+4, y+17, r.Speedup())
	}
	p(`</svg>`)
	return nil
}

// axisRange returns a logarithmic axis covering every speedup and 1x, padded to whole powers of ten
// where that does not waste most of the width.
func axisRange(rows []row) (lo, hi float64) {
	lo, hi = 0.5, 2
	for _, r := range rows {
		lo, hi = math.Min(lo, r.Speedup()/1.3), math.Max(hi, r.Speedup()*1.3)
	}
	return lo, hi
}

// axisTicks returns the 1-2-5 values between lo and hi.
func axisTicks(lo, hi float64) []float64 {
	var ticks []float64
	for decade := math.Pow(10, math.Floor(math.Log10(lo))); decade <= hi; decade *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if t := decade * m; t >= lo && t <= hi {
				ticks = append(ticks, t)
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
