package syncprim

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// TestMutexBlockingWaiterPassedOverOnce: a goroutine queued behind a held
// Mutex is woken by the unlock; if a locker barges in before it retries, it
// goes back to the front, and the next unlock hands it the lock: the lock
// stays locked (TryLock fails) until the waiter unlocks. Round after round,
// the waiter is passed over at most once.
func TestMutexBlockingWaiterPassedOverOnce(t *testing.T) {
	rounds := 200
	if testing.Short() {
		rounds = 20
	}
	var m Mutex
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The waiter's rounds: on next, lock (queueing behind the test, which
	// holds the mutex), report on got, unlock on release, report on
	// unlocked.
	next, got, release, unlocked := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	send := func(c chan struct{}) bool {
		select {
		case c <- struct{}{}:
			return true
		case <-ctx.Done():
			return false
		}
	}
	recv := func(c chan struct{}) bool {
		select {
		case <-c:
			return true
		case <-ctx.Done():
			return false
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for recv(next) {
			g, err := m.LockBlocking(ctx)
			if err != nil {
				return // the test reports the timeout
			}
			ok := send(got) && recv(release)
			g.Unlock()
			if !ok || !send(unlocked) {
				return
			}
		}
	}()
	defer func() {
		cancel()
		<-done
	}()
	barged := 0
	for round := range rounds {
		g, ok := m.TryLock()
		require.True(t, ok, "round %d: the mutex is not free", round)
		require.True(t, send(next), "round %d: the waiter is gone", round)
		if !waitUntil(t, "the waiter queued", func() bool { return m.waiters() == 1 }) {
			return
		}
		g.Unlock() // wakes the waiter
		g, ok = m.TryLock()
		if ok { // barged in before the waiter retried
			barged++
			if !waitUntil(t, "the waiter back at the front", func() bool { return m.waiters() == 1 }) {
				return
			}
			g.Unlock() // hands the lock to the waiter
			_, ok = m.TryLock()
			require.False(t, ok, "round %d: a locker got in after the hand-off", round)
		}
		require.True(t, recv(got), "round %d: the waiter never got the lock", round)
		require.True(t, send(release) && recv(unlocked), "round %d: the waiter did not unlock", round)
	}
	t.Logf("barged in before the woken waiter in %d of %d rounds", barged, rounds)
}

// TestMutexWaitersNotStarvedByBargers: tasks and goroutines lock and unlock
// a Mutex in tight loops, each relocking at once (the lock is almost
// always held, and free only between an unlock and the next lock), while a
// task and a goroutine each take it a number of times, queueing behind
// them. Both get every lock they ask for while the loops go on. The test
// logs the most locks the loops took while one of them waited.
func TestMutexWaitersNotStarvedByBargers(t *testing.T) {
	wants := 300
	if testing.Short() {
		wants = 30
	}
	sch := newScheduler(t, 2)
	var m Mutex
	var stop atomic.Bool
	// ctx ends every goroutine's wait when the watchdog below fires.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var others atomic.Int64 // locks taken by the loops; written under m
	var inside atomic.Int32
	critical := func() {
		if inside.Add(1) != 1 {
			t.Error("two holders inside the mutex")
		}
		inside.Add(-1)
	}
	// Two barging tasks: lock, count, unlock, again, until stop.
	loops := make([]scheduler.JoinHandle[struct{}], 2)
	for i := range loops {
		var f LockFuture
		waiting := false
		loops[i] = spawnFn(sch, func(cx *future.Context) bool {
			for {
				if stop.Load() {
					if waiting {
						f.Cancel() // queued, woken or handed the lock: pass it on
					}
					return true
				}
				if !waiting {
					f, waiting = *m.Lock(), true
				}
				g, ok := f.Poll(cx)
				if !ok {
					return false
				}
				waiting = false
				critical()
				others.Add(1)
				g.Unlock()
			}
		})
	}
	// Two barging goroutines.
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
				g, err := m.LockBlocking(ctx)
				if err != nil {
					return // the watchdog below reports it
				}
				critical()
				others.Add(1)
				g.Unlock()
			}
		})
	}
	// The waiters: a task and a goroutine, each taking the lock wants
	// times; maxPassed is the most locks the loops took during one wait.
	var maxPassed atomic.Int64
	record := func(before int64) {
		passed := others.Load() - before
		for {
			cur := maxPassed.Load()
			if passed <= cur || maxPassed.CompareAndSwap(cur, passed) {
				return
			}
		}
	}
	var taskDone atomic.Int64
	var f LockFuture
	var before int64
	waiting := false
	waiterTask := spawnFn(sch, func(cx *future.Context) bool {
		for taskDone.Load() < int64(wants) {
			if !waiting {
				f, waiting, before = *m.Lock(), true, others.Load()
			}
			g, ok := f.Poll(cx)
			if !ok {
				return false
			}
			waiting = false
			critical()
			record(before)
			g.Unlock()
			if taskDone.Add(1)%8 == 0 {
				cx.Yield() // let the loops run between the waiter's locks
				return false
			}
		}
		return true
	})
	var goroutineDone atomic.Int64
	wg.Go(func() {
		for goroutineDone.Load() < int64(wants) {
			before := others.Load()
			g, err := m.LockBlocking(ctx)
			if err != nil {
				return // the watchdog below reports it
			}
			critical()
			record(before)
			g.Unlock()
			goroutineDone.Add(1)
			time.Sleep(10 * time.Microsecond)
		}
	})
	for taskDone.Load() < int64(wants) || goroutineDone.Load() < int64(wants) {
		if ctx.Err() != nil {
			stop.Store(true)
			wg.Wait() // the goroutines' waits end with ctx
			t.Fatalf("starved: the task waiter took %d of %d locks, the goroutine %d of %d, while the loops took %d",
				taskDone.Load(), wants, goroutineDone.Load(), wants, others.Load())
		}
		time.Sleep(time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	waitAll(t, append(loops, waiterTask)...)
	require.Positive(t, others.Load(), "the loops never ran")
	t.Logf("loops took %d locks; the most they took during one wait of a waiter: %d", others.Load(), maxPassed.Load())
}

// TestMutexCancelStress: tasks and goroutines lock a Mutex while giving up
// at random: tasks cancel their future before polling it again (queued,
// woken to retry, or already handed the lock), goroutines lock with a
// deadline of a few microseconds. Nobody is ever inside together with
// another, every party finishes (a wake lost by a cancel would leave the
// others waiting), and at the end the mutex is unlocked with nobody queued
// and no flag left set.
func TestMutexCancelStress(t *testing.T) {
	iters := 20_000
	if testing.Short() {
		iters = 2_000
	}
	sch := newScheduler(t, 2)
	var m Mutex
	var inside atomic.Int32
	var locked, gaveUp atomic.Int64
	critical := func() {
		if inside.Add(1) != 1 {
			t.Error("two holders inside the mutex")
		}
		inside.Add(-1)
		locked.Add(1)
	}
	const tasks, goroutines = 3, 3
	hs := make([]scheduler.JoinHandle[struct{}], tasks)
	for i := range hs {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		var f LockFuture
		waiting := false
		n := 0
		hs[i] = spawnFn(sch, func(cx *future.Context) bool {
			for n < iters {
				if waiting && rng.IntN(4) == 0 {
					f.Cancel() // whatever state it is in
					waiting = false
					gaveUp.Add(1)
					n++
					continue
				}
				if !waiting {
					f, waiting = *m.Lock(), true
				}
				g, ok := f.Poll(cx)
				if !ok {
					return false
				}
				waiting = false
				critical()
				g.Unlock()
				n++
			}
			return true
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			for range iters {
				lctx, lcancel := context.WithTimeout(ctx, time.Duration(rng.IntN(20))*time.Microsecond)
				g, err := m.LockBlocking(lctx)
				lcancel()
				if err != nil {
					if ctx.Err() != nil {
						return // the watchdog: reported below
					}
					gaveUp.Add(1)
					continue
				}
				critical()
				g.Unlock()
			}
		})
	}
	wg.Wait()
	require.NoError(t, ctx.Err(), "the goroutines did not finish: a lost wakeup")
	waitAll(t, hs...)
	t.Logf("%d locks, %d given up", locked.Load(), gaveUp.Load())
	require.Equal(t, int64((tasks+goroutines)*iters), locked.Load()+gaveUp.Load())
	require.Equal(t, 0, m.waiters())
	require.Zero(t, m.state.Load()&(mLocked|mWaiters|mWoken|mHandoff), "flags left in the state word")
	g, ok := m.TryLock()
	require.True(t, ok)
	g.Unlock()
}
