package scheduler

import (
	"context"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/idle"
	"github.com/blitz-go/blitz/waker"
	"github.com/blitz-go/blitz/wsqueue"
)

// worker is one worker goroutine's state. Every field is owned by the
// worker's goroutine (and, after it exited, by the shutdown goroutine, which
// the WaitGroup hands it to), except stealer, which other workers use, and
// the published stats, which Stats reads.
type worker struct {
	_  pad
	id int
	s  *Scheduler
	// local is the owner end of the local queue; stealer its thieves' end,
	// used by the other workers (the pointer is immutable).
	local   *wsqueue.Owner[header.Header]
	stealer *wsqueue.Stealer[header.Header]
	// lifo holds the tasks woken or spawned by this worker's polls, newest
	// last; lifoLen of them are set, and at most lifoCap (Config.LIFO: 1
	// for the slot, 4 for the stack, 0 for LIFOOff). Not visible to
	// thieves; lifoPub publishes its tasks never polled to the snapshots.
	// It lives in the worker, between its pads, rather than in a slice of
	// its own: two workers' 32-byte slices were allocated side by side,
	// and every LIFO push of one invalidated the other's cache line.
	lifo    [LIFOStack]*header.Header
	lifoLen int
	lifoCap int
	// lifoPolls counts the polls taken from the LIFO since the last task
	// taken from a queue (a LIFO "tick", as Tokio counts it).
	lifoPolls int
	// batch receives a global-queue batch pop before it goes to the local
	// queue (see the package doc, "The global batch").
	batch [GlobalBatchSize]*header.Header
	// untilGlobal counts down the polls until the next periodic look at
	// the global queue (a countdown rather than a poll count modulo the
	// interval, whose division would cost a few nanoseconds of each poll).
	untilGlobal uint32
	// interval is the adaptive number of polls between two looks at the
	// global queue; avgPollNs the EWMA of a poll's duration it comes from.
	interval  uint32
	avgPollNs float64
	// rng picks steal victims; its source is pcg, kept in the worker for
	// the same reason as lifo.
	rng *rand.Rand
	pcg rand.PCG
	// searching is true while the idle State counts this worker as a
	// searcher.
	searching bool
	// parking is the transitioning-to-park flag: set from the moment
	// the worker announces itself parked until it is running again. While it
	// is set, scheduleLocal sends tasks to the global queue instead of the
	// LIFO slot, which nobody else can see (the driver's maintenance before
	// a park wakes tasks through this worker's Context).
	parking bool
	// cx is the Context of every poll this worker makes, reset per poll.
	// With task identity, its wait and site recorder are the worker
	// itself (RecordWait, RecordSite), set once: they find the polled
	// task in cx.
	cx future.Context
	// budget is the cooperative budget of each task poll: reset before the
	// poll and handed to it through cx (see the future package, "The
	// cooperative budget"); after the poll, budget.Yielded tells runTask
	// to defer the task.
	budget future.Budget
	// deferred holds the tasks that yielded (a Yield, or a spent budget)
	// in this tick, oldest first: they run again only after the worker has
	// run out of other tasks and has run the driver (see the package doc,
	// "Yielded tasks"). Not visible to thieves, so the worker moves them
	// to the local queue whenever it runs out of other tasks, and after
	// every tick. Owned by the worker's goroutine.
	deferred []*header.Header
	// nextID and endID delimit the ids this worker reserved (newID): it
	// hands out nextID+1 to endID.
	nextID, endID uint64
	// clock is the worker's coarse clock, nanoseconds since the
	// scheduler's epoch, and clockMs the same in milliseconds (wrapping):
	// the start of the current tick, or of the current poll with
	// Config.PollTiming (setClock).
	clock   int64
	clockMs uint32
	// busySince is the clock of the first tick after the worker's last
	// park (-1 until that tick), and sysmonWoken says wakeSysmon ran
	// since then: see noteBusy. Owned by the worker's goroutine.
	busySince   int64
	sysmonWoken bool
	// identity, observe and traceable are the Config switches as the
	// poll needs them: the bookkeeping of Dump; a poll measured or
	// labelled; polls traced while the tracer runs. Immutable.
	identity, observe, traceable bool
	// plainSpawn says a spawn by this worker's polls needs no side record
	// for its identity (identity on, Config.SpawnSites off): identify's
	// inlined path. Immutable.
	plainSpawn bool
	// tracing is the task whose poll is a trace region now, and endTrace
	// the tracer's task of a task that finished in that poll, to end once
	// the region has (see taskBase.endTrace).
	tracing  *taskBase
	endTrace *trace.Task
	// pollHist is the histogram of this worker's poll durations and
	// schedHist that of the delays from a wake to the poll it led to, with
	// Config.PollTiming; published to pub with ctr.
	pollHist, schedHist histo
	// ctr counts this worker's work; published to pub at each tick's end.
	ctr counters
	pub publishedCounters
	// parks is the worker's parked time, for Stats (see parkClock).
	parks parkClock
	// tickAt is when the tick in progress began (nanoseconds since the
	// epoch), -1 between ticks: stored by the worker at each tick's start
	// and end, loaded by LongPolls and Stats.
	tickAt atomic.Int64
	// pollAt, pollID and pollExt are the poll in progress, with
	// Config.PollTiming: when it began (-1 between polls), its task's id
	// and side record. Stored by the worker around each poll it times,
	// loaded by LongPolls and Tasks (see pollInProgress).
	pollAt  atomic.Int64
	pollID  atomic.Uint64
	pollExt atomic.Pointer[taskExt]
	// answered is the last snapshot request this worker answered or
	// found settled (checkSnapshot), and scratch holds its local queue's
	// tasks while it copies them (answerSnapshot). Owned by the worker.
	answered *snapRequest
	scratch  []*header.Header
	// firstPoll publishes the task in its first poll on this worker, for
	// the snapshots it does not answer (see firstpoll.go). Written by the
	// worker.
	firstPoll firstPollPub
	// lifoPub publishes the tasks never polled in lifo, for the same
	// snapshots (see lifopub.go). Written by the worker.
	lifoPub lifoPub
	// labels are the worker goroutine's pprof labels (blitz.worker, its
	// index, and blitz.scheduler), by which a goroutine profile finds its
	// stack; a labelled poll (Config.ProfileLabels) restores them after
	// the poll. Immutable.
	labels context.Context
	_      pad
}

