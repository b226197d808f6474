package syncprim

import (
	"context"
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

// The wide tests put more waiters on a primitive than one waker.WakeList
// holds, so that a wake-all takes its overflow path (the waiters past the
// first waker.WakeListCap are woken under the primitive's lock), with
// goroutines and tasks mixed in one queue, and check that every waiter is
// released. A lost wakeup shows as a stall: the watchdog reports it and
// cancels the goroutines' contexts (the scheduler's shutdown cancels the
// tasks) instead of hanging until the test binary's timeout.

// wideWaiters is how many waiters a wide test queues: well past
// waker.WakeListCap.
const wideWaiters = 3*waker.WakeListCap + 4

// stallAfter is how long a wide test's progress may stand still before the
// watchdog reports a stall. It measures a lack of progress, not slowness:
// every step of every party resets it, so a loaded machine only makes the
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
	// steps counts every step of every party (an arrival, a release): the
	// watchdog's measure of progress. Any goroutine.
	steps atomic.Int64
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

// step records one step of progress. Any party calls it.
func (r *wide) step() { r.steps.Add(1) }

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
// cancels the goroutines' context) if neither measure nor the parties'
// steps move for stallAfter, and then returns false; report describes the
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
		if p := m + r.steps.Load(); p != last {
			last, moved = p, time.Now()
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

// TestBarrierWideRoundsReleaseEveryParty runs rounds of a Barrier with
// more parties than a WakeList holds, all goroutines or goroutines mixed
// with tasks: every party passes every round, in the right generation,
// with one leader per round. A goroutine released by a round's overflow
// wake (woken under the lock, before the round's generation is published)
// must not take its wake for a spurious one and stay blocked.
func TestBarrierWideRoundsReleaseEveryParty(t *testing.T) {
	rounds := 10
	if testing.Short() {
		rounds = 3
	}
	const parties = 100
	for _, tc := range []struct {
		name  string
		tasks int
	}{{"goroutines", 0}, {"mixed", 75}} {
		t.Run(tc.name, func(t *testing.T) {
			runBarrierWide(t, parties, tc.tasks, rounds)
		})
	}
}

// runBarrierWide is TestBarrierWideRoundsReleaseEveryParty with parties
// parties, tasks of them tasks.
func runBarrierWide(t *testing.T, parties, tasks, rounds int) {
	b := NewBarrier(parties)
	r := newWide(t)
	leaders := make([]atomic.Int32, rounds)
	passed := make([]atomic.Int32, rounds)
	at := make([]atomic.Int32, parties) // the round each party is in
	var finished atomic.Int64
	pass := func(party, round int, res BarrierResult) {
		if res.Generation != uint64(round) {
			t.Errorf("party %d, round %d: generation %d", party, round, res.Generation)
		}
		if res.Leader {
			leaders[round].Add(1)
		}
		passed[round].Add(1)
		at[party].Add(1)
		r.step()
	}
	for i, isTask := range kinds(parties, tasks) {
		if isTask {
			round, started := 0, false
			var f BarrierFuture
			r.task(func(cx *future.Context) bool {
				for round < rounds {
					if !started {
						f = *b.Wait()
						started = true
					}
					res, ok := f.Poll(cx)
					if !ok {
						return false
					}
					started = false
					pass(i, round, res)
					round++
				}
				finished.Add(1)
				return true
			})
			continue
		}
		r.goroutine(func(ctx context.Context) {
			for round := range rounds {
				res, err := b.WaitBlocking(ctx)
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("party %d, round %d: %v", i, round, err)
					}
					return
				}
				pass(i, round, res)
			}
			finished.Add(1)
		})
	}
	r.await("parties through every round", finished.Load, int64(parties), func() string {
		hist := map[int32]int{}
		for i := range at {
			hist[at[i].Load()]++
		}
		ps := make([]int32, rounds)
		for g := range passed {
			ps[g] = passed[g].Load()
		}
		return fmt.Sprintf("parties per round reached %v, passes per round %v, queued %d, generation %d",
			hist, ps, b.waiterCount(), b.gen.Load())
	})
	r.finish()
	if r.stalled.Load() {
		return
	}
	for g := range rounds {
		if n := leaders[g].Load(); n != 1 {
			t.Errorf("round %d: %d leaders", g, n)
		}
		if n := passed[g].Load(); n != int32(parties) {
			t.Errorf("round %d: %d passes, want %d", g, n, parties)
		}
	}
	if n := b.waiterCount(); n != 0 {
		t.Errorf("%d waiters left queued", n)
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

// TestNotifyWaitersWideReleasesEveryWaiter: NotifyWaiters releases every
// one of more waiters than a WakeList holds, round after round.
func TestNotifyWaitersWideReleasesEveryWaiter(t *testing.T) {
	forWideMixes(t, func(t *testing.T, isTask []bool) {
		rounds := wideRounds()
		var n Notify
		r := newWide(t)
		var released atomic.Int64
		for _, task := range isTask {
			if task {
				round, started := 0, false
				var f NotifiedFuture
				r.task(func(cx *future.Context) bool {
					for round < rounds {
						if !started {
							f = *n.Notified()
							started = true
						}
						if _, ok := f.Poll(cx); !ok {
							return false
						}
						started = false
						released.Add(1)
						round++
					}
					return true
				})
				continue
			}
			r.goroutine(func(ctx context.Context) {
				for range rounds {
					if err := n.NotifiedBlocking(ctx); err != nil {
						return // the watchdog gave up
					}
					released.Add(1)
				}
			})
		}
		report := func() string {
			return fmt.Sprintf("released %d, queued %d", released.Load(), n.waiterCount())
		}
		for k := range rounds {
			if !r.await("waiters queued", func() int64 { return int64(n.waiterCount()) }, wideWaiters, report) {
				break
			}
			n.NotifyWaiters()
			if !r.await("waiters released", released.Load, int64((k+1)*wideWaiters), report) {
				break
			}
		}
		r.finish()
	})
}

// TestSemaphoreWideReleaseAndClose: one Release of as many permits as there
// are waiters hands one to each of more waiters than a WakeList holds, round
// after round; Close fails every one of them with ErrClosed.
func TestSemaphoreWideReleaseAndClose(t *testing.T) {
	for _, closing := range []bool{false, true} {
		name := "release"
		if closing {
			name = "close"
		}
		t.Run(name, func(t *testing.T) {
			forWideMixes(t, func(t *testing.T, isTask []bool) {
				runSemaphoreWide(t, isTask, closing)
			})
		})
	}
}

// runSemaphoreWide is TestSemaphoreWideReleaseAndClose for one mix: each
// round uses its own Semaphore, released to (or closed on) its waiters.
func runSemaphoreWide(t *testing.T, isTask []bool, closing bool) {
	rounds := wideRounds()
	sems := make([]*Semaphore, rounds)
	for i := range sems {
		sems[i] = NewSemaphore(0)
	}
	want := error(nil)
	if closing {
		want = ErrClosed
	}
	r := newWide(t)
	var done atomic.Int64
	got := func(round int, err error) {
		if err != want {
			t.Errorf("round %d: acquire returned %v, want %v", round, err, want)
		}
		done.Add(1)
	}
	for _, task := range isTask {
		if task {
			round, started := 0, false
			var f AcquireFuture
			r.task(func(cx *future.Context) bool {
				for round < rounds {
					if !started {
						f = *sems[round].Acquire(1)
						started = true
					}
					err, ok := f.Poll(cx)
					if !ok {
						return false
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
				err := sems[round].AcquireBlocking(ctx, 1)
				if ctx.Err() != nil {
					return // the watchdog gave up
				}
				got(round, err)
			}
		})
	}
	for k, s := range sems {
		report := func() string {
			return fmt.Sprintf("round %d: done %d, queued %d, available %d", k, done.Load(), s.waiters(), s.Available())
		}
		if !r.await("acquirers queued", func() int64 { return int64(s.waiters()) }, wideWaiters, report) {
			break
		}
		if closing {
			s.Close()
		} else {
			s.Release(wideWaiters)
		}
		if !r.await("acquirers released", done.Load, int64((k+1)*wideWaiters), report) {
			break
		}
	}
	r.finish()
}

// TestRwLockWideWriterReleaseAdmitsEveryReader: a writer's Unlock (or
// Downgrade) admits every one of more queued readers than a WakeList holds,
// round after round.
func TestRwLockWideWriterReleaseAdmitsEveryReader(t *testing.T) {
	for _, downgrade := range []bool{false, true} {
		name := "unlock"
		if downgrade {
			name = "downgrade"
		}
		t.Run(name, func(t *testing.T) {
			forWideMixes(t, func(t *testing.T, isTask []bool) {
				runRwLockWide(t, isTask, downgrade)
			})
		})
	}
}

// runRwLockWide is TestRwLockWideWriterReleaseAdmitsEveryReader for one
// mix: the test goroutine write-locks, lets the readers queue, and unlocks
// or downgrades; each reader read-locks and unlocks once per round.
func runRwLockWide(t *testing.T, isTask []bool, downgrade bool) {
	rounds := wideRounds()
	var l RwLock
	r := newWide(t)
	var done atomic.Int64
	round0 := make([]chan struct{}, rounds) // closed when round k's writer holds the lock
	for i := range round0 {
		round0[i] = make(chan struct{})
	}
	for _, task := range isTask {
		if task {
			round, started := 0, false
			var f RLockFuture
			r.task(func(cx *future.Context) bool {
				for round < rounds {
					select {
					case <-round0[round]:
					default:
						// Not this round's turn yet: look again soon
						// (this test is about the release, not about
						// waking a task on a channel).
						cx.Waker().Wake()
						return false
					}
					if !started {
						f = *l.RLock()
						started = true
					}
					g, ok := f.Poll(cx)
					if !ok {
						return false
					}
					started = false
					g.Unlock()
					done.Add(1)
					round++
				}
				return true
			})
			continue
		}
		r.goroutine(func(ctx context.Context) {
			for round := range rounds {
				select {
				case <-round0[round]:
				case <-ctx.Done():
					return
				}
				g, err := l.RLockBlocking(ctx)
				if err != nil {
					return // the watchdog gave up
				}
				g.Unlock()
				done.Add(1)
			}
		})
	}
	for k := range rounds {
		w, err := l.LockBlocking(r.ctx)
		if err != nil {
			t.Errorf("round %d: write lock: %v", k, err)
			break
		}
		close(round0[k])
		report := func() string {
			return fmt.Sprintf("round %d: done %d, queued %d", k, done.Load(), l.waiters())
		}
		if !r.await("readers queued", func() int64 { return int64(l.waiters()) }, wideWaiters, report) {
			w.Unlock()
			break
		}
		if downgrade {
			w.Downgrade().Unlock()
		} else {
			w.Unlock()
		}
		if !r.await("readers admitted", done.Load, int64((k+1)*wideWaiters), report) {
			break
		}
	}
	r.finish()
}

// TestMutexWideEveryLockerGetsIn: more lockers than a WakeList holds queue
// behind a held Mutex; each gets it in turn, one at a time, round after
// round.
func TestMutexWideEveryLockerGetsIn(t *testing.T) {
	forWideMixes(t, func(t *testing.T, isTask []bool) {
		rounds := wideRounds()
		var m Mutex
		r := newWide(t)
		var done, inside atomic.Int64
		critical := func() {
			if inside.Add(1) != 1 {
				t.Error("two holders inside the mutex")
			}
			inside.Add(-1)
			done.Add(1)
		}
		turn := make([]chan struct{}, rounds) // closed when round k's holder has the lock
		for i := range turn {
			turn[i] = make(chan struct{})
		}
		for _, task := range isTask {
			if task {
				round, started := 0, false
				var f LockFuture
				r.task(func(cx *future.Context) bool {
					for round < rounds {
						select {
						case <-turn[round]:
						default:
							cx.Waker().Wake() // not this round's turn yet: look again soon
							return false
						}
						if !started {
							f = *m.Lock()
							started = true
						}
						g, ok := f.Poll(cx)
						if !ok {
							return false
						}
						started = false
						critical()
						g.Unlock()
						round++
					}
					return true
				})
				continue
			}
			r.goroutine(func(ctx context.Context) {
				for round := range rounds {
					select {
					case <-turn[round]:
					case <-ctx.Done():
						return
					}
					g, err := m.LockBlocking(ctx)
					if err != nil {
						return // the watchdog gave up
					}
					critical()
					g.Unlock()
				}
			})
		}
		for k := range rounds {
			g, err := m.LockBlocking(r.ctx)
			if err != nil {
				t.Errorf("round %d: lock: %v", k, err)
				break
			}
			close(turn[k])
			report := func() string {
				return fmt.Sprintf("round %d: done %d, queued %d", k, done.Load(), m.waiters())
			}
			if !r.await("lockers queued", func() int64 { return int64(m.waiters()) }, wideWaiters, report) {
				g.Unlock()
				break
			}
			g.Unlock()
			if !r.await("lockers through", done.Load, int64((k+1)*wideWaiters), report) {
				break
			}
		}
		r.finish()
	})
}

// TestOnceCellWidePublishWakesEveryWaiter: the value an initializer
// publishes reaches every one of more waiters than a WakeList holds, for a
// new cell each round.
func TestOnceCellWidePublishWakesEveryWaiter(t *testing.T) {
	forWideMixes(t, func(t *testing.T, isTask []bool) {
		rounds := wideRounds()
		cells := make([]OnceCell[int], rounds)
		owned := make([]chan struct{}, rounds) // closed once round k's owner holds the right
		for i := range owned {
			owned[i] = make(chan struct{})
		}
		r := newWide(t)
		var done atomic.Int64
		got := func(round int, v int, err error) {
			if err != nil || v != round+1 {
				t.Errorf("round %d: got (%d, %v), want (%d, nil)", round, v, err, round+1)
			}
			done.Add(1)
		}
		never := func() future.Future[future.Result[int]] {
			t.Error("a waiter's init was called")
			return future.Ready(future.Fail[int](ErrNilInit))
		}
		neverBlocking := func(context.Context) (int, error) {
			t.Error("a waiter's init was called")
			return 0, ErrNilInit
		}
		for _, task := range isTask {
			if task {
				round, started := 0, false
				var f InitFuture[int]
				r.task(func(cx *future.Context) bool {
					for round < rounds {
						select {
						case <-owned[round]:
						default:
							cx.Waker().Wake() // the owner has not the right yet: look again soon
							return false
						}
						if !started {
							f = *cells[round].GetOrInit(never)
							started = true
						}
						res, ok := f.Poll(cx)
						if !ok {
							return false
						}
						started = false
						got(round, res.Value, res.Err)
						round++
					}
					return true
				})
				continue
			}
			r.goroutine(func(ctx context.Context) {
				for round := range rounds {
					select {
					case <-owned[round]:
					case <-ctx.Done():
						return
					}
					v, err := cells[round].GetOrInitBlocking(ctx, neverBlocking)
					if ctx.Err() != nil {
						return // the watchdog gave up
					}
					got(round, v, err)
				}
			})
		}
		for k := range cells {
			c := &cells[k]
			release := make(chan struct{})
			owner := make(chan error, 1)
			go func() {
				_, err := c.GetOrInitBlocking(r.ctx, func(ctx context.Context) (int, error) {
					<-release
					return k + 1, nil
				})
				owner <- err
			}()
			for c.state.Load() != cellInitializing {
				time.Sleep(time.Millisecond)
			}
			close(owned[k])
			report := func() string {
				return fmt.Sprintf("round %d: done %d, queued %d", k, done.Load(), c.waiterCount())
			}
			ok := r.await("waiters queued", func() int64 { return int64(c.waiterCount()) }, wideWaiters, report)
			close(release)
			if err := <-owner; err != nil {
				t.Errorf("round %d: owner: %v", k, err)
			}
			if !ok || !r.await("waiters released", done.Load, int64((k+1)*wideWaiters), report) {
				break
			}
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
