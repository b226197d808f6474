package main

import (
	"path/filepath"
	"slices"
)

// A comparison is one row of the table and one bar of the chart: our implementation against a
// Go-standard equivalent, measured as sub-benchmarks of the same Go benchmark so that both run, one
// after the other, in each of the runs (see "Runs" in main.go).
type comparison struct {
	Module    string // module directory, relative to the repository root
	Benchmark string // top-level benchmark function, e.g. "BenchmarkLocalPushPop"
	Ours      string // sub-benchmark name of our implementation
	Baseline  string // sub-benchmark name of the Go-standard equivalent
	Unit      string // what one unit of the metric is, for the table's header
	Metric    string // the metric compared, lower is better; "" means ns/op
}

// metric returns the metric the comparison reads, ns/op by default.
func (c comparison) metric() string {
	if c.Metric == "" {
		return "ns/op"
	}
	return c.Metric
}

// comparisons is the registry of side-by-side benchmarks the default run measures, in the order of the
// table. A new module adds its rows here; the benchmarks themselves live next to the code in the
// module's *_test.go files. The rows of one Benchmark run in one process, in the order the benchmark
// function runs its sub-benchmarks.
var comparisons = []comparison{
	// The owner's own path first (no thief), then the same queues with a thief stealing while the
	// owner pushes: the contended rows are the noisy ones, and the ones a channel can win.
	{"wsqueue", "BenchmarkLocalPushPop", "wsqueue", "chan", "push+pop", ""},
	{"wsqueue", "BenchmarkLocalPushPop", "wsqueue", "mutexdeque", "push+pop", ""},
	{"wsqueue", "BenchmarkStealContended", "wsqueue", "chan", "element moved", ""},
	{"wsqueue", "BenchmarkStealContended", "wsqueue", "mutexdeque", "element moved", ""},
	{"wsqueue", "BenchmarkChaseLev", "wsqueue", "chan", "push+pop", ""},
	{"wsqueue", "BenchmarkChaseLev", "wsqueue", "mutexdeque", "push+pop", ""},
	{"wsqueue", "BenchmarkChaseLevContended", "wsqueue", "chan", "element moved", ""},
	{"wsqueue", "BenchmarkChaseLevContended", "wsqueue", "mutexdeque", "element moved", ""},
	{"timerwheel", "BenchmarkInsertCancel", "timerwheel", "timeAfterFunc", "timer", ""},
	{"timerwheel", "BenchmarkInsertCancel", "timerwheelAfterFunc", "timeAfterFunc", "timer", ""},
	{"timerwheel", "BenchmarkAdvance", "timerwheel", "heap", "fired timer", ""},
	{"timerwheel", "BenchmarkConcurrentAfterFunc", "timerwheel", "timeAfterFunc", "timer", ""},
	{"globalq", "BenchmarkPushPop", "globalq", "chan", "push+pop", ""},
	{"globalq", "BenchmarkContended", "globalq", "chan", "element", ""},
	{"globalq", "BenchmarkContended", "globalq", "sharded", "element", ""},
	{"idle", "BenchmarkNotifyNoSleepers", "idle", "mutex", "notify", ""},
	{"idle", "BenchmarkUnparkPark", "idle", "chan", "round trip", ""},
	{"idle", "BenchmarkUnparkPark", "idle", "cond", "round trip", ""},
	{"waker", "BenchmarkListPushRemove", "waker", "containerlist", "push+remove", ""},
	{"waker", "BenchmarkWaitWake", "waker", "chan", "round trip", ""},
	{"waker", "BenchmarkWaitWake", "waker", "cond", "round trip", ""},
	{".", "BenchmarkSpawnMany", "blitz", "goroutines", "task", ""},
	{".", "BenchmarkSpawnRemote", "blitz/auto", "goroutines", "task", ""},
	{".", "BenchmarkYieldMany", "blitz", "goroutines", "yield", "ns/yield"},
	{".", "BenchmarkPingPong", "blitz/auto", "goroutines", "ping", "ns/ping"},
	{".", "BenchmarkPingPong", "blitz-detached/auto", "goroutines", "ping", "ns/ping"},
	{".", "BenchmarkChainedSpawn", "blitz/auto", "goroutines", "spawn", "ns/spawn"},
	{".", "BenchmarkChainedSpawn", "blitz-detached/auto", "goroutines", "spawn", "ns/spawn"},
	{".", "BenchmarkIdleTaskMemory", "blitz/auto", "goroutines", "idle task", "bytes/task"},
	{".", "BenchmarkTimerInsertCancel", "blitz", "timeAfterFunc", "timer", ""},
	{".", "BenchmarkSleepLateness", "blitz", "goroutines", "sleep, p99", "p99-us"},
	{".", "BenchmarkTCPEcho", "uring", "netGoroutines", "round trip", ""},
	{".", "BenchmarkIdleConnMemory", "uring", "netGoroutines", "idle conn", "bytes/conn"},
	{".", "BenchmarkHTTPAdapter", "blitz", "netHTTP", "request", ""},
	{".", "BenchmarkSpawnBlocking", "blitz", "goroutine", "call", ""},
	{".", "BenchmarkFileRead", "uring", "osFileGoroutines", "4 KiB read", ""},
	{"syncprim", "BenchmarkMutex", "uncontended/blitz", "uncontended/syncMutex", "lock+unlock", ""},
	{"syncprim", "BenchmarkMutex", "contended4/blitz", "contended4/syncMutex", "lock+unlock", ""},
	{"syncprim", "BenchmarkMutex", "contended4/blitzBlocking", "contended4/syncMutex", "lock+unlock", ""},
	{"syncprim", "BenchmarkRwLock", "blitz", "syncRWMutex", "lock+unlock", ""},
	{"syncprim", "BenchmarkRwLock", "blitzBlocking", "syncRWMutex", "lock+unlock", ""},
	{"syncprim", "BenchmarkSemaphore", "blitz", "xsyncSemaphore", "acquire+release", ""},
	{"syncprim", "BenchmarkSemaphore", "blitz", "chanSemaphore", "acquire+release", ""},
	{"syncprim", "BenchmarkSemaphore", "blitzBlocking", "chanSemaphore", "acquire+release", ""},
	{"syncprim", "BenchmarkNotify", "blitz", "chan", "notification", ""},
	{"syncprim", "BenchmarkNotify", "blitzBlocking", "chan", "notification", ""},
	{"syncprim", "BenchmarkBarrier", "blitz", "waitGroup", "round", ""},
	{"syncprim", "BenchmarkBarrier", "blitzBlocking", "waitGroup", "round", ""},
	{"syncprim", "BenchmarkOnceCell", "blitz", "syncOnce", "get", ""},
	{"channels", "BenchmarkChannelMPMC", "blitz", "chan", "message", ""},
	{"channels", "BenchmarkChannelMPMC", "blitzBlocking", "chan", "message", ""},
	{"channels", "BenchmarkChannelRoundTrip", "blitz", "chan", "round trip", ""},
	{"channels", "BenchmarkChannelRoundTrip", "blitzBlocking", "chan", "round trip", ""},
	{"channels", "BenchmarkUnbounded", "blitz", "chan", "message", ""},
	{"channels", "BenchmarkOneshot", "blitz", "chan", "oneshot", ""},
	{"channels", "BenchmarkOneshot", "blitzBlocking", "chan", "oneshot", ""},
	{"channels", "BenchmarkBroadcast", "blitz", "chanFanout", "message to 4", ""},
	{"channels", "BenchmarkBroadcast", "blitzBlocking", "chanFanout", "message to 4", ""},
	{"channels", "BenchmarkWatch", "blitz", "mutexCond", "change seen by 4", ""},
	{"channels", "BenchmarkWatch", "blitzBlocking", "mutexCond", "change seen by 4", ""},
	{"parallel", "BenchmarkFib", "parallel", "sequential", "fib(35)", ""},
	{"parallel", "BenchmarkFib", "parallel", "goroutines", "fib(35)", ""},
	{"parallel", "BenchmarkForkJoinTree", "parallel/depth=15", "goroutines/depth=15", "tree node", "ns/node"},
	{"parallel", "BenchmarkSortDemo", "parallel", "slicesSort", "sort of 10^6", ""},
	{"httpserver", "BenchmarkServe", "hello/conns=64/blitz", "hello/conns=64/nethttp", "request", ""},
}