// newWorker builds worker id of s.
func newWorker(s *Scheduler, id int) *worker {
	w := &worker{id: id, s: s, interval: DefaultGlobalInterval}
	w.parks.since.Store(-1) // not parked
	w.tickAt.Store(-1)
	w.pollAt.Store(-1)
	w.labels = pprof.WithLabels(context.Background(), pprof.Labels("blitz.worker", strconv.Itoa(id), "blitz.scheduler", s.label))
	w.local, w.stealer = wsqueue.New[header.Header]()
	w.lifoCap = max(s.cfg.LIFO, 0) // LIFOOff: no room
	w.pcg.Seed(rand.Uint64(), uint64(id))
	w.rng = rand.New(&w.pcg)
	w.avgPollNs = float64(targetGlobalLatency.Nanoseconds()) / DefaultGlobalInterval
	w.cx.Reset(waker.Waker{}, nil, nil, future.NoWorker)
	w.identity = !s.cfg.NoTaskIdentity
	w.plainSpawn = w.identity && !s.cfg.SpawnSites
	if w.identity {
		// Once for the worker's life (Reset keeps them): a recorder set
		// per poll would cost two write barriers a poll while the GC
		// marks.
		w.cx.SetWaitRecorder(w)
		w.cx.SetSiteRecorder(w)
	}
	w.observe = s.cfg.PollTiming || s.cfg.ProfileLabels
	w.traceable = !s.cfg.NoTraceRegions
	w.setClock(time.Now())
	w.busySince = -1
	return w
}

