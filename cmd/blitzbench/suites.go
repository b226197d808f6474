package main

// A comparison is one bar of the chart: our implementation against a Go-standard equivalent, measured
// as sub-benchmarks of the same Go benchmark so that both run in one `go test -bench` run.
type comparison struct {
	Module    string // module directory, relative to the repository root
	Benchmark string // top-level benchmark function, e.g. "BenchmarkLocalPushPop"
	Ours      string // sub-benchmark name of our implementation
	Baseline  string // sub-benchmark name of the Go-standard equivalent
	Unit      string // what one op is, for the table's header
	Metric    string // the metric compared, lower is better; "" means ns/op
}

// metric returns the metric the comparison reads, ns/op by default.
func (c comparison) metric() string {
	if c.Metric == "" {
		return "ns/op"
	}
	return c.Metric
}

// comparisons is the registry of side-by-side benchmarks. A new module adds its rows here; the
// benchmarks themselves live next to the code in the module's bench_test.go.
var comparisons = []comparison{
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
	{"runtime", "BenchmarkSpawnMany", "blitz", "goroutines", "task", ""},
	{"runtime", "BenchmarkSpawnRemote", "blitz/auto", "goroutines", "task", ""},
	{"runtime", "BenchmarkSpawnRemote", "blitz-iface/auto", "goroutines", "task", ""},
	{"runtime", "BenchmarkYieldMany", "blitz", "goroutines", "yield", "ns/yield"},
	{"runtime", "BenchmarkPingPong", "blitz/auto", "goroutines", "ping", "ns/ping"},
	{"runtime", "BenchmarkPingPong", "blitz-detached/auto", "goroutines", "ping", "ns/ping"},
	{"runtime", "BenchmarkChainedSpawn", "blitz/auto", "goroutines", "spawn", "ns/spawn"},
	{"runtime", "BenchmarkChainedSpawn", "blitz-detached/auto", "goroutines", "spawn", "ns/spawn"},
	{"runtime", "BenchmarkIdleTaskMemory", "blitz/auto", "goroutines", "idle task", "bytes/task"},
	{"runtime", "BenchmarkTimerInsertCancel", "blitz", "timeAfterFunc", "timer", ""},
	{"runtime", "BenchmarkSleepLateness", "blitz", "goroutines", "sleep, p99", "p99-us"},
	{"runtime", "BenchmarkTCPEcho", "uring", "netGoroutines", "round trip", ""},
	{"runtime", "BenchmarkTCPEcho", "epoll", "netGoroutines", "round trip", ""},
	{"runtime", "BenchmarkIdleConnMemory", "uring", "netGoroutines", "idle conn", "bytes/conn"},
	{"runtime", "BenchmarkIdleConnMemory", "epoll", "netGoroutines", "idle conn", "bytes/conn"},
	{"runtime", "BenchmarkHTTPAdapter", "blitz", "netHTTP", "request", ""},
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
	{"runtime", "BenchmarkSpawnBlocking", "blitz", "goroutine", "call", ""},
	{"runtime", "BenchmarkFileRead", "uring", "osFileGoroutines", "4 KiB read", ""},
	{"parallel", "BenchmarkFib", "parallel", "sequential", "fib(35)", ""},
	{"parallel", "BenchmarkFib", "parallel", "goroutines", "fib(35)", ""},
	{"parallel", "BenchmarkForkJoinTree", "parallel/depth=15", "goroutines/depth=15", "tree node", "ns/node"},
}

// modulesOf returns the modules of cs in first-seen order, each with the benchmarks it must run.
func modulesOf(cs []comparison) (mods []string, benches map[string][]string) {
	benches = make(map[string][]string)
	seen := make(map[string]bool)
	for _, c := range cs {
		if _, ok := benches[c.Module]; !ok {
			mods = append(mods, c.Module)
		}
		key := c.Module + "\x00" + c.Benchmark
		if !seen[key] {
			seen[key] = true
			benches[c.Module] = append(benches[c.Module], c.Benchmark)
		}
	}
	return mods, benches
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