// moreComparisons are measured only with -all: other backends and variants of rows above, which
// would take the default run well past its two minutes.
var moreComparisons = []comparison{
	{".", "BenchmarkSpawnRemote", "blitz-iface/auto", "goroutines", "task", ""},
	{".", "BenchmarkTCPEcho", "epoll", "netGoroutines", "round trip", ""},
	{".", "BenchmarkIdleConnMemory", "epoll", "netGoroutines", "idle conn", "bytes/conn"},
	{"httpserver", "BenchmarkServe", "hello/conns=64/blitz-epoll", "hello/conns=64/nethttp", "request", ""},
	{"httpserver", "BenchmarkServe", "hello/conns=1/blitz", "hello/conns=1/nethttp", "request", ""},
}

// defaultMinN is the smallest b.N a result may have to count: below it, the figure is mostly the
// benchmark's own start-up (the first, b.N=1 call of a benchmark whose setup takes longer than the
// -benchtime is the one go test reports). A shape may set another floor.
const defaultMinN = 100

// A shape says how a benchmark departs from the run's defaults: each of its runs makes a fixed number
// of iterations (its setup is heavy, or one iteration is already a batch), and its b.N floor.
type shape struct {
	Benchtime string // -benchtime for this benchmark, e.g. "100000x"; "" means the run's
	MinN      int    // smallest b.N that counts; 0 means defaultMinN
	MaxRuns   int    // run in at most this many of the runs; 0 means every run
}

