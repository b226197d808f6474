//go:build unix

package blitz_test

import (
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// BenchmarkSleepCPU is what the timers cost in CPU: n sleepers each sleep 3
// times for a random 1 to 3 s (10^5 sleepers by default, about 33,000 sleeps
// ending per second; BLITZ_BENCH_SLEEPERS=5000 for about 1,700), and the
// process's CPU time (user and system, getrusage) over the run is reported
// in ms, beside the goroutines' with time.Sleep. BLITZ_BENCH_TICK sets
// Config.TimerTick. Each op lasts about 9 s: run it with -benchtime 1x.
func BenchmarkSleepCPU(b *testing.B) {
	n := 100_000
	if v, _ := strconv.Atoi(os.Getenv("BLITZ_BENCH_SLEEPERS")); v > 0 {
		n = v
	}
	const each = 3
	durs := func() []time.Duration {
		d := make([]time.Duration, each)
		for j := range d {
			d[j] = time.Second + rand.N(2*time.Second)
		}
		return d
	}
	b.Run("blitz", func(b *testing.B) {
		tick, _ := time.ParseDuration(os.Getenv("BLITZ_BENCH_TICK"))
		rt := newBenchRuntime(b, blitz.Config{TimerTick: tick})
		measureCPU(b, func() {
			l := newLatch(n)
			for range n {
				blitz.SpawnOn[struct{}](rt.Handle(), &sleeper{durs: durs(), late: make([]time.Duration, each), l: l})
			}
			<-l.done
		})
	})
	b.Run("goroutines", func(b *testing.B) {
		measureCPU(b, func() {
			done := make(chan struct{}, n)
			for range n {
				go func() {
					for _, d := range durs() {
						time.Sleep(d)
					}
					done <- struct{}{}
				}()
			}
			for range n {
				<-done
			}
		})
	})
}

// measureCPU runs f b.N times and reports the process's CPU time per run.
func measureCPU(b *testing.B, f func()) {
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	for range b.N {
		f()
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano()
	b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
}
