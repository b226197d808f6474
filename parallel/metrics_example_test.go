package parallel_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/blitz-go/blitz/parallel"
)

// A tree of 7 joins submitted with Run is 8 jobs: the second function of
// each Join and the injected job of Run. Which worker ran which, and how
// many were stolen, depends on timing; the totals do not.
func ExamplePool_Metrics() {
	p, err := parallel.NewPool(parallel.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	var tree func(c *parallel.Ctx, depth int)
	tree = func(c *parallel.Ctx, depth int) {
		if depth > 0 {
			c.Join(func(c *parallel.Ctx) { tree(c, depth-1) }, func(c *parallel.Ctx) { tree(c, depth-1) })
		}
	}
	p.Run(func(c *parallel.Ctx) { tree(c, 3) })

	m := p.Metrics()
	fmt.Println("workers:", len(m.Workers))
	fmt.Println("jobs executed:", m.Total.JobsExecuted)
	fmt.Println("jobs injected:", m.Total.JobsInjected)
	fmt.Println("stolen at most executed:", m.Total.JobsStolen <= m.Total.JobsExecuted)
	// Output:
	// workers: 2
	// jobs executed: 8
	// jobs injected: 1
	// stolen at most executed: true
}

// WritePrometheus writes the text a Prometheus server scrapes; an HTTP
// handler would pass its http.ResponseWriter. Here the families' TYPE lines
// are printed, and one series.
func ExampleMetrics_WritePrometheus() {
	p, err := parallel.NewPool(parallel.Config{Workers: 2})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	p.Join(func(*parallel.Ctx) {}, func(*parallel.Ctx) {})

	var b strings.Builder
	if err := p.Metrics().WritePrometheus(&b); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "# TYPE ") || strings.HasPrefix(l, "blitz_parallel_workers ") {
			fmt.Println(l)
		}
	}
	// Output:
	// # TYPE blitz_parallel_workers gauge
	// blitz_parallel_workers 2
	// # TYPE blitz_parallel_jobs_executed_total counter
	// # TYPE blitz_parallel_jobs_stolen_total counter
	// # TYPE blitz_parallel_jobs_injected_total counter
	// # TYPE blitz_parallel_sleeps_total counter
	// # TYPE blitz_parallel_wakeups_total counter
	// # TYPE blitz_parallel_deque_depth gauge
	// # TYPE blitz_parallel_workers_idle gauge
	// # TYPE blitz_parallel_workers_sleeping gauge
	// # TYPE blitz_parallel_injection_queue_depth gauge
}
