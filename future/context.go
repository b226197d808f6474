package future

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/blitz-go/blitz/waker"
)

// NoWorker is Context.Worker's answer when the poll is not made by one of an
// executor's workers (a goroutine blocked in BlockOn, a test).
const NoWorker = -1

// Context is what a poll receives: the Waker of the task being polled, the
// current worker, executor and task, and the task's cooperative budget,
// which a runtime in another language would keep in thread-locals: Go has
// no goroutine-local storage, so the poll carries them.
//
// A Context is valid only during the Poll call it was passed to: the executor
// reuses it for the next poll. A future must not keep it or hand it to another
// goroutine; it keeps a copy of cx.Waker() instead. Context's methods are
// called by the goroutine making the poll.
type Context struct {
	waker waker.Waker
	// child is set in the copies WithWaker makes: their Waker is a
	// combinator's child Waker, not the task's own, so Yield must wake it
	// for the combinator to learn which child to poll again; with the
	// task's own Waker the executor's budget carries the yield without a
	// wake.
	child  bool
	exec   Executor
	task   any
	worker int
	// budget is the cooperative budget of the task poll (see Budget), nil
	// when the poll has none. Copies made by WithWaker share it.
	budget *Budget
	// waits is where Waiting records the polled task's waits: a WaitSlot
	// (SetWaitSlot) or an executor's WaitRecorder (SetWaitRecorder), nil
	// when the executor keeps none; waitSeq is the poll's sequence
	// number, shifted into place for Waiting (SetWaitSlot, SetWaitSeq).
	// Kept by Reset, so that an executor whose recorder is the same for
	// every poll stores it once (a pointer stored per poll costs a write
	// barrier while the GC marks); copies made by WithWaker share them.
	waits   WaitRecorder
	waitSeq uint64
	// taskID is the polled task's id, 0 when the executor gives none. Set
	// by SetTaskID, cleared by Reset; copies made by WithWaker share it.
	taskID uint64
	// sites records where the polled task's async functions suspend, nil
	// when the executor keeps none (SetSiteRecorder; kept by Reset, as
	// waits); siteDone says an await of this poll recorded its site
	// (Suspended), cleared by Reset and SetSiteRecorder.
	sites    SiteRecorder
	siteDone bool
}

// NewContext returns a Context for polling a future outside any executor,
// from an ordinary goroutine or a test: w is woken when the future can make
// progress (typically a *waker.Signal the goroutine waits on).
func NewContext(w waker.Waker) *Context {
	return &Context{waker: w, worker: NoWorker}
}

// Reset points cx at a new poll. Executors call it before each poll so that
// one Context serves a worker's whole life and a poll allocates nothing.
// task is the executor's handle of the task being polled (the scheduler's is
// a *header.Header), worker the index of the polling worker or NoWorker.
// Reset leaves cx without a budget and without a task id; an executor
// that budgets its tasks' polls calls SetBudget after it, one that numbers
// its tasks SetTaskID. Reset keeps the wait slot or recorder, the poll's
// sequence number and the site recorder, which an executor sets once when
// they serve every poll of cx, or after each Reset when they change.
func (cx *Context) Reset(w waker.Waker, exec Executor, task any, worker int) {
	cx.waker, cx.child, cx.exec, cx.task, cx.worker, cx.budget = w, false, exec, task, worker, nil
	cx.taskID, cx.siteDone = 0, false
}

// Waker returns the Waker that wakes the task being polled.
//
// Taking it is noted in the poll's Budget (Budget.WakerTaken), for task
// dumps.
func (cx *Context) Waker() waker.Waker {
	if b := cx.budget; b != nil {
		b.wakerTaken = true
	}
	return cx.waker
}

// Executor returns the executor making this poll, nil outside one.
func (cx *Context) Executor() Executor { return cx.exec }

// Task returns the executor's handle of the task being polled, nil outside an
// executor. Its dynamic type belongs to the executor.
func (cx *Context) Task() any { return cx.task }

// Worker returns the index of the worker making this poll, or NoWorker.
func (cx *Context) Worker() int { return cx.worker }

// Services returns the runtime services of the executor making this poll
// (Executor.Services), nil outside one.
func (cx *Context) Services() any {
	if cx.exec == nil {
		return nil
	}
	return cx.exec.Services()
}

// Wake wakes w on behalf of this poll. It is the same as w.Wake(), except
// that a task woken by a task keeps running on the waking task's worker when
// the executor allows it (the LIFO slot), which is what makes a ping-pong
// between two tasks cheap. Primitives that wake a waiter while being polled
// (a channel send that completes a receive) call cx.Wake(w) rather than
// w.Wake().
func (cx *Context) Wake(w waker.Waker) {
	if cx.exec != nil && cx.exec.WakeLocal(cx, w) {
		return
	}
	w.Wake()
}

