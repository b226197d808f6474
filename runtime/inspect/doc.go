// Package inspect serves a running blitz runtime's figures to the tools a Go
// service already has: a handler in the Prometheus text exposition format
// for a Prometheus server to scrape, and an expvar variable for
// /debug/vars. It is a package of its own, like net/http/pprof, so that a
// program that imports the runtime does not link net/http or register
// anything on http.DefaultServeMux unless it asks for it.
//
//	mux.Handle("/metrics", inspect.MetricsHandler(rt))
//	inspect.PublishExpvar("blitz", rt)
//
// Every figure comes from runtime.Runtime.Metrics; see runtime.Metrics for
// what each one counts.
package inspect
