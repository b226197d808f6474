package blitz

import (
	"bufio"
	"io"
	"strconv"
	"strings"
	"time"
)

// WritePrometheus writes m in the Prometheus text exposition format
// (version 0.0.4), every metric named blitz_...: counters end in _total,
// per-worker figures carry a worker label, per-ring ones a ring label and,
// for operations, a kind label. The inspect package serves it over HTTP
// for a Prometheus server to scrape.
func (m Metrics) WritePrometheus(w io.Writer) error {
	p := promWriter{w: bufio.NewWriter(w)}
	p.family("blitz_workers", "gauge", "Scheduler workers.")
	p.sample("blitz_workers", nil, float64(len(m.Workers)))
	workerCounters := []struct {
		name, help string
		get        func(WorkerMetrics) uint64
	}{
		{"blitz_worker_polls_total", "Task polls made by the worker.", func(w WorkerMetrics) uint64 { return w.Polls }},
		{"blitz_worker_spawned_total", "Tasks spawned by the worker's polls.", func(w WorkerMetrics) uint64 { return w.Spawned }},
		{"blitz_worker_completed_total", "Tasks that completed in the worker's polls.", func(w WorkerMetrics) uint64 { return w.Completed }},
		{"blitz_worker_steals_total", "Successful steals by the worker.", func(w WorkerMetrics) uint64 { return w.Steals }},
		{"blitz_worker_stolen_tasks_total", "Tasks moved by the worker's steals.", func(w WorkerMetrics) uint64 { return w.Stolen }},
		{"blitz_worker_lifo_hits_total", "Polls of a task taken from the worker's LIFO slots.", func(w WorkerMetrics) uint64 { return w.LIFOHits }},
		{"blitz_worker_global_batches_total", "Batch pops from the global queue by the worker.", func(w WorkerMetrics) uint64 { return w.GlobalBatches }},
		{"blitz_worker_parks_total", "Times the worker parked.", func(w WorkerMetrics) uint64 { return w.Parks }},
		{"blitz_worker_spins_total", "Times the worker spun for work before parking.", func(w WorkerMetrics) uint64 { return w.Spins }},
		{"blitz_worker_spin_hits_total", "Spins of the worker that found work (a park saved).", func(w WorkerMetrics) uint64 { return w.SpinHits }},
	}
	for _, c := range workerCounters {
		p.family(c.name, "counter", c.help)
		for i, wm := range m.Workers {
			p.sample(c.name, []string{"worker", strconv.Itoa(i)}, float64(c.get(wm)))
		}
	}
	for _, f := range []struct {
		name, help string
		get        func(WorkerMetrics) time.Duration
	}{
		{"blitz_worker_parked_seconds_total", "Time the worker spent parked.", func(w WorkerMetrics) time.Duration { return w.ParkedTime }},
		{"blitz_worker_busy_seconds_total", "Time the worker was not parked: running tasks, its drivers, looking for work.", func(w WorkerMetrics) time.Duration { return w.BusyTime }},
	} {
		p.family(f.name, "counter", f.help)
		for i, wm := range m.Workers {
			p.sample(f.name, []string{"worker", strconv.Itoa(i)}, f.get(wm).Seconds())
		}
	}
	p.family("blitz_worker_local_queue_depth", "gauge", "Tasks in the worker's local queue.")
	for i, wm := range m.Workers {
		p.sample("blitz_worker_local_queue_depth", []string{"worker", strconv.Itoa(i)}, float64(wm.LocalQueue))
	}
	p.gauge("blitz_global_queue_depth", "Tasks in the global queue.", float64(m.GlobalQueue))
	p.counter("blitz_tasks_spawned_total", "Tasks spawned.", m.Tasks.Spawned)
	p.gauge("blitz_tasks_live", "Tasks spawned and not finished.", float64(m.Tasks.Live))
	p.counter("blitz_tasks_panicked_total", "Panics of task polls, of cancels and of wakers.", m.Tasks.Panicked)
	p.counter("blitz_tasks_cancelled_total", "Tasks aborted by JoinHandle.Cancel.", m.Tasks.Cancelled)
	p.gauge("blitz_blocking_threads", "Goroutines of the blocking pool.", float64(m.Blocking.Threads))
	p.gauge("blitz_blocking_idle_threads", "Goroutines of the blocking pool waiting for work.", float64(m.Blocking.Idle))
	p.gauge("blitz_blocking_queued", "Blocking calls waiting for a goroutine.", float64(m.Blocking.Queued))
	p.counter("blitz_blocking_threads_started_total", "Goroutines the blocking pool started.", m.Blocking.Started)
	p.counter("blitz_blocking_calls_total", "Blocking calls run.", m.Blocking.Ran)
	p.counter("blitz_blocking_panics_total", "Blocking calls that panicked.", m.Blocking.Panics)
	p.counter("blitz_blocking_rejected_total", "Blocking calls refused or dropped by the shutdown.", m.Blocking.Rejected)
	p.family("blitz_io_in_flight", "gauge", "I/O operations submitted to the ring and not finished.")
	for i, r := range m.IO {
		p.sample("blitz_io_in_flight", []string{"ring", strconv.Itoa(i)}, float64(r.InFlight))
	}
	for _, f := range []struct {
		name, help string
		get        func(OpMetrics) uint64
	}{
		{"blitz_io_ops_submitted_total", "I/O operations submitted, by ring and kind.", func(o OpMetrics) uint64 { return o.Submitted }},
		{"blitz_io_ops_completed_total", "I/O operations finished, by ring and kind.", func(o OpMetrics) uint64 { return o.Completed }},
	} {
		p.family(f.name, "counter", f.help)
		for i, r := range m.IO {
			for _, o := range r.Ops {
				p.sample(f.name, []string{"ring", strconv.Itoa(i), "kind", o.Kind}, float64(f.get(o)))
			}
		}
	}
	p.family("blitz_io_enter_calls_total", "counter", "Calls into the kernel's queue: io_uring_enter, or the poller's wait.")
	for i, r := range m.IO {
		p.sample("blitz_io_enter_calls_total", []string{"ring", strconv.Itoa(i)}, float64(r.EnterCalls))
	}
	p.counter("blitz_io_wait_errors_total", "Backend waits that failed.", m.IOWaitErrors)
	p.counter("blitz_accepts_skipped_total", "Connections reset or aborted before their accept, which the accept skipped.", m.AcceptsSkipped)
	p.gauge("blitz_timers_live", "Pending sleeps and deadlines.", float64(m.Timers.Live))
	p.counter("blitz_timers_fired_total", "Sleeps and deadlines fired.", m.Timers.Fired)
	p.histogram("blitz_timer_lateness_seconds", "How long after their deadline sleeps fired.", m.Timers.Lateness)
	p.histogram("blitz_poll_duration_seconds", "Durations of task polls (with Config.PollTiming).", m.PollDurations)
	p.histogram("blitz_scheduling_delay_seconds", "Delays from a task's wake to its poll (with Config.PollTiming).", m.SchedulingDelays)
	if m.PollDurations.Counts != nil {
		p.counter("blitz_slow_polls_total", "Polls of Config.SlowPoll or longer.", m.SlowPolls)
	}
	var longest time.Duration
	for _, lp := range m.LongPolls {
		longest = max(longest, lp.For)
	}
	p.gauge("blitz_long_polls", "Polls in progress past the slow-poll threshold: tasks holding their worker without yielding.", float64(len(m.LongPolls)))
	p.gauge("blitz_longest_poll_in_progress_seconds", "How long the longest of the long polls in progress has run (0 for none).", longest.Seconds())
	p.gauge("blitz_start_time_seconds", "When the runtime started, in seconds since the Unix epoch.", float64(m.Start.UnixNano())/1e9)
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

// family writes a metric family's HELP and TYPE lines.
func (p *promWriter) family(name, typ, help string) {
	p.write("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
}

// gauge writes a family of one unlabelled gauge.
func (p *promWriter) gauge(name, help string, v float64) {
	p.family(name, "gauge", help)
	p.sample(name, nil, v)
}

// counter writes a family of one unlabelled counter.
func (p *promWriter) counter(name, help string, v uint64) {
	p.family(name, "counter", help)
	p.sample(name, nil, float64(v))
}

// histogram writes a histogram family in seconds: cumulative buckets, the
// sum and the count. A histogram with no counts (not measured) writes
// nothing.
func (p *promWriter) histogram(name, help string, h Histogram) {
	if h.Counts == nil {
		return
	}
	p.family(name, "histogram", help)
	var cum uint64
	for i, b := range h.Bounds {
		cum += h.Counts[i]
		p.sample(name+"_bucket", []string{"le", strconv.FormatFloat(b.Seconds(), 'g', -1, 64)}, float64(cum))
	}
	cum += h.Counts[len(h.Bounds)]
	p.sample(name+"_bucket", []string{"le", "+Inf"}, float64(cum))
	p.sample(name+"_sum", nil, h.Sum.Seconds())
	p.sample(name+"_count", nil, float64(cum))
}

// sample writes one sample; labels alternate names and values.
func (p *promWriter) sample(name string, labels []string, v float64) {
	var b strings.Builder
	b.WriteString(name)
	if len(labels) > 0 {
		b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(labels[i])
			b.WriteString(`="`)
			b.WriteString(escapeLabel(labels[i+1]))
			b.WriteByte('"')
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	b.WriteByte('\n')
	p.write(b.String())
}

func (p *promWriter) write(s string) {
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}

// labelEscaper escapes a label value as the text format requires.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func escapeLabel(v string) string { return labelEscaper.Replace(v) }