// WithWaker returns a copy of cx whose Waker is w, for a combinator that
// gives a child its own waker (to learn which child was woken). The copy
// keeps the executor, task and worker of cx, shares its budget, and is
// valid as long as cx is.
func (cx *Context) WithWaker(w waker.Waker) Context {
	c := *cx
	c.waker, c.child = w, true
	return c
}

// What a task waits on. A task dump names, for each task that waits, the
// leaf future it waits on ("Mutex.Lock 3", "TCPStream.Read fd 12", "Sleep
// until 12:00:03.100", "Semaphore.Acquire 5 (2 permits)"). The leaf records
// it on its pending path with Context.Waiting, which costs one atomic store
// and no allocation: a kind registered once with NewWaitKind (or
// NewCountedWaitKind), and an object number whose meaning the kind's
// WaitObject gives. The executor gives each poll the task's WaitSlot
// (SetWaitSlot), or keeps one WaitRecorder that stores into the polled
// task's slot (SetWaitRecorder), and the dump reads the slot,
// concurrently, as a Wait.

// WaitKind is a registered kind of wait: a leaf future's name, such as
// "Mutex.Lock", and how its object number reads. The zero WaitKind is "no
// recorded wait".
type WaitKind uint8

// WaitObject says what the object number of a wait is, for its
// description.
type WaitObject uint8

// The object numbers of waits.
const (
	// WaitNoObject: the number is not shown ("JoinSet.Next").
	WaitNoObject WaitObject = iota
	// WaitFD: a file descriptor or handle ("TCPStream.Read fd 12").
	WaitFD
	// WaitDeadline: a wall-clock deadline in Unix milliseconds ("Sleep
	// until 12:00:03.100"); see WaitDeadlineOf.
	WaitDeadline
	// WaitTask: the id of a task ("JoinHandle task 17").
	WaitTask
	// WaitNumber: any other number, such as the number a primitive
	// takes at its first wait ("Notify.Notified 4").
	WaitNumber
	// WaitLock: the identity of a lock, a number the lock takes at its
	// first wait ("Mutex.Lock 3"); the kind's holder function
	// (WaitKind.SetHolder) tells which task holds it.
	WaitLock
	// WaitCounted: the number of an object and a count of what the wait
	// asks of it, packed by WaitCountedOf ("Semaphore.Acquire 5 (2
	// permits)": semaphore 5, 2 permits). The count's unit is the kind's
	// (NewCountedWaitKind); a count of MaxWaitCount reads "65535+ permits".
	WaitCounted
)

// MaxWaitObject is the largest object number a wait keeps: larger ones
// are cut to their low 48 bits.
const MaxWaitObject = 1<<48 - 1

// The limits of a WaitCounted object, which keeps the number in its high
// 32 bits and the count in its low 16, so that waits ordered by object
// are ordered by number, then count.
const (
	// MaxWaitCountedNumber is the largest number a WaitCounted wait
	// keeps: larger ones are cut to their low 32 bits.
	MaxWaitCountedNumber = 1<<32 - 1
	// MaxWaitCount is the largest count a WaitCounted wait keeps: larger
	// ones are kept as MaxWaitCount, which reads "65535+".
	MaxWaitCount = 1<<16 - 1
)

// WaitCountedOf is the object of a WaitCounted wait on object number num
// for count units, cut to the limits above.
func WaitCountedOf(num, count uint64) uint64 {
	return (num&MaxWaitCountedNumber)<<16 | min(count, MaxWaitCount)
}

// Counted returns the object number and the count of a WaitCounted wait.
func (w Wait) Counted() (num, count uint64) {
	obj := w.Object()
	return obj >> 16, obj & MaxWaitCount
}

// ErrTooManyWaitKinds is the panic value of NewWaitKind and
// NewCountedWaitKind when 255 kinds are registered already.
var ErrTooManyWaitKinds = errors.New("future: too many wait kinds")

// waitKinds is the registry of WaitKinds, index = kind. Written under
// waitKindsMu by NewWaitKind; read by Wait.String (any goroutine) through
// the atomic pointer, which publishes the entry.
var (
	waitKindsMu sync.Mutex
	waitKindsN  int
	waitKinds   [256]atomic.Pointer[waitKindInfo]
)

// waitKindInfo is a registered WaitKind.
type waitKindInfo struct {
	name string
	obj  WaitObject
	// one and many are the unit of a WaitCounted kind's count, for a
	// count of 1 ("permit") and any other ("permits"); "" for a bare
	// count.
	one, many string
	// holder is the kind's holder function (SetHolder), nil for none.
	holder atomic.Pointer[func(obj uint64) uint64]
}

