package parallel_test

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/parallel"
	"github.com/stretchr/testify/require"
)

// requireGoexit runs f, requires that it panics with the *PanicError of a
// job that called runtime.Goexit, and returns it.
func requireGoexit(t *testing.T, f func()) *parallel.PanicError {
	t.Helper()
	r := recoverPanic(f)
	require.NotNil(t, r, "no panic: the Goexit was not reported")
	pe, ok := r.(*parallel.PanicError)
	require.Truef(t, ok, "panic value %T %v is not a *PanicError", r, r)
	require.ErrorIs(t, pe, parallel.ErrGoexit)
	require.ErrorIs(t, pe, parallel.ErrPanicked)
	require.Contains(t, string(pe.Stack), "runtime.Goexit", "the Stack should show where Goexit was called")
	return pe
}

// requireHealthy requires that every worker of p (w of them) runs jobs and
// is recognised as a worker by the pool-level calls, and that p runs a tree
// of 2^14-1 joins correctly.
func requireHealthy(t *testing.T, p *parallel.Pool, w int) {
	t.Helper()
	// w jobs that each wait until all w have started: they run on w
	// distinct workers at once, which only a pool with w live workers can.
	var started, notWorker atomic.Int64
	seen := make([]atomic.Bool, w)
	p.Scope(func(s *parallel.Scope) {
		for range w {
			s.Spawn(func(c *parallel.Ctx) {
				if !parallel.IsWorkerGoroutine(p) {
					notWorker.Add(1)
				}
				seen[c.WorkerIndex()].Store(true)
				started.Add(1)
				spinUntil(10*time.Second, func() bool { return started.Load() == int64(w) })
			})
		}
	})
	require.Equal(t, int64(w), started.Load())
	for i := range seen {
		require.Truef(t, seen[i].Load(), "worker %d ran none of %d jobs that needed every worker", i, w)
	}
	require.Zero(t, notWorker.Load(), "a worker goroutine is not recognised as one")

	var n atomic.Int64
	p.Run(func(c *parallel.Ctx) { tree(c, 14, &n) })
	require.Equal(t, int64(1)<<14, n.Load())
}

func goexit(*parallel.Ctx) { runtime.Goexit() }

func TestGoexitInJoinAWaitsForBPoppedBack(t *testing.T) {
	p := newPool(t, 1)
	var bDone atomic.Bool
	requireGoexit(t, func() {
		p.Join(goexit, func(*parallel.Ctx) {
			time.Sleep(time.Millisecond)
			bDone.Store(true)
		})
	})
	require.True(t, bDone.Load(), "Join's Goexit was reported before its b finished")
	requireHealthy(t, p, 1)
}

func TestGoexitInJoinAWaitsForStolenB(t *testing.T) {
	p := newPool(t, 2)
	for range scale(50, 10) {
		var bStarted, bDone atomic.Bool
		var aWorker, bWorker atomic.Int64
		requireGoexit(t, func() {
			p.Join(func(c *parallel.Ctx) {
				aWorker.Store(int64(c.WorkerIndex()))
				spinUntil(10*time.Second, bStarted.Load)
				runtime.Goexit()
			}, func(c *parallel.Ctx) {
				bWorker.Store(int64(c.WorkerIndex()))
				bStarted.Store(true)
				time.Sleep(time.Millisecond)
				bDone.Store(true)
			})
		})
		require.NotEqual(t, aWorker.Load(), bWorker.Load(), "b was not stolen")
		require.True(t, bDone.Load(), "Join's Goexit was reported before its stolen b finished")
	}
	requireHealthy(t, p, 2)
}

func TestGoexitInBPoppedBack(t *testing.T) {
	p := newPool(t, 1)
	var aDone atomic.Bool
	requireGoexit(t, func() {
		p.Join(func(*parallel.Ctx) { aDone.Store(true) }, goexit)
	})
	require.True(t, aDone.Load())
	requireHealthy(t, p, 1)
}

func TestGoexitInStolenB(t *testing.T) {
	p := newPool(t, 2)
	for range scale(50, 10) {
		var bStarted, aDone atomic.Bool
		var aWorker, bWorker atomic.Int64
		requireGoexit(t, func() {
			p.Join(func(c *parallel.Ctx) {
				aWorker.Store(int64(c.WorkerIndex()))
				spinUntil(10*time.Second, bStarted.Load)
				time.Sleep(100 * time.Microsecond) // b exits meanwhile
				aDone.Store(true)
			}, func(c *parallel.Ctx) {
				bWorker.Store(int64(c.WorkerIndex()))
				bStarted.Store(true)
				runtime.Goexit()
			})
		})
		require.NotEqual(t, aWorker.Load(), bWorker.Load(), "b was not stolen")
		require.True(t, aDone.Load())
	}
	requireHealthy(t, p, 2)
}

