package channels

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// The wide tests put more waiters on a channel than one waker.WakeList
// holds, so that a wake-all takes its overflow path (the waiters past the
// first waker.WakeListCap are woken under the channel's waiter lock), with
// goroutines and tasks mixed in one queue, and check that every waiter is
// released. Unbounded and the oneshot have one receiver at a time, so no
// wake of theirs wakes more than one waiter: they have no wide test. A lost wakeup shows as a stall: the watchdog reports it and
// cancels the goroutines' contexts (the scheduler's shutdown cancels the
// tasks) instead of hanging until the test binary's timeout.

// wideWaiters is how many waiters a wide test queues: well past
// waker.WakeListCap.
const wideWaiters = 3*waker.WakeListCap + 4

// stallAfter is how long a wide test's progress may stand still before the
// watchdog reports a stall. It measures a lack of progress, not slowness:
// every waiter that moves resets it, so a loaded machine only makes the
// test slower.
const stallAfter = 10 * time.Second

// wide runs the parties of a wide test, goroutines and tasks, and watches
// their progress.
type wide struct {
	t *testing.T
	// ctx is passed to the goroutines' blocking calls; cancelled by the
	// watchdog on a stall and by finish.
	ctx    context.Context
	cancel context.CancelFunc
	// s runs the task parties; made by the first task.
	s *scheduler.Scheduler
	// stalled is set by the watchdog when it gave up. Any goroutine.
	stalled atomic.Bool
	wg      sync.WaitGroup
	hs      []scheduler.JoinHandle[struct{}] // test goroutine only
}

// newWide starts a wide test.
func newWide(t *testing.T) *wide {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &wide{t: t, ctx: ctx, cancel: cancel}
}

// goroutine starts a goroutine party.
func (r *wide) goroutine(fn func(ctx context.Context)) {
	r.wg.Go(func() { fn(r.ctx) })
}

// task starts a task party: fn is its poll function, returning true when
// the task is done.
func (r *wide) task(fn func(cx *future.Context) bool) {
	if r.s == nil {
		r.s = newScheduler(r.t, 2)
	}
	r.hs = append(r.hs, spawnFn(r.s, fn))
}

// kinds returns which of n parties are tasks: the first tasks of them,
// shuffled (with a fixed seed), so that goroutines and tasks interleave in
// the queue and both land past the first WakeList batch.
func kinds(n, tasks int) []bool {
	isTask := make([]bool, n)
	for i := range tasks {
		isTask[i] = true
	}
	rng := rand.New(rand.NewPCG(uint64(n), uint64(tasks)))
	rng.Shuffle(n, func(i, j int) { isTask[i], isTask[j] = isTask[j], isTask[i] })
	return isTask
}

// await waits until measure reaches target. It reports a stall (and
// cancels the goroutines' context) if measure does not move for
// stallAfter, and then returns false; report describes the
// state for the failure message.
func (r *wide) await(what string, measure func() int64, target int64, report func() string) bool {
	r.t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	last, moved := int64(-1), time.Now()
	for {
		m := measure()
		if m >= target {
			return true
		}
		if m != last {
			last, moved = m, time.Now()
		} else if time.Since(moved) > stallAfter {
			r.stalled.Store(true)
			r.t.Errorf("stall: %s: %d of %d, no progress for %v; %s", what, m, target, stallAfter, report())
			r.cancel()
			return false
		}
		<-tick.C
	}
}

// finish cancels the context and waits for the goroutine parties (they
// return once their context is done) and, unless the test stalled, for the
// task parties; the scheduler's shutdown at cleanup cancels stuck tasks.
func (r *wide) finish() {
	r.t.Helper()
	r.cancel()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		r.t.Errorf("goroutine parties did not return within 30s of their context's cancel")
		return
	}
	if r.stalled.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, h := range r.hs {
		if _, err := h.Wait(ctx); err != nil {
			r.t.Errorf("task party %d: %v", i, err)
		}
	}
}

// wideRounds is how many rounds a wide test runs.
func wideRounds() int {
	if testing.Short() {
		return 3
	}
	return 10
}

