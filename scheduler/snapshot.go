package scheduler

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/wsqueue"
)

// This file takes the snapshots of the live tasks that Tasks, Dump and
// the users of TaskSnapshot read: the owned list, the tasks queued since
// their spawn (copied by the workers from their own queues when asked, and
// from the global queue), and the polls in progress. See the package doc,
// "Task dump" and "Listing queued tasks".

// snapshotWait bounds how long a snapshot waits for the workers to copy
// their queues (worker.answerSnapshot): a worker answers between two
// polls, so one that has not answered by then is in a long poll; the
// tasks queued behind it are taken from its local queue (takeLocal), and
// the task in its first poll read from what it publishes (firstPoll).
const snapshotWait = 20 * time.Millisecond

// TaskSnapshot is a snapshot of the live tasks in a compact form that
// Scheduler.SnapshotTasks fills again and again without allocating, once
// its memory has grown to the number of tasks: for a program that looks
// at many tasks often, such as a console refreshed every second, where
// Tasks would allocate a TaskInfo, with its strings, for each task at each
// look. It holds a record of about 100 bytes per task, from which Task
// makes the TaskInfo of the tasks the program shows, and from which
// Warnings and Deadlocks find what Scheduler.Warnings and the function
// Deadlocks would find in Tasks' answer.
//
// The zero value is an empty snapshot, ready to be filled. A TaskSnapshot
// is not safe for concurrent use. Its memory is kept for the next fill,
// and so are its tasks' names, which a finished task's therefore outlive
// until then.
type TaskSnapshot struct {
	// recs are the listed tasks.
	recs []taskRecord
	// live is the number of live tasks (Stats().Live) when the snapshot
	// was taken.
	live int64
	// at is when the snapshot was taken (Scheduler.now), atMs the same
	// in milliseconds, wrapping as worker.clockMs does.
	at   int64
	atMs uint32
	// slowPoll is the scheduler's Config.SlowPoll, for Warnings.
	slowPoll time.Duration
	// sites are the spawn sites resolved, by their return addresses
	// (spawnSite), kept from one fill to the next.
	sites map[[spawnPCs]uintptr][2]string
	// queued and hold are the fill's scratch: the tasks found queued
	// since their spawn, and the global queue's tasks while they are out
	// of it (takeGlobal). Both are cleared after each fill, so that they
	// keep no task reachable, and dropped when large (a rare backlog).
	queued []queuedTask
	hold   []*header.Header
	// published is the fill's scratch too: the tasks read from what the
	// workers that did not answer publish (firstPoll, lifoPub), listed
	// once the other sources are read unless found there.
	published []publishedTask
	// filled is the number of records the last fill wrote, whose
	// references a shorter fill clears.
	filled int
}

// maxScratch is the capacity above which a fill drops its scratch rather
// than keep it for the next.
const maxScratch = 4096

// taskRecord is a task as a TaskSnapshot keeps it: what Tasks copies from
// the task, before anything is formatted.
type taskRecord struct {
	id, parent uint64
	// born is the task's birth (taskBase.born), for a task in its first
	// poll when that poll began; 0 when not known.
	born int64
	run  uint64
	st   header.State
	wait future.Wait
	// name, pollNanos and wokenInPoll are from the side record, read with
	// the rest; x is the side record (for its spawn site), nil for none.
	name        string
	pollNanos   int64
	wokenInPoll uint64
	x           *taskExt
	kind        recordKind
	// hasSite says x holds a spawn site, which Task resolves (read here,
	// so that Task reads x only then).
	hasSite bool
}

// recordKind says where a snapshot found a task.
type recordKind uint8

const (
	// recListed: in the owned list, polled at least once.
	recListed recordKind = iota
	// recQueued: in a queue, never polled.
	recQueued
	// recFirstPoll: in its first poll on a worker (Config.PollTiming, or
	// a worker's firstPoll).
	recFirstPoll
)

// queuedTask is a task found queued since its spawn, with its record: the
// fill checks again, once every source is read, that it has still not
// been polled (it is then listed nowhere else).
type queuedTask struct {
	t   *taskBase
	rec taskRecord
}

