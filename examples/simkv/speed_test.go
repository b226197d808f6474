//go:build unix

package simkv_test

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gcCPU is the CPU time the garbage collector has used so far (as the
// runtime estimates it: mark workers, assists, pauses).
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// cpuTime is the CPU time (user and system) the process has used: on a
// machine shared with other work, seeds per CPU second vary less than
// seeds per second.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSpeed measures how fast the simulator runs the store: seeds per
// second and virtual seconds per real second, for typical runs (10 s of
// virtual time of the workload with faults, checker included), first on
// one core (GOMAXPROCS=1, seeds one after another), then on every core
// (GOMAXPROCS=NumCPU, as many seeds at once). It prints its figures as
// benchmark lines, for benchstat:
//
//	SIMKV_SPEED=20 go test -run '^TestSpeed$' -count=6 ./simkv/ | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest new.txt
//
// SIMKV_SPEED is the number of seeds per measurement; without it the test
// is skipped. Besides the wall-clock figures it prints the CPU time per
// seed (cpu-ms/op, seeds/cpu-s), steadier on a shared machine, and the
// allocations per seed (B/op, allocs/op, gcs/op), which do not depend on
// the machine's load at all, and the garbage collector's share of the CPU
// time (gc-cpu-ms/op).
func TestSpeed(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("SIMKV_SPEED"))
	if n <= 0 {
		t.Skip("set SIMKV_SPEED=seeds to measure the simulator's speed")
	}
	sc := scenario{Faults: true, Duration: 10 * time.Second}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, runtime.NumCPU()} {
		runtime.GOMAXPROCS(procs)
		var mu sync.Mutex
		var virtual time.Duration
		var steps int
		next := uint64(1)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start, cpu0, gc0 := time.Now(), cpuTime(), gcCPU()
		t.Run("procs="+strconv.Itoa(procs), func(t *testing.T) {
			for w := range procs {
				t.Run("worker="+strconv.Itoa(w), func(t *testing.T) {
					t.Parallel()
					for {
						mu.Lock()
						seed := next
						next++
						mu.Unlock()
						if seed > uint64(n) {
							return
						}
						v := runOnce(t, seed, sc)
						mu.Lock()
						virtual += v.virtual
						steps += v.steps
						mu.Unlock()
					}
				})
			}
		})
		real, cpu, gc := time.Since(start), cpuTime()-cpu0, gcCPU()-gc0
		runtime.ReadMemStats(&m1)
		fmt.Printf("BenchmarkSimKVSeed/procs=%d \t%d\t%d ns/op\t%.2f seeds/s\t%.1f virtual-s/s\t%.1f cpu-ms/op\t%.2f seeds/cpu-s\t%.0f steps/op\t%d B/op\t%d allocs/op\t%.1f gcs/op\t%.1f gc-cpu-ms/op\n",
			procs, n, real.Nanoseconds()/int64(n), float64(n)/real.Seconds(), virtual.Seconds()/real.Seconds(),
			float64(cpu.Milliseconds())/float64(n), float64(n)/cpu.Seconds(), float64(steps)/float64(n),
			(m1.TotalAlloc-m0.TotalAlloc)/uint64(n), (m1.Mallocs-m0.Mallocs)/uint64(n), float64(m1.NumGC-m0.NumGC)/float64(n),
			float64(gc.Microseconds())/1000/float64(n))
	}
}