// shapes holds the benchmarks that do not run with the defaults, keyed by module and benchmark
// ("blitz.BenchmarkFileRead"). A batch benchmark (one op is a whole workload: 1,000 ping-pongs, a
// tree of 2^15 joins) has a floor of 1; a benchmark whose ops share a start-up (10^4 readers, 64
// connections) gets enough iterations that the start-up is a small part of each op.
var shapes = map[string]shape{
	// 10^4 readers start before the first read: 10^5 reads are 10 per reader.
	"blitz.BenchmarkFileRead": {Benchtime: "100000x", MinN: 100_000},
	// 64 connections: 32,000 round trips are 500 per connection.
	"blitz.BenchmarkTCPEcho": {Benchtime: "32000x", MinN: 6_400},
	// 64 keep-alive connections from a load generator in a child process.
	"httpserver.BenchmarkServe": {Benchtime: "20000x", MinN: 6_400},
	// One op is 10^6 parked tasks (10^5 goroutines) or 10^4 idle connections; the figure is a heap
	// delta, steady from run to run, and a run takes seconds: three runs give its range.
	"blitz.BenchmarkIdleTaskMemory": {Benchtime: "1x", MinN: 1, MaxRuns: 3},
	"blitz.BenchmarkIdleConnMemory": {Benchtime: "1x", MinN: 1, MaxRuns: 3},
	// One op is 10^5 sleeps of 1-50 ms; the metric is their p99.
	"blitz.BenchmarkSleepLateness": {Benchtime: "1x", MinN: 1},
	// One op is 1,000 tasks yielding 1,000 times, 1,000 ping-pongs, a chain of 1,000 spawns.
	"blitz.BenchmarkYieldMany":    {MinN: 1},
	"blitz.BenchmarkPingPong":     {MinN: 1},
	"blitz.BenchmarkChainedSpawn": {MinN: 1},
	// One op is fib(35), a tree of 2^15-1 joins, a sort of 10^6 elements.
	"parallel.BenchmarkFib":          {Benchtime: "3x", MinN: 1},
	"parallel.BenchmarkForkJoinTree": {Benchtime: "10x", MinN: 1},
	"parallel.BenchmarkSortDemo":     {Benchtime: "3x", MinN: 1},
}

// shapeOf returns c's benchmark's shape, with the defaults filled in.
func shapeOf(c comparison) shape {
	s := shapes[moduleName(c.Module)+"."+c.Benchmark]
	if s.MinN == 0 {
		s.MinN = defaultMinN
	}
	return s
}

// moduleName names the module in directory dir as its package does: the
// root module's package is blitz.
func moduleName(dir string) string {
	if dir == "." {
		return "blitz"
	}
	return filepath.Base(dir)
}

// modulesOf returns the modules of cs in first-seen order.
func modulesOf(cs []comparison) []string {
	var mods []string
	for _, c := range cs {
		if !slices.Contains(mods, c.Module) {
			mods = append(mods, c.Module)
		}
	}
	return mods
}

// tokioFigures are Tokio's figures for the runtime rows whose shape Tokio's own benchmarks share
// (chained_spawn, ping_pong, spawn from outside, yield, an idle task parked on a Notify, a contended
// async Mutex), in the comparison's metric, keyed by Benchmark/Ours. They were measured on this
// project's development machine (2 vCPUs) with Tokio 1.24 and 2 workers; they are facts about Tokio
// on that machine, not results of this program, and are printed beside ours for reference.
var tokioFigures = map[string]float64{
	"BenchmarkChainedSpawn/blitz/auto":          138,
	"BenchmarkChainedSpawn/blitz-detached/auto": 138,
	"BenchmarkPingPong/blitz/auto":              481,
	"BenchmarkPingPong/blitz-detached/auto":     481,
	"BenchmarkSpawnRemote/blitz/auto":           305,
	"BenchmarkSpawnRemote/blitz-iface/auto":     305,
	"BenchmarkYieldMany/blitz":                  42,
	"BenchmarkIdleTaskMemory/blitz/auto":        192,
	"BenchmarkMutex/contended4/blitz":           84,
}