// recordOf copies t's fields into a record of kind k. The caller makes the
// reads safe: it holds t's owned shard's mutex (a listed task), or t is in
// no queue but the caller's hands (a queued one).
func recordOf(t *taskBase, k recordKind) taskRecord {
	r := taskRecord{
		id: t.id, parent: t.parent, born: t.born,
		run:  t.run.Load(),  // run: stored by the polling worker
		wait: t.wait.Load(), // wait: stored by the leaf futures of its poll
		st:   t.Load(),
		x:    t.ext.Load(), // ext: stored by the task's owner
		kind: k,
	}
	if x := r.x; x != nil {
		r.name, r.hasSite = x.name, x.pcs[0] != 0
		r.pollNanos = x.pollNanos.Load()     // pollNanos: added to by the polling worker
		r.wokenInPoll = x.wokenInPoll.Load() // wokenInPoll: added to by the polling worker
	}
	return r
}

// polls is the task's number of polls, modulo 2^32: the header's count
// and run's carry, read apart (off by 2^16 across a carry).
func (r *taskRecord) polls() uint32 { return uint32(uint16(r.run))<<16 | uint32(r.st.Polls()) }

// liveWait is the task's wait if its last poll recorded it, else 0.
func (r *taskRecord) liveWait() future.Wait {
	if r.kind == recListed && r.st.Lifecycle() == header.Idle && r.wait.Seq() == uint8(r.polls()) {
		return r.wait
	}
	return 0
}

// SnapshotTasks fills snap with a snapshot of the live tasks, as Tasks
// would list them, reusing snap's memory: once it has grown to the number
// of live tasks, a fill allocates nothing in proportion to them. See
// Tasks for what it lists and how it reads the workers' queues. Any
// goroutine may call it; snapshots are taken one at a time.
func (s *Scheduler) SnapshotTasks(snap *TaskSnapshot) {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	// Room for every live task at once, rather than by appends, which
	// would leave copies behind; a snapshot that a burst of tasks left far
	// larger than needed shrinks.
	if want := int(s.owned.live.Load()) + 16; cap(snap.recs) < want || cap(snap.recs) > 4*want && cap(snap.recs) > 1024 {
		snap.recs = make([]taskRecord, 0, want+want/8)
	}
	snap.recs = snap.recs[:0]
	snap.slowPoll = s.cfg.SlowPoll

	// The sources in the order that loses the fewest tasks moving between
	// them while they are read (see the package doc, "Listing queued
	// tasks"): the workers' queues, the global queue, the owned list.
	if r := s.askWorkers(); r != nil {
		s.collectAnswers(r, snap)
	}
	fromWorkers := len(snap.queued)
	s.takeGlobal(snap)
	for i := range s.owned.shards {
		sh := &s.owned.shards[i]
		sh.mu.Lock()
		for t := sh.head; t != nil; t = t.next {
			snap.recs = append(snap.recs, recordOf(t, recListed))
		}
		sh.mu.Unlock()
	}
	snap.at = s.now()
	snap.atMs = uint32(snap.at / int64(time.Millisecond))
	s.addFirstPolls(snap)
	snap.addQueued(fromWorkers)
	snap.addPublished()
	snap.live = s.owned.live.Load()
	if n := len(snap.recs); n < snap.filled && snap.filled <= cap(snap.recs) {
		clear(snap.recs[n:snap.filled]) // keep no finished task's memory
	}
	snap.filled = len(snap.recs)
}