func TestGoexitInScopeSpawnWaitsForTheOthers(t *testing.T) {
	p := newPool(t, 0)
	const n = 100
	var ran atomic.Int64
	requireGoexit(t, func() {
		p.Scope(func(s *parallel.Scope) {
			for i := range n {
				s.Spawn(func(*parallel.Ctx) {
					if i == n/2 {
						runtime.Goexit()
					}
					time.Sleep(10 * time.Microsecond)
					ran.Add(1)
				})
			}
		})
	})
	require.Equal(t, int64(n-1), ran.Load(), "Scope reported the Goexit before its other jobs finished")
	requireHealthy(t, p, p.Workers())
}

func TestGoexitInScopeBodyWaitsForItsJobs(t *testing.T) {
	for _, workers := range []int{1, 2} {
		p := newPool(t, workers)
		const n = 20
		var ran atomic.Int64
		requireGoexit(t, func() {
			p.Scope(func(s *parallel.Scope) {
				for range n {
					s.Spawn(func(*parallel.Ctx) {
						time.Sleep(10 * time.Microsecond)
						ran.Add(1)
					})
				}
				runtime.Goexit()
			})
		})
		require.Equalf(t, int64(n), ran.Load(), "%d workers: Scope reported the body's Goexit before its jobs finished", workers)
		requireHealthy(t, p, workers)
	}
}

func TestGoexitInRunFromOutside(t *testing.T) {
	p := newPool(t, 2)
	requireGoexit(t, func() { p.Run(goexit) })
	requireHealthy(t, p, 2)
}

func TestGoexitInRunFromAWorkerWithoutItsCtx(t *testing.T) {
	p := newPool(t, 2)
	var after atomic.Bool
	requireGoexit(t, func() {
		p.Run(func(*parallel.Ctx) {
			p.Run(goexit) // runs at once on this worker
			after.Store(true)
		})
	})
	require.False(t, after.Load(), "the job went on after Goexit")
	requireHealthy(t, p, 2)
}

func TestGoexitInLoopBodies(t *testing.T) {
	p := newPool(t, 0)
	const n = 10_000
	var ran atomic.Int64
	requireGoexit(t, func() {
		parallel.For(n, func(lo, hi int) {
			if lo <= n/3 && n/3 < hi {
				runtime.Goexit()
			}
			ran.Add(int64(hi - lo))
		}, parallel.On(p), parallel.Grain(10))
	})
	require.Equal(t, int64(n-10), ran.Load(), "every other piece runs before For reports the Goexit")

	requireGoexit(t, func() {
		parallel.Reduce(n, 0, func(lo, hi int) int {
			if lo <= 2*n/3 && 2*n/3 < hi {
				runtime.Goexit()
			}
			return hi - lo
		}, func(x, y int) int { return x + y }, parallel.On(p))
	})
	requireHealthy(t, p, p.Workers())
}

// The Goexit of a job 3 joins deep unwinds every level on its goroutine,
// each of which waits for its b.
func TestGoexitThreeJoinsDeep(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		p := newPool(t, workers)
		for range scale(50, 10) {
			var bDone [3]atomic.Bool
			b := func(i int) func(*parallel.Ctx) {
				return func(*parallel.Ctx) {
					time.Sleep(50 * time.Microsecond)
					bDone[i].Store(true)
				}
			}
			requireGoexit(t, func() {
				p.Run(func(c *parallel.Ctx) {
					c.Join(func(c *parallel.Ctx) {
						c.Join(func(c *parallel.Ctx) {
							c.Join(goexit, b(2))
						}, b(1))
					}, b(0))
				})
			})
			for i := range bDone {
				require.Truef(t, bDone[i].Load(), "%d workers: b at depth %d had not finished", workers, i)
			}
		}
		requireHealthy(t, p, workers)
	}
}

// A worker waiting for its stolen b runs a stolen job that calls Goexit: the
// Goexit unwinds the waiting job too, which still waits for its b.
func TestGoexitInJobRunWhileWaiting(t *testing.T) {
	p := newPool(t, 2)
	for range scale(20, 5) {
		var bStarted, bDone, yStarted atomic.Bool
		var xWorker, yWorker atomic.Int64
		requireGoexit(t, func() {
			p.Run(func(c *parallel.Ctx) {
				xWorker.Store(int64(c.WorkerIndex()))
				c.Join(func(*parallel.Ctx) {
					spinUntil(10*time.Second, bStarted.Load)
				}, func(c *parallel.Ctx) { // stolen
					defer bDone.Store(true)
					bStarted.Store(true)
					c.Join(func(*parallel.Ctx) {
						spinUntil(10*time.Second, yStarted.Load)
					}, func(c *parallel.Ctx) { // Y: stolen back by X's worker, waiting for b
						yWorker.Store(int64(c.WorkerIndex()))
						yStarted.Store(true)
						runtime.Goexit()
					})
				})
			})
		})
		require.Equal(t, xWorker.Load(), yWorker.Load(), "Y did not run on the waiting worker")
		require.True(t, bDone.Load(), "the waiting job reported its Goexit before its b finished")
	}
	requireHealthy(t, p, 2)
}

