// Package inspect shows a running blitz runtime to the tools a Go service
// already has, and to a browser:
//
//   - MetricsHandler serves the runtime's Metrics in the Prometheus text
//     exposition format, for a Prometheus server to scrape;
//   - PublishExpvar publishes them as an expvar variable, served as JSON by
//     /debug/vars;
//   - Console serves a live page, in the spirit of tokio-console, of the
//     workers, the live tasks (name, state, age, polls, what each waits on)
//     and the I/O operations, refreshed every second, with no JavaScript
//     framework.
//
// It is a package of its own, like net/http/pprof, so that a program that
// imports the runtime links no HTTP server and registers nothing on
// http.DefaultServeMux unless it asks for it:
//
//	mux.Handle("/metrics", inspect.MetricsHandler(rt))
//	mux.Handle("/console/", http.StripPrefix("/console", inspect.Console(rt)))
//	inspect.PublishExpvar("blitz", rt)
//
// The figures come from blitz.Runtime.Metrics and the tasks from
// blitz.Runtime.Tasks; see those for what each one means. Tasks show
// their names when spawned with blitz.Named (or named with
// blitz.SetTaskName), and their poll times with Config.PollTiming.
package inspect
