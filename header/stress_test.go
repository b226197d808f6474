package header_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
)

// violations collects broken invariants seen by goroutines other than the
// test's own, which must not call t.FailNow.
type violations struct {
	mu   sync.Mutex
	msgs []string
}

func (v *violations) add(format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.msgs) < 20 {
		v.msgs = append(v.msgs, fmt.Sprintf(format, args...))
	}
}

func (v *violations) check(t *testing.T) {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	require.Empty(t, v.msgs)
}

// stressTask is a task whose future consumes events: pending counts events
// published and not yet consumed.
type stressTask struct {
	h         header.Header
	rq        *runQueue // where a wake queues the task
	id        int
	pending   atomic.Int64 // published, not consumed; the event source
	published atomic.Int64 // events ever published
	consumed  atomic.Int64 // events consumed by polls
	polls     atomic.Int64
	// seenAtStart is the largest value of published read at the start of a
	// poll: once it equals the total, a poll started after the last event.
	seenAtStart atomic.Int64
	// seenCh, under seenMu, is closed (and replaced by nil) when a poll
	// raises seenAtStart, for wakers waiting on it.
	seenMu  sync.Mutex
	seenCh  chan struct{}
	polling atomic.Bool // a poll is in progress
	queued  atomic.Bool // the header is in the run queue
	// need is how many events complete the future; 0 means never.
	need int64
	// yieldEvery, if positive, makes every yieldEvery-th poll yield after
	// reading its events.
	yieldEvery int64
	// shieldUntil, if positive, makes the first poll add a shield and the
	// poll that reaches shieldUntil consumed events remove it.
	shieldUntil int64
	shielded    atomic.Bool
	aborted     atomic.Int64
	finished    atomic.Int64 // polls that returned ready
	v           *violations
}

func (tk *stressTask) Poll(cx *future.Context) bool {
	if !tk.polling.CompareAndSwap(false, true) {
		tk.v.add("task %d: polled concurrently", tk.id)
	}
	defer tk.polling.Store(false)
	if tk.aborted.Load() != 0 {
		tk.v.add("task %d: polled after its abort", tk.id)
	}
	tk.polls.Add(1)
	if seen := tk.published.Load(); seen > tk.seenAtStart.Load() {
		tk.seenAtStart.Store(seen) // only the poller writes it
		tk.seenMu.Lock()
		if tk.seenCh != nil {
			close(tk.seenCh)
			tk.seenCh = nil
		}
		tk.seenMu.Unlock()
	}
	if tk.shieldUntil > 0 && tk.polls.Load() == 1 {
		if err := tk.h.AddShield(); err != nil {
			tk.v.add("task %d: AddShield: %v", tk.id, err)
		}
		tk.shielded.Store(true)
	}
	n := tk.consumed.Add(tk.pending.Swap(0))
	// The poll's work: yield, so that wakes land during the poll, after its
	// read of the events (the window of "The notified bit").
	if tk.yieldEvery > 0 && tk.polls.Load()%tk.yieldEvery == 0 {
		runtime.Gosched()
	}
	if tk.shielded.Load() && n >= tk.shieldUntil {
		tk.shielded.Store(false)
		effective, err := tk.h.RemoveShield()
		if err != nil {
			tk.v.add("task %d: RemoveShield: %v", tk.id, err)
		}
		// Cancellation is sticky and only the poller changes shields, so an
		// effective answer stays true; a false one may be overtaken by a
		// Cancel.
		if effective && !tk.h.Load().CancellationEffective() {
			tk.v.add("task %d: RemoveShield says effective=%v in %v", tk.id, effective, tk.h.Load())
		}
	}
	if tk.need > 0 && n >= tk.need {
		if tk.shielded.Load() {
			tk.v.add("task %d: completes with a shield", tk.id)
		}
		tk.finished.Add(1)
		return true
	}
	return false
}

// waitSeen blocks until a poll has started after event seq was published,
// or giveUp is closed; it reports which.
func (tk *stressTask) waitSeen(seq int64, giveUp <-chan struct{}) bool {
	for {
		tk.seenMu.Lock()
		if tk.seenAtStart.Load() >= seq {
			tk.seenMu.Unlock()
			return true
		}
		if tk.seenCh == nil {
			tk.seenCh = make(chan struct{})
		}
		ch := tk.seenCh
		tk.seenMu.Unlock()
		select {
		case <-ch:
		case <-giveUp:
			return false
		}
	}
}

// Scheduler returns the run queue that wakes push the task to.
func (tk *stressTask) Scheduler() header.Scheduler { return tk.rq }

func (tk *stressTask) Abort(err error) {
	if tk.shielded.Load() {
		tk.v.add("task %d: aborted inside a shield", tk.id)
	}
	if tk.aborted.Add(1) != 1 {
		tk.v.add("task %d: aborted twice", tk.id)
	}
	if !errors.Is(err, errCancelled) {
		tk.v.add("task %d: aborted with %v", tk.id, err)
	}
}

var errCancelled = errors.New("stress: cancelled")