// forWideMixes runs body for the two mixes of wideWaiters waiters: all
// goroutines, and half goroutines, half tasks (isTask[i] says which).
func forWideMixes(t *testing.T, body func(t *testing.T, isTask []bool)) {
	for _, tc := range []struct {
		name  string
		tasks int
	}{{"goroutines", 0}, {"mixed", wideWaiters / 2}} {
		t.Run(tc.name, func(t *testing.T) { body(t, kinds(wideWaiters, tc.tasks)) })
	}
}

// TestBoundedWideCloseWakesEveryWaiter: Close releases every one of more
// waiting receivers (on an empty channel) or senders (on a full one) than a
// WakeList holds, with ErrClosed; a new channel each round.
func TestBoundedWideCloseWakesEveryWaiter(t *testing.T) {
	for _, senders := range []bool{false, true} {
		name := "receivers"
		if senders {
			name = "senders"
		}
		t.Run(name, func(t *testing.T) {
			forWideMixes(t, func(t *testing.T, isTask []bool) {
				runBoundedWideClose(t, isTask, senders)
			})
		})
	}
}

// runBoundedWideClose is TestBoundedWideCloseWakesEveryWaiter for one mix.
func runBoundedWideClose(t *testing.T, isTask []bool, senders bool) {
	rounds := wideRounds()
	chans := make([]*Bounded[int], rounds)
	for i := range chans {
		chans[i] = NewBounded[int](1)
		if senders {
			if err := chans[i].TrySend(-1); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := newWide(t)
	var done atomic.Int64
	got := func(round int, err error) {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("round %d: %v, want ErrClosed", round, err)
		}
		done.Add(1)
	}
	for i, task := range isTask {
		if task {
			round, started := 0, false
			var sf SendFuture[int]
			var rf RecvFuture[int]
			r.task(func(cx *future.Context) bool {
				for round < rounds {
					var err error
					if senders {
						if !started {
							sf = *chans[round].Send(i)
							started = true
						}
						var ok bool
						if err, ok = sf.Poll(cx); !ok {
							return false
						}
					} else {
						if !started {
							rf = *chans[round].Recv()
							started = true
						}
						res, ok := rf.Poll(cx)
						if !ok {
							return false
						}
						err = res.Err
					}
					started = false
					got(round, err)
					round++
				}
				return true
			})
			continue
		}
		r.goroutine(func(ctx context.Context) {
			for round := range rounds {
				var err error
				if senders {
					err = chans[round].SendBlocking(ctx, i)
				} else {
					_, err = chans[round].RecvBlocking(ctx)
				}
				if ctx.Err() != nil {
					return // the watchdog gave up
				}
				got(round, err)
			}
		})
	}
	for k, c := range chans {
		queued := func() int64 {
			s, rc := c.waiters()
			return int64(s + rc)
		}
		report := func() string {
			s, rc := c.waiters()
			return fmt.Sprintf("round %d: done %d, queued senders %d, receivers %d", k, done.Load(), s, rc)
		}
		if !r.await("waiters queued", queued, wideWaiters, report) {
			break
		}
		c.Close()
		if !r.await("waiters released", done.Load, int64((k+1)*wideWaiters), report) {
			break
		}
	}
	r.finish()
}

// TestBroadcastWideSendWakesEveryReceiver: each Send reaches every one of
// more waiting receivers than a WakeList holds, round after round, and Close
// releases them all with ErrClosed.
func TestBroadcastWideSendWakesEveryReceiver(t *testing.T) {
	forWideMixes(t, func(t *testing.T, isTask []bool) {
		rounds := wideRounds()
		b := NewBroadcast[int](4)
		r := newWide(t)
		var received, closed atomic.Int64
		got := func(round int, v int, err error) bool {
			switch {
			case err == ErrClosed:
				if round != rounds {
					t.Errorf("closed after %d messages, want %d", round, rounds)
				}
				closed.Add(1)
				return true
			case err != nil:
				t.Errorf("message %d: %v", round, err)
				return true
			case v != round:
				t.Errorf("got %d, want %d", v, round)
			}
			received.Add(1)
			return false
		}
		for _, task := range isTask {
			rx := b.Subscribe()
			if task {
				round, started := 0, false
				var f BroadcastRecvFuture[int]
				r.task(func(cx *future.Context) bool {
					for {
						if !started {
							f = *rx.Recv()
							started = true
						}
						res, ok := f.Poll(cx)
						if !ok {
							return false
						}
						started = false
						if got(round, res.Value, res.Err) {
							return true
						}
						round++
					}
				})
				continue
			}
			r.goroutine(func(ctx context.Context) {
				for round := 0; ; round++ {
					v, err := rx.RecvBlocking(ctx)
					if ctx.Err() != nil {
						return // the watchdog gave up
					}
					if got(round, v, err) {
						return
					}
				}
			})
		}
		report := func() string {
			return fmt.Sprintf("received %d, closed %d, waiting %d", received.Load(), closed.Load(), b.waiters())
		}
		waiting := func() int64 { return int64(b.waiters()) }
		ok := true
		for k := range rounds {
			if ok = r.await("receivers waiting", waiting, wideWaiters, report); !ok {
				break
			}
			if _, err := b.Send(k); err != nil {
				t.Fatal(err)
			}
			if ok = r.await("message received", received.Load, int64((k+1)*wideWaiters), report); !ok {
				break
			}
		}
		if ok && r.await("receivers waiting", waiting, wideWaiters, report) {
			b.Close()
			r.await("receivers closed", closed.Load, wideWaiters, report)
		}
		r.finish()
	})
}

// TestWatchWideSendWakesEveryReceiver: each Send reaches every one of more
// receivers waiting for a change than a WakeList holds, round after round,
// and Close releases them all with ErrClosed.
func TestWatchWideSendWakesEveryReceiver(t *testing.T) {
	forWideMixes(t, func(t *testing.T, isTask []bool) {
		rounds := wideRounds()
		w := NewWatch(0)
		r := newWide(t)
		var changed, closed atomic.Int64
		got := func(round int, rx *WatchReceiver[int], err error) bool {
			switch {
			case err == ErrClosed:
				if round != rounds {
					t.Errorf("closed after %d changes, want %d", round, rounds)
				}
				closed.Add(1)
				return true
			case err != nil:
				t.Errorf("change %d: %v", round, err)
				return true
			}
			if v := rx.Borrow(); v != round+1 {
				t.Errorf("change %d: value %d, want %d", round, v, round+1)
			}
			changed.Add(1)
			return false
		}
		for _, task := range isTask {
			rx := w.Subscribe()
			if task {
				round, started := 0, false
				var f ChangedFuture[int]
				r.task(func(cx *future.Context) bool {
					for {
						if !started {
							f = *rx.Changed()
							started = true
						}
						err, ok := f.Poll(cx)
						if !ok {
							return false
						}
						started = false
						if got(round, rx, err) {
							return true
						}
						round++
					}
				})
				continue
			}
			r.goroutine(func(ctx context.Context) {
				for round := 0; ; round++ {
					err := rx.ChangedBlocking(ctx)
					if ctx.Err() != nil {
						return // the watchdog gave up
					}
					if got(round, rx, err) {
						return
					}
				}
			})
		}
		report := func() string {
			return fmt.Sprintf("changed %d, closed %d, waiting %d", changed.Load(), closed.Load(), w.waiters())
		}
		waiting := func() int64 { return int64(w.waiters()) }
		ok := true
		for k := range rounds {
			if ok = r.await("receivers waiting", waiting, wideWaiters, report); !ok {
				break
			}
			if err := w.Send(k + 1); err != nil {
				t.Fatal(err)
			}
			if ok = r.await("change seen", changed.Load, int64((k+1)*wideWaiters), report); !ok {
				break
			}
		}
		if ok && r.await("receivers waiting", waiting, wideWaiters, report) {
			w.Close()
			r.await("receivers closed", closed.Load, wideWaiters, report)
		}
		r.finish()
	})
}

// waitUntil polls cond every millisecond until it holds and reports true,
// or gives up after a generous bound (a minute: the machine may be loaded,
// and only a bug makes it that long), fails the test with what it waited
// for and reports false. Any goroutine may call it.
func waitUntil(t testing.TB, what string, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("gave up waiting for %s after a minute", what)
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