// Code that the unwinding runs (a b popped back, a scope's jobs) may call
// Goexit too; the unwinding resumes after it.
func TestGoexitDuringUnwinding(t *testing.T) {
	p := newPool(t, 1)
	requireGoexit(t, func() { p.Join(goexit, goexit) })

	var ran atomic.Int64
	requireGoexit(t, func() {
		p.Join(goexit, func(c *parallel.Ctx) {
			c.Join(func(*parallel.Ctx) { ran.Add(1) }, func(c *parallel.Ctx) {
				ran.Add(1)
				c.Join(goexit, func(*parallel.Ctx) { ran.Add(1) })
			})
		})
	})
	require.Equal(t, int64(3), ran.Load())

	ran.Store(0)
	requireGoexit(t, func() {
		p.Scope(func(s *parallel.Scope) {
			for range 5 {
				s.Spawn(func(*parallel.Ctx) {
					ran.Add(1)
					runtime.Goexit()
				})
			}
			runtime.Goexit()
		})
	})
	require.Equal(t, int64(5), ran.Load())
	requireHealthy(t, p, 1)
}

// A panic in deferred code during a Goexit, and a Goexit in deferred code
// during a panic, end the goroutine all the same: the job is reported as a
// Goexit.
func TestGoexitMixedWithPanics(t *testing.T) {
	p := newPool(t, 1)
	var bDone atomic.Bool
	requireGoexit(t, func() {
		p.Join(func(*parallel.Ctx) {
			defer func() { panic("late") }()
			runtime.Goexit()
		}, func(*parallel.Ctx) { bDone.Store(true) })
	})
	require.True(t, bDone.Load())
	requireGoexit(t, func() {
		p.Run(func(*parallel.Ctx) {
			defer runtime.Goexit()
			panic("superseded")
		})
	})
	// A plain panic is still a plain panic.
	require.Equal(t, "plain", panicValue(t, func() {
		p.Join(func(*parallel.Ctx) {}, func(*parallel.Ctx) { panic("plain") })
	}))
	requireHealthy(t, p, 1)
}

func TestGoexitPanicErrorMatchesErrGoexit(t *testing.T) {
	p := newPool(t, 1)
	pe := requireGoexit(t, func() { p.Run(goexit) })
	require.Same(t, parallel.ErrGoexit, pe.Value)
	require.True(t, errors.Is(pe, parallel.ErrGoexit))
	require.False(t, errors.Is(pe, parallel.ErrClosed))
	require.True(t, strings.HasPrefix(pe.Error(), "parallel: job panicked: parallel: a job called runtime.Goexit"))
	var target *parallel.PanicError
	require.ErrorAs(t, pe, &target)
}

func TestCloseAfterGoexit(t *testing.T) {
	p, err := parallel.NewPool(parallel.Config{Workers: 2})
	require.NoError(t, err)
	requireGoexit(t, func() { p.Run(goexit) })
	requireGoexit(t, func() { p.Join(goexit, goexit) })
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs after a Goexit")
	}
}

// Goexit over and over, in every kind of job, leaks no goroutine: each dying
// worker goroutine exits once its replacement runs.
func TestGoexitRepeatedly(t *testing.T) {
	base := runtime.NumGoroutine()
	p, err := parallel.NewPool(parallel.Config{Workers: 3})
	require.NoError(t, err)
	rounds := scale(200, 20)
	var ran atomic.Int64
	for i := range rounds {
		switch i % 5 {
		case 0:
			requireGoexit(t, func() { p.Run(goexit) })
		case 1:
			requireGoexit(t, func() { p.Join(goexit, func(*parallel.Ctx) { ran.Add(1) }) })
		case 2:
			requireGoexit(t, func() { p.Join(func(*parallel.Ctx) { ran.Add(1) }, goexit) })
		case 3:
			requireGoexit(t, func() {
				p.Scope(func(s *parallel.Scope) {
					s.Spawn(goexit)
					s.Spawn(func(*parallel.Ctx) { ran.Add(1) })
				})
			})
		case 4:
			requireGoexit(t, func() {
				parallel.For(1000, func(lo, _ int) {
					if lo == 0 {
						runtime.Goexit()
					}
				}, parallel.On(p), parallel.Grain(100))
			})
		}
	}
	require.Equal(t, int64(countCase(rounds, 1)+countCase(rounds, 2)+countCase(rounds, 3)), ran.Load())
	requireHealthy(t, p, 3)
	require.True(t, spinUntil(10*time.Second, func() bool { return runtime.NumGoroutine() <= base+3 }),
		"goroutines: %d, want at most %d (the pool's workers)", runtime.NumGoroutine(), base+3)
	p.Close()
	require.True(t, spinUntil(10*time.Second, func() bool { return runtime.NumGoroutine() <= base }),
		"goroutines after Close: %d, want at most %d", runtime.NumGoroutine(), base)
}

// countCase is how many i in [0, rounds) have i%5 == k.
func countCase(rounds, k int) int { return (rounds - k + 4) / 5 }

func TestGoexitRunNameMatches(t *testing.T) {
	require.True(t, parallel.RunFuncNameMatches(), "goexitPending looks for the wrong function name")
}