// runQueue is the fake scheduler: one channel all workers pop from.
type runQueue struct {
	q        chan *header.Header
	enqueued atomic.Int64
	dequeued atomic.Int64
	// rescheduled counts IdleReschedule: wakes that landed during a poll.
	rescheduled atomic.Int64
	v           *violations
}

func newRunQueue(capacity int, v *violations) *runQueue {
	return &runQueue{q: make(chan *header.Header, capacity), v: v}
}

// Schedule pushes h. The queued flag must be clear: a task is in at most one
// queue, once.
func (rq *runQueue) Schedule(h *header.Header) {
	tk := h.Task().(*stressTask)
	if tk.queued.Swap(true) {
		rq.v.add("task %d: enqueued while queued (%v)", tk.id, h.Load())
	}
	rq.enqueued.Add(1)
	rq.q <- h
}

// runOne is one turn of the worker loop for a popped header; it reports
// whether the task completed.
func (rq *runQueue) runOne(h *header.Header, cx *future.Context) (completed bool) {
	tk := h.Task().(*stressTask)
	if !tk.queued.Swap(false) {
		rq.v.add("task %d: dequeued while not queued", tk.id)
	}
	rq.dequeued.Add(1)
	cx.Reset(h.Waker(), nil, tk, 0)
	abort := func() bool {
		tk.Abort(errCancelled)
		h.TransitionToComplete()
		return true
	}
	// Cancellation is sticky and only this worker's poll changes shields,
	// so an effective cancellation seen before a transition is still
	// effective when it runs, and the transition must act on it.
	before := h.Load()
	if h.TransitionToRunning() == header.RunAbort {
		return abort()
	}
	if before.CancellationEffective() {
		rq.v.add("task %d: polled though cancelled before TransitionToRunning (%v)", tk.id, before)
	}
	if tk.Poll(cx) {
		h.TransitionToComplete()
		return true
	}
	before = h.Load()
	res := h.TransitionToIdle()
	if res == header.IdleAbort {
		return abort()
	}
	if before.CancellationEffective() {
		rq.v.add("task %d: result %d though cancelled before TransitionToIdle (%v)", tk.id, res, before)
	}
	if res == header.IdleReschedule {
		rq.rescheduled.Add(1)
		rq.Schedule(h)
	}
	return false
}

// TestNoLostWakeupUnderConcurrentWakes runs the wake-during-poll protocol of
// the package doc ("The notified bit") with several workers sharing one run
// queue, several tasks, and wakers that publish an event and then wake. It
// checks that no wakeup is lost (after the wakers stop, every task drains all
// its events in a poll that started after the last one was published and
// ends Idle), that a task is never queued twice, and never polled by two
// workers at once.
func TestNoLostWakeupUnderConcurrentWakes(t *testing.T) {
	rounds := 1_000_000
	if testing.Short() {
		rounds = 10_000
	}
	const workers, wakers, tasks = 4, 8, 4
	var v violations
	rq := newRunQueue(2*tasks, &v) // room for a double push to be reported, not block
	tks := make([]*stressTask, tasks)
	for i := range tks {
		tks[i] = &stressTask{id: i, v: &v, yieldEvery: 1, rq: rq}
		tks[i].h.Init(tks[i], false)
	}

	stop := make(chan struct{})
	var workersWG sync.WaitGroup
	for range workers {
		workersWG.Go(func() {
			cx := future.NewContext(tks[0].h.Waker())
			for {
				select {
				case h := <-rq.q:
					if rq.runOne(h, cx) {
						v.add("task completed without a need")
					}
				case <-stop:
					return
				}
			}
		})
	}

	// Each waker round publishes an event, wakes, and waits until a poll of
	// that task has started after the publication. A wake lost in the
	// window between a poll's read of its events and the task going Idle
	// blocks its waker for good; the watchdog reports it when the polls
	// stop making progress for stallAfter.
	const stallAfter = 10 * time.Second
	giveUp := make(chan struct{})
	var wakersWG sync.WaitGroup
	for w := range wakers {
		wakersWG.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range rounds / wakers {
				tk := tks[r.IntN(tasks)]
				seq := tk.published.Add(1)
				tk.pending.Add(1) // publish, then wake
				tk.h.Wake()
				if !tk.waitSeen(seq, giveUp) {
					return
				}
			}
		})
	}
	wakersDone := make(chan struct{})
	go func() { wakersWG.Wait(); close(wakersDone) }()
	progress := func() (n int64) {
		for _, tk := range tks {
			n += tk.polls.Load()
		}
		return n
	}
	for last, lastAt := progress(), time.Now(); ; {
		select {
		case <-wakersDone:
		case <-time.After(100 * time.Millisecond):
			if n := progress(); n != last {
				last, lastAt = n, time.Now()
				continue
			}
			if time.Since(lastAt) < stallAfter {
				continue
			}
			for _, tk := range tks {
				if tk.seenAtStart.Load() < tk.published.Load() {
					v.add("lost wakeup: task %d: events up to %d published, polls started after %d only (%v)",
						tk.id, tk.published.Load(), tk.seenAtStart.Load(), tk.h.Load())
				}
			}
			close(giveUp)
			<-wakersDone
			close(stop)
			workersWG.Wait()
			v.check(t)
			require.FailNow(t, "wakers stalled without a lost wakeup")
		}
		break
	}

	ok := assert.Eventually(t, func() bool {
		for _, tk := range tks {
			if tk.consumed.Load() != tk.published.Load() || tk.seenAtStart.Load() != tk.published.Load() ||
				tk.h.Load().Lifecycle() != header.Idle {
				return false
			}
		}
		return true
	}, 30*time.Second, time.Millisecond, "lost wakeup: some task has events no poll saw")
	close(stop)
	workersWG.Wait()
	v.check(t)
	require.True(t, ok)

	var total, polls int64
	for _, tk := range tks {
		s := tk.h.Load()
		assert.Equal(t, header.Idle, s.Lifecycle(), "task %d", tk.id)
		assert.False(t, s.Notified(), "task %d", tk.id)
		assert.Zero(t, tk.pending.Load(), "task %d", tk.id)
		assert.False(t, tk.queued.Load(), "task %d", tk.id)
		total += tk.published.Load()
		polls += tk.polls.Load()
	}
	assert.Equal(t, int64(rounds/wakers*wakers), total)
	assert.Equal(t, rq.enqueued.Load(), rq.dequeued.Load(), "every push popped once")
	assert.Equal(t, polls, rq.dequeued.Load(), "one poll per pop")
	assert.Empty(t, rq.q)
	t.Logf("%d events, %d polls, %d enqueues, %d of them after a wake during the poll",
		total, polls, rq.enqueued.Load(), rq.rescheduled.Load())
}

