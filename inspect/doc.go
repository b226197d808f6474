// Package inspect shows a running blitz runtime to the tools a Go service
// already has, and to a browser:
//
//   - MetricsHandler serves the runtime's Metrics in the Prometheus text
//     exposition format, for a Prometheus server to scrape;
//   - PublishExpvar publishes them as an expvar variable, served as JSON by
//     /debug/vars;
//   - Console serves a live page, in the spirit of tokio-console, of the
//     workers, the live tasks (a summary, and one page of them, sorted and
//     filtered by the server: name, state, age, polls, what each waits on,
//     for how long) and the I/O operations, refreshed every second, with
//     no JavaScript framework.
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
//
// # Console protocol
//
// The console's page gets what it shows from "state", next to it, as
// JSON. The parameters of the request choose a page of the live tasks and
// a task to detail; all are optional, unknown ones are ignored, and a bad
// one is answered 400 with the reason:
//
//   - sort: the order of the tasks: id (the default), name, state (idle,
//     scheduled, running, complete, queued), age, polls, poll (poll time),
//     waiting (the kind of wait by its name, then its descriptor,
//     deadline, task or number) or for (idle for, running for, or queued
//     for); ties by id, ascending.
//   - dir: asc (the default) or desc.
//   - filter: only the tasks whose name contains it, ignoring case; at
//     most 256 bytes.
//   - offset: the page's first task in that order, from 0; limit: the
//     page's length, 0 to 1000, 100 by default.
//   - task: the id of a task whose stanza (its entry in a task dump) to
//     include.
//
// The answer holds "time"; "metrics", the blitz.Metrics; "summary": "live",
// every live task, "listed", those the snapshot lists (all but the few
// that blitz.Runtime.Tasks cannot), which the rest counts, "states", the
// listed by state (idle, scheduled, running, complete, and queued: waiting
// for their first poll), and "waits", the five commonest kinds of wait of
// the idle tasks with their counts; "matching", the tasks the filter
// keeps; "offset" and "tasks", the page, each with its "id",
// "name", "state", "ageNs", "polls", "pollNs", "waiting" and "forNs";
// "selected", the "id" and "stanza" of the task asked for, absent when it
// is no longer listed; and "tookNs", the time the state took to build.
//
// A state costs the service a snapshot of the tasks
// (blitz.Runtime.SnapshotTasks), which grows with them, and one pass over
// it: the sort reads the tasks' figures, not their text, the tasks up to
// the page's end are selected rather than all sorted, and only the page's
// rows are formatted, so the answer's size does not grow with the tasks
// (about 15 KB for a page of 100). The snapshot and the sort's entries are
// kept by the handler from one state to the next (about 120 bytes a
// task), so that a state allocates little more than its answer, and makes
// little garbage to collect: at 10^5 tasks, a state costs the service
// 15 to 20 ms of CPU, garbage collection included (AMD EPYC, 2 vCPUs). The page keeps at most one request in flight: it asks again a
// second after each answer (or twenty times the state's tookNs, if more,
// and backing off up to 30 s while the service does not answer), at once
// when the user changes the view but never before the answer in flight
// arrives, and drops an answer to a view changed since. The view is kept
// in the address's fragment (#sort=for&dir=desc&filter=conn), to reload or
// share.
package inspect