// askWorkers asks every worker that is not parked to copy the tasks
// queued since their spawn in its LIFO and local queue (answerSnapshot),
// and waits for their answers, at most snapshotWait. A parked worker's
// queues are empty: it counts as answered. It returns nil when there is
// nobody to ask (the scheduler is shutting down). Called with snapMu held.
func (s *Scheduler) askWorkers() *snapRequest {
	if s.closing.Load() {
		return nil
	}
	r := &snapRequest{answers: make([]snapAnswer, len(s.workers)), progress: make(chan struct{}, len(s.workers))}
	r.pending.Store(int32(len(s.workers)))
	s.snapReq.Store(r) // snapReq: loaded by the workers between polls and before they sleep
	for i, w := range s.workers {
		// since: stored by w before it looks at snapReq in park; one of
		// the two sees the other (both are sequentially consistent).
		if w.parks.since.Load() >= 0 {
			r.settle(i, answerSkipped)
		}
	}
	if s.driven != nil && r.pending.Load() > 0 {
		// A driven scheduler's worker is the caller's goroutine (the
		// driving one, in a poll or between polls): it answers itself.
		s.workers[0].answerSnapshot(r)
	}
	// A snapshot taken from a task waits for every worker but its own,
	// which cannot answer before the task's poll returns.
	var stop int32
	if r.pending.Load() > 0 && OnWorker() {
		stop = 1
	}
	if r.pending.Load() > stop {
		timer := time.NewTimer(snapshotWait)
	wait:
		for r.pending.Load() > stop {
			select {
			case <-r.progress:
			case <-timer.C:
				break wait
			}
		}
		timer.Stop()
	}
	s.snapReq.Store(nil)
	return r
}

// collectAnswers adds the workers' answers to snap's queued tasks; a
// worker that has not answered yet never will (settled skipped): the
// tasks of its local queue are taken (takeLocal), and its task in its
// first poll is read from what it publishes (firstPoll). Called with
// snapMu held.
func (s *Scheduler) collectAnswers(r *snapRequest, snap *TaskSnapshot) {
	for i := range r.answers {
		a := &r.answers[i]
		r.settle(i, answerSkipped)
		if a.state.Load() == answerGiven { // state: stored by the worker after tasks, which it publishes
			snap.queued = append(snap.queued, a.tasks...)
			continue
		}
		// Parked (its queues are empty, and it publishes no first poll),
		// or in a poll that began before the request: a long one, or the
		// caller's own.
		w := s.workers[i]
		s.takeLocal(w, snap)
		since := max(w.tickAt.Load(), 0) // tickAt: stored by w at each tick's start and end
		if id, x := w.firstPoll.read(); id != 0 {
			snap.published = append(snap.published, publishedTask{id: id, x: x, since: since})
		}
		for j := range w.lifoPub.ids {
			if id, parent, x := w.lifoPub.read(j); id != 0 {
				snap.published = append(snap.published, publishedTask{id: id, x: x, since: since, parent: parent, queued: true})
			}
		}
	}
}

// publishedTask is a task a snapshot read from what a worker publishes:
// its task in its first poll (firstPoll), or, queued, a task never polled
// in its LIFO (lifoPub), with its parent. since is when the worker's tick
// began (the first poll began then or later; a task in the LIFO was
// spawned then, if that tick spawned it, or earlier; 0 when not known).
type publishedTask struct {
	id, parent uint64
	x          *taskExt
	since      int64
	queued     bool
}

// takeLocalSteals bounds the steals of takeLocal: each takes half of the
// queue, so a full queue is empty after about 9; the rest are for a
// worker that pushes meanwhile, or a thief's steal in progress.
const takeLocalSteals = 32

// takeLocal adds the tasks never polled of worker w's local queue to
// snap's queued tasks, for a worker that did not answer: it takes them
// out as a thief would (the local queue's steal protocol makes them the
// caller's alone while it reads them) and puts them on the global queue,
// where any worker may run them, as an idle worker would have stolen
// them from w. Called with snapMu held, which guards s.snapQ.
func (s *Scheduler) takeLocal(w *worker, snap *TaskSnapshot) {
	if w.stealer.IsEmpty() {
		return
	}
	if s.snapQ == nil {
		s.snapQ, _ = wsqueue.New[header.Header]()
	}
	hold := snap.hold[:0]
	for range takeLocalSteals {
		last := w.stealer.StealInto(s.snapQ)
		if last == nil {
			if w.stealer.IsEmpty() {
				break
			}
			runtime.Gosched() // another thief's steal in progress
			continue
		}
		for h := s.snapQ.Pop(); h != nil; h = s.snapQ.Pop() {
			hold = append(hold, h) // the older ones, in their order
		}
		hold = append(hold, last)
	}
	for _, h := range hold {
		snap.queued = appendQueued(snap.queued, taskOf(h))
	}
	s.global.PushOverflow(hold) // accepted even if the queue closed meanwhile: the drain has yet to empty it
	s.idle.NotifyOne()
	clear(hold)
	snap.hold = hold[:0]
	if cap(hold) > maxScratch {
		snap.hold = nil
	}
}