// TestCancelRacingWakesAndPolls cancels a task at a random moment while
// wakers wake it and workers poll it; on some iterations the task holds a
// shield across part of its life. The task must be aborted at most once,
// never polled after its abort nor aborted inside its shield, and complete
// exactly once (by its abort or by its future finishing).
func TestCancelRacingWakesAndPolls(t *testing.T) {
	iters := 2000
	if testing.Short() {
		iters = 200
	}
	var results [4]int // by CancelResult
	var abortedRuns int
	for i := range iters {
		var v violations
		rq := newRunQueue(2, &v) // room for a double push to be reported, not block
		const events = 64
		tk := &stressTask{v: &v, need: events, yieldEvery: 2, rq: rq}
		if i%3 == 0 {
			tk.shieldUntil = events / 2
		}
		tk.h.Init(tk, true)
		require.Equal(t, header.ScheduleEnqueue, tk.h.TransitionToScheduled())
		rq.Schedule(&tk.h) // spawn

		done := make(chan struct{})
		var completions atomic.Int64
		var wg sync.WaitGroup
		for range 2 { // workers
			wg.Go(func() {
				cx := future.NewContext(tk.h.Waker())
				for {
					select {
					case h := <-rq.q:
						if rq.runOne(h, cx) && completions.Add(1) == 1 {
							close(done)
						}
					case <-done:
						return
					}
				}
			})
		}
		for range 2 { // wakers
			wg.Go(func() {
				for range events / 2 {
					tk.published.Add(1)
					tk.pending.Add(1)
					tk.h.Wake()
					if rand.IntN(4) == 0 {
						runtime.Gosched() // let the task go Idle sometimes
					}
				}
			})
		}
		var res header.CancelResult
		wg.Go(func() { // canceller: after k events, or after completion
			if k := int64(rand.IntN(events + events/8)); k < events {
				for tk.published.Load() < k {
					if tk.polls.Load()%2 == 0 {
						runtime.Gosched()
					}
				}
			} else {
				<-done
			}
			res = tk.h.Cancel()
			if res == header.CancelEnqueue {
				rq.Schedule(&tk.h)
			}
		})
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			require.FailNow(t, "task never completed", "iteration %d: %v", i, tk.h.Load())
		}
		wg.Wait()
		v.check(t)

		s := tk.h.Load()
		require.Equal(t, int64(1), completions.Load(), "completes exactly once")
		require.Equal(t, header.Complete, s.Lifecycle())
		require.Equal(t, int64(1), tk.aborted.Load()+tk.finished.Load(), "aborted or finished, not both: %v", s)
		require.True(t, s.Cancelled() || res == header.CancelNoop, "%v after %v", s, res)
		if tk.aborted.Load() == 1 {
			abortedRuns++
			require.True(t, s.Cancelled())
		}
		require.Empty(t, rq.q)
		require.Equal(t, rq.enqueued.Load(), rq.dequeued.Load())
		require.Equal(t, header.CancelNoop, tk.h.Cancel(), "cancel after completion")
		require.Equal(t, header.ScheduleComplete, tk.h.TransitionToScheduled(), "wake after completion")
		results[res]++
	}
	t.Logf("cancel results: enqueue %d, deferred %d, noop %d; aborted %d of %d",
		results[header.CancelEnqueue], results[header.CancelDeferred], results[header.CancelNoop], abortedRuns, iters)
}
