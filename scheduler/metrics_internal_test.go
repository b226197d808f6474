package scheduler

import (
	"testing"
	"time"
)

// Each duration lands in the first bucket whose bound is at least it.
func TestBucketOf(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {time.Nanosecond, 0}, {time.Microsecond, 0},
		{time.Microsecond + 1, 1}, {4 * time.Microsecond, 1}, {4*time.Microsecond + 1, 2},
		{16 * time.Microsecond, 2}, {17 * time.Microsecond, 3}, {time.Millisecond, 5},
		{histogramBounds[len(histogramBounds)-1], HistogramBuckets - 2},
		{histogramBounds[len(histogramBounds)-1] + 1, HistogramBuckets - 1},
		{time.Hour, HistogramBuckets - 1},
	}
	for _, c := range cases {
		if got := bucketOf(c.d); got != c.want {
			t.Errorf("bucketOf(%v) = %d, want %d", c.d, got, c.want)
		}
	}
	for i, b := range histogramBounds {
		if got := bucketOf(b); got != i {
			t.Errorf("bucketOf(bound %d = %v) = %d", i, b, got)
		}
		if got := bucketOf(b + 1); got != i+1 {
			t.Errorf("bucketOf(bound %d + 1ns) = %d", i, got)
		}
	}
}