// addPublished lists the tasks read from what the workers publish
// (firstPoll, lifoPub) that no other source listed: each was in its first
// poll, or in the LIFO, of a worker that did not answer. Called once
// every other source is read (a task moves from the LIFO to its first
// poll, and from there to the owned list, never back), and before it a
// task is listed at most once.
func (snap *TaskSnapshot) addPublished() {
	if len(snap.published) == 0 {
		return
	}
	for _, fp := range snap.published {
		listed := false
		for i := range snap.recs {
			if snap.recs[i].id == fp.id {
				listed = true
				break
			}
		}
		if listed {
			continue
		}
		r := taskRecord{id: fp.id, parent: fp.parent, x: fp.x, kind: recFirstPoll, born: fp.since}
		if fp.queued {
			r.kind = recQueued
		}
		if r.born == 0 {
			r.born = snap.at
		}
		if x := fp.x; x != nil {
			r.name, r.hasSite = x.name, x.pcs[0] != 0
		}
		snap.recs = append(snap.recs, r)
	}
	clear(snap.published)
	snap.published = snap.published[:0]
}

// takeGlobal adds the tasks in the global queue that were never polled to
// snap's queued tasks. The queue offers no look inside but taking its
// tasks out: they are taken out (Drain), which makes them this
// goroutine's alone while it reads them, and put back at once, in their
// order, behind any pushed meanwhile; a worker that found the queue empty
// meanwhile may have parked, so one is notified. Called with snapMu held,
// which the shutdown's drain also takes, so that the tasks are back before
// it takes the queue's last tasks.
func (s *Scheduler) takeGlobal(snap *TaskSnapshot) {
	if s.global.IsEmpty() {
		return
	}
	hold := snap.hold[:0]
	s.global.Drain(func(h *header.Header) {
		hold = append(hold, h)
		snap.queued = appendQueued(snap.queued, taskOf(h))
	})
	s.global.PushOverflow(hold) // accepted even if the queue closed meanwhile: the drain has yet to empty it
	s.idle.NotifyOne()
	clear(hold)
	snap.hold = hold[:0]
	if cap(hold) > maxScratch {
		snap.hold = nil
	}
}

// appendQueued appends t to qs if it was never polled: a task polled
// before is linked into the owned list, and listed from there. Called by
// the party that holds t out of every queue (its worker, or takeGlobal).
func appendQueued(qs []queuedTask, t *taskBase) []queuedTask {
	if t.linked { // see ownedTasks.remove for the unlocked read
		return qs
	}
	return append(qs, queuedTask{t: t, rec: recordOf(t, recQueued)})
}

// addQueued lists the queued tasks found by the fill that have still not
// been polled now that every source is read: one polled since is listed
// in the owned list if it was linked before its shard was read, and
// counted otherwise, never listed twice. A task moving between queues
// while they are read may be found twice, by two workers or by a worker
// (the first fromWorkers of the queued tasks) and in the global queue
// (the others, each found once): it is listed once.
func (snap *TaskSnapshot) addQueued(fromWorkers int) {
	var seen map[*taskBase]bool
	if fromWorkers > 0 && len(snap.queued) > 1 {
		seen = make(map[*taskBase]bool, fromWorkers)
	}
	for i, q := range snap.queued {
		st := q.t.Load() // the header: read atomically, whoever owns the task now
		if st.Lifecycle() != header.Scheduled || st.Polls() != 0 {
			continue
		}
		if seen != nil {
			if seen[q.t] {
				continue
			}
			if i < fromWorkers {
				seen[q.t] = true
			}
		}
		snap.recs = append(snap.recs, q.rec)
	}
	clear(snap.queued)
	snap.queued = snap.queued[:0]
	if cap(snap.queued) > maxScratch {
		snap.queued = nil
	}
}