// SetHolder gives the kind a function telling which task holds the object
// of a wait of this kind: holder(obj) returns the holding task's id (see
// Context.TaskID), or 0 when the object is free, held by a goroutine, or
// gone. A task dump uses it to draw the edges from each waiting task to
// the task it waits for, and to find a cycle of them (a deadlock). The
// package that registered the kind sets it once; holder may be called by
// any goroutine at any time and must not block.
func (k WaitKind) SetHolder(holder func(obj uint64) uint64) {
	if p := waitKinds[k].Load(); p != nil {
		p.holder.Store(&holder)
	}
}

// Holder returns the id of the task holding the object of w, as its
// kind's holder function tells (SetHolder); 0 for a kind without one, or
// an object free, held by a goroutine, or gone.
func (w Wait) Holder() uint64 {
	p := waitKinds[w.Kind()].Load()
	if p == nil {
		return 0
	}
	if h := p.holder.Load(); h != nil {
		return (*h)(w.Object())
	}
	return 0
}

// NewWaitKind registers a kind of wait named name whose object number
// reads as obj says, and returns it. Leaf futures register theirs once, in
// a package variable. The registry holds 255 kinds; past that NewWaitKind
// panics with ErrTooManyWaitKinds. Any goroutine may call it.
func NewWaitKind(name string, obj WaitObject) WaitKind {
	return newWaitKind(&waitKindInfo{name: name, obj: obj})
}

// NewCountedWaitKind registers a kind of wait named name whose object is
// WaitCounted, its count read in the unit one for a count of 1 and many
// for any other ("permit", "permits"), and returns it, as NewWaitKind
// does. With one and many "" the count is bare ("Cell.Take 5 (2)").
func NewCountedWaitKind(name, one, many string) WaitKind {
	return newWaitKind(&waitKindInfo{name: name, obj: WaitCounted, one: one, many: many})
}

// newWaitKind registers the kind p.
func newWaitKind(p *waitKindInfo) WaitKind {
	waitKindsMu.Lock()
	defer waitKindsMu.Unlock()
	if waitKindsN == len(waitKinds)-1 {
		panic(ErrTooManyWaitKinds)
	}
	waitKindsN++
	waitKinds[waitKindsN].Store(p)
	return WaitKind(waitKindsN)
}

// Name returns the kind's name, "" for the zero WaitKind.
func (k WaitKind) Name() string {
	if p := waitKinds[k].Load(); p != nil {
		return p.name
	}
	return ""
}

// Object returns how the kind's object number reads.
func (k WaitKind) Object() WaitObject {
	if p := waitKinds[k].Load(); p != nil {
		return p.obj
	}
	return WaitNoObject
}

// WaitSlot is where an executor keeps what a task waits on: one word,
// written by the leaf futures polled in the task's polls (Context.Waiting,
// an atomic store) and read by any goroutine (Load). The zero WaitSlot
// holds no wait.
type WaitSlot struct {
	// w is the packed Wait: kind (bits 0-7), the sequence number of the
	// poll that recorded it (bits 8-15), the object (bits 16-63). Stored
	// by the poller, loaded by the dump; nothing else pairs with it.
	w atomic.Uint64
}

// Load returns the last wait recorded.
func (s *WaitSlot) Load() Wait { return Wait(s.w.Load()) }

// Store records w; for an executor that resets the slot (a recycled task).
func (s *WaitSlot) Store(w Wait) { s.w.Store(uint64(w)) }

// Clear empties the slot with a plain store, which skips the fence of an
// atomic one (a locked exchange on amd64). It is for an executor reusing
// the slot of a task that no other goroutine can reach: every Load of the
// slot by another goroutine must happen before Clear (for instance, the
// reader held a lock that the executor took after it), and every Load
// after Clear must happen after it (the executor publishes the task, with
// a lock or an atomic, only once Clear returned).
func (s *WaitSlot) Clear() { *(*uint64)(unsafe.Pointer(&s.w)) = 0 }

// Wait is a snapshot of a WaitSlot.
type Wait uint64

// MakeWait packs a wait of kind k on object obj, recorded by poll seq.
func MakeWait(k WaitKind, seq uint8, obj uint64) Wait {
	return Wait(uint64(k) | uint64(seq)<<8 | (obj&MaxWaitObject)<<16)
}

// Kind returns the wait's kind, zero for none.
func (w Wait) Kind() WaitKind { return WaitKind(w) }

// Seq returns the sequence number of the poll that recorded the wait (see
// SetWaitSlot): the wait is current only if that poll is the task's last.
func (w Wait) Seq() uint8 { return uint8(w >> 8) }

// Object returns the wait's object number.
func (w Wait) Object() uint64 { return uint64(w) >> 16 }

