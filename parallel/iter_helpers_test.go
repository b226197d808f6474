package parallel_test

import (
	"testing"

	"github.com/blitz-go/blitz/parallel"
)

// place is one way of choosing where an iterator or sort runs. run calls f
// with the options for that place, on a worker for "ctx"; f must report
// failures with t.Errorf or assert (not require), which are safe off the
// test goroutine.
type place struct {
	name string
	run  func(f func(opts ...parallel.Option))
}

// iterPlaces are the default pool, a 2- and a 4-worker pool, a tiny grain
// (to split even small inputs), and the Ctx of a job.
func iterPlaces(t *testing.T) []place {
	p2, p4 := newPool(t, 2), newPool(t, 4)
	return []place{
		{"default", func(f func(...parallel.Option)) { f() }},
		{"pool2", func(f func(...parallel.Option)) { f(parallel.On(p2)) }},
		{"pool4", func(f func(...parallel.Option)) { f(parallel.On(p4)) }},
		{"pool4/grain=3", func(f func(...parallel.Option)) { f(parallel.On(p4), parallel.Grain(3)) }},
		{"ctx", func(f func(...parallel.Option)) {
			p2.Run(func(c *parallel.Ctx) { f(parallel.On(c)) })
		}},
	}
}

// iterSizes are every size from 0 to well past the sequential cut-off,
// then a few large ones.
func iterSizes() []int {
	var ns []int
	for n := 0; n <= 300; n++ {
		ns = append(ns, n)
	}
	return append(ns, 1000, 4099, scale(100_003, 10_007))
}