// addFirstPolls adds the tasks in their first poll on a worker, with
// Config.PollTiming: the polls in progress whose task is not listed.
func (s *Scheduler) addFirstPolls(snap *TaskSnapshot) {
	if !s.cfg.PollTiming {
		return
	}
	type poll struct {
		at     int64
		id     uint64
		x      *taskExt
		listed bool
	}
	var polls []poll
	for _, w := range s.workers {
		if at, id, x, ok := w.pollInProgress(); ok {
			polls = append(polls, poll{at: at, id: id, x: x})
		}
	}
	if len(polls) == 0 {
		return
	}
	for i := range snap.recs {
		for j := range polls {
			if polls[j].id == snap.recs[i].id {
				polls[j].listed = true
			}
		}
	}
	for _, p := range polls {
		if !p.listed {
			r := taskRecord{id: p.id, born: p.at, x: p.x, kind: recFirstPoll}
			if p.x != nil {
				r.name, r.hasSite = p.x.name, p.x.pcs[0] != 0
			}
			snap.recs = append(snap.recs, r)
		}
	}
}

// Len returns the number of tasks the snapshot lists.
func (snap *TaskSnapshot) Len() int { return len(snap.recs) }

// Live returns the number of live tasks when the snapshot was taken
// (Stats().Live): Len, plus the tasks that could not be listed (see
// Tasks).
func (snap *TaskSnapshot) Live() int64 { return snap.live }

// Task returns task i of the snapshot, 0 <= i < Len, in no particular
// order: everything Tasks tells of it.
func (snap *TaskSnapshot) Task(i int) TaskInfo {
	r := &snap.recs[i]
	ti := snap.brief(r)
	if r.hasSite {
		ti.Site, ti.Func = snap.site(r.x)
	}
	return ti
}

// brief is Task without the spawn site.
func (snap *TaskSnapshot) brief(r *taskRecord) TaskInfo {
	ti := TaskInfo{ID: r.id, Parent: r.parent, Name: r.name, PollTime: time.Duration(r.pollNanos), WokenInPoll: r.wokenInPoll}
	switch r.kind {
	case recQueued:
		ti.State = TaskQueued
		if r.born != 0 {
			ti.Age = time.Duration(max(snap.at-r.born, 0))
			ti.SinceLastPoll = ti.Age
		}
		return ti
	case recFirstPoll:
		ti.State, ti.Polls, ti.FirstPoll = TaskRunning, 1, true
		ti.Age = time.Duration(max(snap.at-r.born, 0))
		ti.SinceLastPoll = ti.Age
		return ti
	}
	ti.Age = time.Duration(max(snap.at-r.born, 0))
	ti.Polls = r.polls()
	ti.SinceLastPoll = time.Duration(snap.atMs-uint32(r.run>>32)) * time.Millisecond // wraps after 49 days
	switch r.st.Lifecycle() {
	case header.Idle:
		ti.State = TaskIdle
		ti.Wait = r.liveWait()
		ti.WaitsFor = waitsFor(ti.Wait)
		ti.AwaitAt = future.AwaitSite(uint16(r.run >> 16)).String()
	case header.Scheduled:
		ti.State = TaskScheduled
	case header.Running:
		ti.State = TaskRunning
	default:
		ti.State = TaskComplete
	}
	return ti
}

// site returns the spawn site of the task whose side record is x, resolved
// once per site and kept.
func (snap *TaskSnapshot) site(x *taskExt) (site, fn string) {
	s, ok := snap.sites[x.pcs]
	if !ok {
		if snap.sites == nil {
			snap.sites = make(map[[spawnPCs]uintptr][2]string)
		}
		s = spawnSite(x.pcs[:])
		snap.sites[x.pcs] = s
	}
	return s[0], s[1]
}

// Warnings returns the warnings of the snapshot's tasks, as
// Scheduler.Warnings returns those of a Tasks answer.
func (snap *TaskSnapshot) Warnings() []Warning {
	var out []Warning
	for i := range snap.recs {
		r := &snap.recs[i]
		if !r.mayWarn() {
			continue
		}
		ti := snap.brief(r)
		n := len(out)
		out = appendWarnings(out, &ti, snap.slowPoll)
		if len(out) > n {
			full := snap.Task(i)
			for j := n; j < len(out); j++ {
				out[j].Task = full
			}
		}
	}
	return out
}