// String describes the wait: the kind's name, then its object as the kind
// says ("fd 12", "until 12:00:03.100" in local time, "task 17", "5 (2
// permits)"). The zero Wait is "".
func (w Wait) String() string {
	k := w.Kind()
	p := waitKinds[k].Load()
	if p == nil {
		return ""
	}
	name, obj := p.name, w.Object()
	switch p.obj {
	case WaitFD:
		return name + " fd " + strconv.FormatUint(obj, 10)
	case WaitDeadline:
		return name + " until " + time.UnixMilli(int64(obj)).Format("15:04:05.000")
	case WaitTask:
		return name + " task " + strconv.FormatUint(obj, 10)
	case WaitNumber, WaitLock:
		return name + " " + strconv.FormatUint(obj, 10)
	case WaitCounted:
		return countedString(p, w)
	}
	return name
}

// countedString is Wait.String of w, a WaitCounted wait of kind p.
func countedString(p *waitKindInfo, w Wait) string {
	num, count := w.Counted()
	s := p.name + " " + strconv.FormatUint(num, 10) + " (" + strconv.FormatUint(count, 10)
	if count == MaxWaitCount {
		s += "+"
	}
	unit := p.many
	if count == 1 {
		unit = p.one
	}
	if unit != "" {
		s += " " + unit
	}
	return s + ")"
}

// WaitDeadlineOf is the object number of a WaitDeadline wait ending at t.
func WaitDeadlineOf(t time.Time) uint64 { return uint64(max(t.UnixMilli(), 0)) }

// SetWaitSlot makes slot the place where Waiting records the waits of the
// poll cx is for, the poll numbered seq (the executor counts the task's
// polls; a reader compares the recorded Seq with the task's last poll to
// ignore a wait recorded by an earlier poll). nil means none, as in a new
// Context: Waiting then does nothing. Reset keeps the slot: an executor
// that gives each poll its task's slot calls SetWaitSlot after each Reset.
func (cx *Context) SetWaitSlot(slot *WaitSlot, seq uint8) {
	cx.waits, cx.waitSeq = nil, uint64(seq)<<8
	if slot != nil {
		cx.waits = slot
	}
}

// WaitRecorder keeps, for an executor's tasks, what they wait on: where
// Waiting records the waits of the polls of a Context
// (SetWaitRecorder), for an executor that finds the polled task's place
// itself rather than giving each poll a WaitSlot. *WaitSlot is one.
type WaitRecorder interface {
	// RecordWait records w, the wait of the task being polled, numbered
	// with the poll's sequence number (SetWaitSeq). Called on the
	// polling goroutine, by the leaf futures of the poll.
	RecordWait(w Wait)
}

// RecordWait stores w in the slot, atomically: it makes *WaitSlot a
// WaitRecorder.
func (s *WaitSlot) RecordWait(w Wait) { s.w.Store(uint64(w)) } // w: loaded by the dump

// SetWaitRecorder makes r the recorder of the waits of every poll made
// with cx, until the next SetWaitRecorder or SetWaitSlot; nil means none.
// Reset keeps it: an executor sets it once for a Context it reuses, and
// numbers each poll with SetWaitSeq. Called by the executor owning cx.
func (cx *Context) SetWaitRecorder(r WaitRecorder) { cx.waits = r }

// SetWaitSeq numbers the poll cx is for seq, the sequence number Waiting
// packs into the waits it records (see SetWaitSlot), without changing
// where they are recorded. Reset keeps it. Called by the executor owning
// cx, after Reset.
func (cx *Context) SetWaitSeq(seq uint8) { cx.waitSeq = uint64(seq) << 8 }

// SetTaskID gives the poll cx is for the id of the task polled, which leaf
// futures read with TaskID (a lock records its holder). 0 means none,
// which Reset also sets. Executors call it after Reset.
func (cx *Context) SetTaskID(id uint64) { cx.taskID = id }

// TaskID returns the id of the task being polled, as its executor numbers
// tasks, or 0 when the executor gives none (a goroutine's Context).
func (cx *Context) TaskID() uint64 { return cx.taskID }

// SetSiteRecorder makes r the recorder of the await sites at which the
// polled tasks' async functions suspend (Suspended); nil means none, as in
// a new Context. Reset keeps it: an executor whose recorder serves every
// poll of cx (finding the polled task itself) sets it once, one that gives
// each poll its task's recorder calls it after each Reset.
func (cx *Context) SetSiteRecorder(r SiteRecorder) { cx.sites, cx.siteDone = r, false }

// Waiting records that the task being polled waits on a k (with object
// number obj, as k's WaitObject says), for a task dump. A leaf future calls
// it on the path where it returns not-ready, after registering its Waker;
// when several leaves of one poll do, the last one is recorded. It costs a
// call and an atomic store, and nothing outside an executor that keeps a
// WaitSlot or a WaitRecorder.
func (cx *Context) Waiting(k WaitKind, obj uint64) {
	if cx.waits != nil {
		cx.waits.RecordWait(Wait(uint64(k) | cx.waitSeq | (obj&MaxWaitObject)<<16))
	}
}