// run is the worker goroutine: ticks of up to BudgetPerTick polls, the driver
// between ticks, then the tasks the tick deferred back to the local queue,
// and a park when a tick found nothing to do (a tick that deferred a task
// ran it, so it does not park).
//
//go:noinline
func (w *worker) run() {
	defer w.s.wg.Done()
	if workerReturn.Load() == 0 { // stored once, by noteWorkerReturn
		noteWorkerReturn()
	}
	if w.s.cfg.LockOSThreads {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	mayspin := false // a tick ran tasks since the last spin
	// looked says the spin has just run the driver and found work: the
	// next tick runs that work before the driver runs again. Another run
	// of it first would find, microseconds later, next to nothing, and
	// on epoll each run is a system call.
	looked := false
	for !w.s.closing.Load() {
		if !looked {
			w.maintain()
		}
		looked = false
		w.flushDeferred()
		if w.tick() > 0 {
			mayspin = true
			continue
		}
		if mayspin {
			mayspin = false
			if w.spin() {
				looked = true
				continue
			}
		}
		if !w.park() {
			break
		}
	}
	w.publish()
}

// spin looks for work for up to Config.IdleSpin before the worker parks:
// it runs the driver (its completions and timers wake tasks into this
// worker's queues) and looks at every queue, giving the thread to other
// goroutines between two looks (runtime.Gosched: a net/http Handler's
// goroutine, the blocking pool). It reports whether work turned up. The
// spin counts as parked time (parks), and a snapshot skips the worker
// while it spins as while it parks: no task is polled meanwhile, so its
// queues receive only tasks polled before, which the owned list lists.
// Called on the worker's goroutine after a tick that found nothing.
func (w *worker) spin() bool {
	window := w.s.cfg.IdleSpin
	if window <= 0 {
		return false
	}
	w.ctr.spins++
	w.parks.begin(w.s)
	defer w.parks.end(w.s)
	w.checkSnapshot()
	deadline := w.s.now() + window.Nanoseconds()
	for {
		w.maintain()
		if w.s.closing.Load() {
			return true // run's loop ends
		}
		// The deferred list is empty (the tick that found nothing ran no
		// task), and hasWork looks at this worker's local queue too.
		if w.lifoLen > 0 || w.s.hasWork() {
			w.ctr.spinHits++
			return true
		}
		if w.s.now() >= deadline {
			return false
		}
		runtime.Gosched()
	}
}

// flushDeferred moves the deferred tasks, oldest first, to the back of the
// local queue, where thieves see them. It notifies an idle worker only when
// this worker now holds more than the one task it runs next: a task
// yielding alone on its worker would otherwise wake an idle worker at every
// yield, to find nothing or to steal the yielder.
func (w *worker) flushDeferred() {
	if len(w.deferred) == 0 {
		return
	}
	w.local.PushBatch(w.deferred, &w.s.global) // one tail store for the lot, not one per task
	clear(w.deferred)
	w.deferred = w.deferred[:0]
	if w.local.Len()+w.lifoLen > 1 {
		w.s.idle.NotifyOne()
	}
}

// maintain runs the driver, if any, and returns its answer (see
// Driver.Maintain), or a negative duration without a driver.
func (w *worker) maintain() time.Duration {
	d := w.s.cfg.Driver
	if d == nil {
		return -1
	}
	w.cx.Reset(waker.Waker{}, w.s, nil, w.id)
	return d.Maintain(&w.cx)
}

// tick runs up to BudgetPerTick tasks and returns how many it ran. When the
// worker's own sources are empty but a task was deferred (it yielded), the
// tick runs the driver and then moves the deferred tasks to the local
// queue, before any stealing (the package doc, "Yielded tasks"); it does
// so without ending, which would cost two clock reads and a publication of
// the counters at every yield of a task alone on its worker.
func (w *worker) tick() int {
	start := time.Now()
	w.setClock(start)
	w.tickAt.Store(w.clock) // tickAt: loaded by LongPolls
	w.noteBusy()
	ran := 0
	for ran < BudgetPerTick && !w.s.closing.Load() {
		w.checkSnapshot()
		h := w.next()
		if h == nil {
			if len(w.deferred) > 0 {
				w.maintain()
				w.flushDeferred()
				continue
			}
			if h = w.search(); h == nil {
				break
			}
		}
		w.runTask(h)
		ran++
	}
	if ran > 0 {
		w.adapt(ran, time.Since(start))
	}
	if w.firstPoll.id != 0 {
		w.firstPoll.clear() // the tick's last first poll ended
	}
	w.tickAt.Store(-1)
	w.publish()
	return ran
}

// sysmonAfter is how long a worker works without parking before it makes
// sure that Go's sysmon is awake (noteBusy): Go's own period for
// preempting a goroutine and for polling the network when every P is busy.
const sysmonAfter = 10 * time.Millisecond

// noteBusy wakes Go's sysmon once in a spell of work that has lasted
// sysmonAfter since the worker's last park (the package doc, "Go's
// sysmon"). Called by tick, after it set the clock.
func (w *worker) noteBusy() {
	switch {
	case w.busySince < 0:
		w.busySince = w.clock
	case !w.sysmonWoken && w.clock-w.busySince >= int64(sysmonAfter):
		w.sysmonWoken = true
		wakeSysmon()
	}
}

// next finds work in the worker's own sources, in this order (the package
// doc, "Work-finding order"): the global queue when its interval is due,
// the LIFO slot (at most MaxLIFOPollsPerTick times in a row), the local
// queue, and the global queue when all of those are empty.
func (w *worker) next() *header.Header {
	if w.untilGlobal == 0 {
		w.untilGlobal = w.interval
		if h := w.fetchGlobal(); h != nil {
			w.lifoPolls = 0
			return h
		}
	}
	if w.lifoLen > 0 {
		if w.lifoPolls < MaxLIFOPollsPerTick {
			w.lifoLen--
			h := w.lifo[w.lifoLen]
			w.lifo[w.lifoLen] = nil
			w.lifoPub.clear(w.lifoLen)
			w.lifoPolls++
			w.ctr.lifoHits++
			return h
		}
		w.flushLIFO()
	}
	w.lifoPolls = 0
	if h := w.local.Pop(); h != nil {
		return h
	}
	return w.fetchGlobal()
}

// flushLIFO moves the LIFO tasks, oldest first, to the local queue, where
// the FIFO order and the thieves see them. It notifies nobody: this worker
// pops them next (as Tokio, which does not notify for a LIFO task pushed back
// at the cap either).
func (w *worker) flushLIFO() {
	for i := 0; i < w.lifoLen; i++ {
		w.local.Push(w.lifo[i], &w.s.global)
		w.lifo[i] = nil
	}
	w.lifoPub.clearAll(w.lifoLen)
	w.lifoLen = 0
}

// fetchGlobal pops a fair-share batch from the global queue, keeps the first
// task and pushes the rest to the local queue (see the package doc, "The
// global batch").
func (w *worker) fetchGlobal() *header.Header {
	if w.s.global.IsEmpty() {
		return nil
	}
	room := min(w.local.Free()+1, GlobalBatchSize)
	n := w.s.global.PopBatch(w.batch[:room], len(w.s.workers))
	if n == 0 {
		return nil
	}
	w.ctr.globalBatches++
	h := w.batch[0]
	if n > 1 {
		w.local.PushBatch(w.batch[1:n], &w.s.global)
		w.s.idle.NotifyOne()
	}
	clear(w.batch[:n])
	return h
}

// search is the searcher's part of finding work: become a searcher (unless
// half the workers already are), steal half of a random victim's local
// queue, then look at the global queue a last time.
func (w *worker) search() *header.Header {
	if !w.searching {
		if !w.s.idle.TryBecomeSearcher() {
			return nil
		}
		w.searching = true
	}
	if h := w.steal(); h != nil {
		return h
	}
	return w.fetchGlobal()
}

// steal tries every other worker once, starting at a random one, and takes
// half of the first non-empty local queue.
func (w *worker) steal() *header.Header {
	n := len(w.s.workers)
	if n == 1 {
		return nil
	}
	start := w.rng.IntN(n)
	for i := range n {
		v := w.s.workers[(start+i)%n]
		if v == w || v.stealer.IsEmpty() {
			continue
		}
		before := w.local.Len()
		if h := v.stealer.StealInto(w.local); h != nil {
			w.ctr.steals++
			w.ctr.stolen += uint64(w.local.Len()-before) + 1
			return h
		}
	}
	return nil
}

// runTask polls h once, or aborts it if it was cancelled, and files it
// according to the outcome.
func (w *worker) runTask(h *header.Header) {
	if w.searching {
		// The searchers' chain: the last searcher to find work wakes
		// another (see the idle package).
		w.searching = false
		w.s.idle.TransitionFromSearching()
	}
	if w.untilGlobal > 0 {
		w.untilGlobal--
	}
	w.ctr.polled++
	if h.TransitionToRunning() == header.RunAbort {
		h.Task().Abort(ErrCancelled)
		return
	}
	// The Context keeps this task's values after the poll (clearing them
	// costs 4% of a yield); a future must not keep it (see future.Context),
	// and the next poll or Driver run resets it.
	w.cx.Reset(h.Waker(), w.s, h, w.id)
	w.budget.Reset()
	w.cx.SetBudget(&w.budget)
	t := taskOf(h)
	var seq uint8
	if w.identity {
		switch low := h.Load().Polls(); {
		case low != 1 && w.firstPoll.id == 0:
			seq = t.notePoll(w, low) // neither a first poll nor after one
		case low == 1 && t.run.Load() == 0 && t.ext.Load() == nil && !w.firstPoll.hasExt:
			// The common first poll (of a task without a side record):
			// notePollFirst's work, inlined. run, ext: only this worker
			// writes them now.
			if t.born == 0 {
				t.born = w.clock // spawned from outside: see notePollFirst
			}
			w.firstPoll.publishID(t.id)
			seq = 1
		default:
			seq = t.notePollFirst(w, low)
		}
		w.cx.SetWaitSeq(seq) // the waits go to t.wait (RecordWait)
		w.cx.SetTaskID(t.id)
	}
	var done bool
	if w.observing() {
		done = w.pollObserved(h, t)
	} else {
		done = h.Task().Poll(&w.cx)
	}
	if done {
		return
	}
	if w.budget.Yielded() {
		// A yield (or a spent budget), which may have woken nothing
		// (future.Context.Yield): after everything else this worker can
		// run, and after the driver.
		if h.TransitionToYielded() == header.IdleAbort {
			h.Task().Abort(ErrCancelled)
			return
		}
		w.deferred = append(w.deferred, h)
		return
	}
	if w.identity && !w.budget.WakerTaken() {
		// Pending without taking its Waker: nothing this poll registered
		// can wake it (a lost wake-up, unless an earlier poll's Waker
		// will). Recorded as its wait, for the dump's warning.
		t.wait.Store(future.MakeWait(waitNoWaker, seq, 0))
	}
	switch h.TransitionToIdle() {
	case header.IdleReschedule:
		// Woken during its own poll by a wake from elsewhere: to the
		// back of the local queue, not the LIFO slot, so that it goes
		// after the tasks already waiting.
		if w.identity {
			t.extOrNew().wokenInPoll.Add(1) // wokenInPoll: loaded by Dump
		}
		if w.s.cfg.PollTiming {
			w.s.noteScheduled(h)
		}
		w.local.Push(h, &w.s.global)
		w.s.idle.NotifyOne()
	case header.IdleAbort:
		h.Task().Abort(ErrCancelled)
	}
}

// scheduleLocal queues h, just moved to Scheduled by a poll on this worker,
// in the LIFO: the newest task runs next. A full LIFO sends its oldest task
// to the local queue; with LIFOOff, h goes there. While the worker is
// transitioning to park, h goes to the global queue instead (the package
// doc, "The transitioning-to-park flag"). Called only on the worker's
// goroutine.
func (w *worker) scheduleLocal(h *header.Header) {
	if w.parking {
		w.s.Schedule(h)
		return
	}
	if w.lifoLen == w.lifoCap {
		h = w.makeLIFORoom(h)
		if h == nil {
			return
		}
	}
	w.lifo[w.lifoLen] = h
	w.lifoLen++
}

// makeLIFORoom makes room for h in the full LIFO: its oldest task goes to
// the local queue, and it returns h for the LIFO. With LIFOOff, which has
// no room, h goes to the local queue, and it returns nil. Out of
// scheduleLocal, whose common path stays short.
//
//go:noinline
func (w *worker) makeLIFORoom(h *header.Header) *header.Header {
	if w.lifoCap == 0 {
		w.pushLocal(h)
		return nil
	}
	oldest := w.lifo[0]
	copy(w.lifo[:w.lifoCap], w.lifo[1:w.lifoCap])
	w.lifoPub.shiftDown(w.lifoCap)
	w.lifoLen--
	w.pushLocal(oldest)
	return h
}

// pushLocal queues h at the back of the local queue and notifies an idle
// worker, which may steal it while this worker's poll goes on. Called
// only on the worker's goroutine.
func (w *worker) pushLocal(h *header.Header) {
	w.local.Push(h, &w.s.global)
	w.s.idle.NotifyOne()
}

// park follows the idle package's worker loop (steps 4 and 5): announce,
// check once more if this was the last searcher, run the driver for the
// timeout, sleep. It reports false when the scheduler closed.
func (w *worker) park() bool {
	w.parking = true
	prep := w.s.idle.PrepareToPark(w.id, w.searching)
	w.searching = false
	if prep.WasLastSearcher && w.s.hasWork() {
		w.s.idle.NotifyOne()
	}
	timeout := w.maintain()
	w.ctr.parked++
	w.publish()
	w.parks.begin(w.s)
	// After parks.begin: a snapshot that does not see this worker parked
	// has published its request before, and this sees it (askWorkers).
	w.checkSnapshot()
	r := w.sleep(timeout)
	w.parks.end(w.s)
	w.parking = false
	w.busySince, w.sysmonWoken = -1, false
	switch r {
	case idle.Notified:
		w.searching = true
	case idle.Closed:
		return false
	}
	return true
}

// sleep is the park itself: in the driver's wait if the driver is a Blocker
// and no other worker holds it, else on the worker's token channel. Beside a
// holder, a worker parks without a timeout: the holder sleeps towards the
// next deadline for everyone, so the parked workers do not all wake for it
// (see the package doc, "Parking in the driver").
func (w *worker) sleep(timeout time.Duration) idle.ParkResult {
	b := w.s.blocker
	if b == nil {
		return w.s.idle.Park(w.id, timeout)
	}
	if !b.TryAcquire(w.id, timeout) {
		if b.Covers(timeout) {
			timeout = -1
		}
		return w.s.idle.Park(w.id, timeout)
	}
	w.cx.Reset(waker.Waker{}, w.s, nil, w.id)
	r := w.s.idle.ParkWith(w.id, timeout, func(d time.Duration) bool { return b.Block(&w.cx, d) })
	b.Release(w.id)
	return r
}

// hasWork reports whether any shared source (the global queue, a local
// queue) holds a task. LIFO slots are not shared; their owners look at them
// before they park.
func (s *Scheduler) hasWork() bool {
	if !s.global.IsEmpty() {
		return true
	}
	for _, v := range s.workers {
		if !v.stealer.IsEmpty() {
			return true
		}
	}
	return false
}

// adapt updates the EWMA of the poll duration with a tick that ran n polls in
// d, and the global-queue interval from it (1 ms over the average,
// clamped to [MinGlobalInterval, MaxGlobalInterval]).
func (w *worker) adapt(n int, d time.Duration) {
	const alpha = 0.1
	sample := float64(d.Nanoseconds()) / float64(n)
	w.avgPollNs = alpha*sample + (1-alpha)*w.avgPollNs
	w.interval = globalInterval(w.avgPollNs)
}

// globalInterval is the global-queue interval for polls of avgPollNs on
// average: targetGlobalLatency over it, clamped to [MinGlobalInterval,
// MaxGlobalInterval].
func globalInterval(avgPollNs float64) uint32 {
	iv := float64(targetGlobalLatency.Nanoseconds()) / max(avgPollNs, 1)
	return uint32(min(max(iv, MinGlobalInterval), MaxGlobalInterval))
}

// drain hands every task in the worker's LIFO, deferred list and local
// queue to f. Called by the shutdown goroutine after the worker exited.
func (w *worker) drain(f func(*header.Header)) {
	for i := 0; i < w.lifoLen; i++ {
		f(w.lifo[i])
		w.lifo[i] = nil
	}
	w.lifoPub.clearAll(w.lifoLen)
	w.lifoLen = 0
	for i, h := range w.deferred {
		f(h)
		w.deferred[i] = nil
	}
	w.deferred = w.deferred[:0]
	for h := w.local.Pop(); h != nil; h = w.local.Pop() {
		f(h)
	}
}