// mayWarn reports whether the task may have a warning (appendWarnings):
// most have none, and need no TaskInfo to tell.
func (r *taskRecord) mayWarn() bool {
	return r.kind == recFirstPoll ||
		r.liveWait().Kind() == waitNoWaker ||
		r.polls() >= selfWakeMinPolls && float64(r.wokenInPoll) > selfWakeShare*float64(r.polls())
}

// Deadlocks returns the cycles of the wait-for graph of the snapshot's
// tasks, as the function Deadlocks returns those of a Tasks answer.
func (snap *TaskSnapshot) Deadlocks() [][]TaskInfo {
	var waiting []TaskInfo // only a task that waits for another can be in a cycle
	for i := range snap.recs {
		if w := snap.recs[i].liveWait(); w != 0 && waitsFor(w) != 0 {
			waiting = append(waiting, snap.Task(i))
		}
	}
	return Deadlocks(waiting)
}

// snapRequest is a snapshot's request to the workers to copy the tasks
// queued since their spawn in their own queues (see the package doc,
// "Listing queued tasks"). Published in Scheduler.snapReq while the
// snapshot waits.
type snapRequest struct {
	// answers are the workers' answers, by worker index.
	answers []snapAnswer
	// pending counts the answers not settled yet; progress gets a value
	// at each settle (it has room for all of them), for the snapshot that
	// waits.
	pending  atomic.Int32
	progress chan struct{}
}

// snapAnswer is one worker's answer to a snapRequest.
type snapAnswer struct {
	// state is answerPending until settled, once, by the worker
	// (answerGiven, after it wrote tasks) or by the snapshot
	// (answerSkipped: the worker was parked, or has not answered in
	// time); a compare-and-swap decides between the two.
	state atomic.Uint32
	// tasks are the worker's tasks queued since their spawn. Written by
	// the worker before it settles the answer given; read by the
	// snapshot only after it saw that.
	tasks []queuedTask
}

// The states of a snapAnswer.
const (
	answerPending uint32 = iota
	answerGiven
	answerSkipped
)

// settle settles answer i as to, unless it is settled already, and reports
// whether it did. Any goroutine may call it.
func (r *snapRequest) settle(i int, to uint32) bool {
	if !r.answers[i].state.CompareAndSwap(answerPending, to) { // CAS: the worker's answer against the snapshot's skip
		return false
	}
	r.pending.Add(-1) // pending: loaded by the waiting snapshot
	r.progress <- struct{}{}
	return true
}

// checkSnapshot answers the snapshot request in progress, if any and not
// answered yet. It costs an atomic load when there is none (and is small
// enough to be inlined into the loop of polls). Called on w's goroutine
// between polls, and before it sleeps.
func (w *worker) checkSnapshot() {
	if r := w.s.snapReq.Load(); r != nil { // snapReq: stored by askWorkers
		w.answerSnapshot(r)
	}
}

// answerSnapshot copies the tasks queued since their spawn in w's LIFO and
// local queue into its answer to r, unless it answered r already. The
// local queue's tasks are taken out and put back, in their order: while
// out, they are this worker's alone, so that no thief polls one, or
// finishes one and reuses its memory, while its fields are read. The
// deferred tasks were all polled. Called on w's goroutine between polls.
func (w *worker) answerSnapshot(r *snapRequest) {
	if r == w.answered {
		return
	}
	w.answered = r
	a := &r.answers[w.id]
	if a.state.Load() != answerPending {
		return // skipped: the snapshot did not wait for this worker
	}
	var qs []queuedTask
	for _, h := range w.lifo[:w.lifoLen] {
		qs = appendQueued(qs, taskOf(h))
	}
	for h := w.local.Pop(); h != nil; h = w.local.Pop() {
		w.scratch = append(w.scratch, h)
	}
	if len(w.scratch) > 0 {
		for _, h := range w.scratch {
			qs = appendQueued(qs, taskOf(h))
		}
		w.local.PushBatch(w.scratch, &w.s.global)
		clear(w.scratch)
		w.scratch = w.scratch[:0]
		// A thief woken for these tasks may have found the queue empty
		// while they were out, and parked.
		w.s.idle.NotifyOne()
	}
	a.tasks = qs
	r.settle(w.id, answerGiven)
}
