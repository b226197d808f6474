package parallel

import (
	"bufio"
	"io"
	"strconv"
)

// promCounters are the per-worker counter families of WritePrometheus, in
// the order written.
var promCounters = []struct {
	name, help string
	get        func(WorkerMetrics) uint64
}{
	{"blitz_parallel_jobs_executed_total", "Jobs the worker ran: the second function of each Join, spawned jobs and jobs submitted from outside the pool.", func(w WorkerMetrics) uint64 { return w.JobsExecuted }},
	{"blitz_parallel_jobs_stolen_total", "Jobs the worker took from another worker's deque and ran.", func(w WorkerMetrics) uint64 { return w.JobsStolen }},
	{"blitz_parallel_jobs_injected_total", "Jobs submitted from outside the pool that the worker took from the injection queue and ran.", func(w WorkerMetrics) uint64 { return w.JobsInjected }},
	{"blitz_parallel_sleeps_total", "Times the worker went to sleep for lack of work.", func(w WorkerMetrics) uint64 { return w.Sleeps }},
	{"blitz_parallel_wakeups_total", "Times the worker was woken from sleep.", func(w WorkerMetrics) uint64 { return w.Wakeups }},
}

// WritePrometheus writes m in the Prometheus text exposition format
// (version 0.0.4), every metric named blitz_parallel_...: counters end in
// _total and carry a worker label (the worker index), as do the deques'
// depths; the pool's gauges carry none. Sum over the label for the pool's
// totals. The names are fixed, so one exposition holds one pool's metrics.
// It returns the first error of w. Any goroutine may call it.
func (m Metrics) WritePrometheus(w io.Writer) error {
	p := promWriter{w: bufio.NewWriter(w)}
	p.family("blitz_parallel_workers", "gauge", "Workers of the pool.")
	p.sample("blitz_parallel_workers", "", strconv.Itoa(len(m.Workers)))
	for _, f := range promCounters {
		p.family(f.name, "counter", f.help)
		for i, wm := range m.Workers {
			p.sample(f.name, strconv.Itoa(i), strconv.FormatUint(f.get(wm), 10))
		}
	}
	p.family("blitz_parallel_deque_depth", "gauge", "Jobs in the worker's deque.")
	for i, wm := range m.Workers {
		p.sample("blitz_parallel_deque_depth", strconv.Itoa(i), strconv.Itoa(wm.Queued))
	}
	p.family("blitz_parallel_workers_idle", "gauge", "Workers looking for work, asleep or not.")
	p.sample("blitz_parallel_workers_idle", "", strconv.Itoa(m.Idle))
	p.family("blitz_parallel_workers_sleeping", "gauge", "Workers asleep.")
	p.sample("blitz_parallel_workers_sleeping", "", strconv.Itoa(m.Sleeping))
	p.family("blitz_parallel_injection_queue_depth", "gauge", "Jobs submitted from outside the pool waiting for a worker.")
	p.sample("blitz_parallel_injection_queue_depth", "", strconv.Itoa(m.InjectionQueue))
	if p.err != nil {
		return p.err
	}
	return p.w.Flush()
}

// promWriter writes the text format, keeping the first error.
type promWriter struct {
	w   *bufio.Writer
	err error
}

// family writes a metric family's HELP and TYPE lines. help must need no
// escaping (no backslash, no newline).
func (p *promWriter) family(name, typ, help string) {
	p.write("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

// sample writes one sample of value v (a number in the text format), with
// a worker label unless worker is empty. A worker label is an index, which
// needs no escaping.
func (p *promWriter) sample(name, worker, v string) {
	if worker == "" {
		p.write(name + " " + v + "\n")
		return
	}
	p.write(name + `{worker="` + worker + `"} ` + v + "\n")
}

// write writes s unless an earlier write failed.
func (p *promWriter) write(s string) {
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}
