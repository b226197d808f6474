package blitz

// Signals as futures: the process's one dispatcher over os/signal, the
// listeners it fans out to, and the SignalStream and SignalFuture built on
// them. See "Signals" in the package documentation.

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// signalBuffer is how many signals a listener keeps for its receiver, and
// the capacity of each os/signal channel.
const signalBuffer = 16

// sigHub is the process's one signal dispatcher (the variable hub). Its
// protocol, in steps:
//
//  1. The first listener for a signal makes the signal's entry: a channel
//     that signal.Notify registers for that signal alone, before the
//     listener's constructor returns, so that a signal sent after it is
//     caught rather than given its default action.
//  2. One goroutine (run) selects on every entry's channel, on the Done
//     channel of every runtime that has a bound listener (step 4), and on
//     changed. A signal received is pushed, under mu, to every listener of
//     its entry; that is the moment a signal counts as delivered, so a
//     listener sees exactly the signals dispatched while it is registered.
//  3. The last listener of a signal to leave stops its channel (signal.Stop)
//     and deletes the entry: the signal gets its previous disposition back.
//     One channel per signal is what makes this exact: os/signal removes
//     signals from a channel only all at once.
//  4. A listener is made without a runtime. The first poll of one of its
//     futures with a Context of a runtime binds it to that runtime (bind),
//     once and for good: it joins byRuntime, and a runtime new to byRuntime
//     pokes changed so that run selects on its Done channel. A runtime
//     already done at the bind closes the listener at once, with
//     ErrShutdown. A listener no runtime polled stays unbound.
//  5. A runtime whose shutdown finished has its bound listeners closed with
//     ErrShutdown (closeRuntime, called by Runtime.Shutdown and by run), so
//     that none outlives it. Bind and closeRuntime both hold mu and the
//     bind checks Done under it: a listener bound while the runtime shuts
//     down is closed by one or the other.
//  6. Every change of the select's channels pokes changed, so that run
//     rebuilds its select; run returns once no listener remains, and the
//     next listener starts another.
type sigHub struct {
	mu sync.Mutex
	// entries maps each signal that has a listener to its entry. Guarded
	// by mu.
	entries map[os.Signal]*sigEntry
	// byRuntime maps each runtime that has a bound listener (step 4) to
	// those listeners. Guarded by mu.
	byRuntime map[*Runtime]map[*sigListener]struct{}
	// listeners counts the registered listeners. Guarded by mu.
	listeners int
	// running says a run goroutine is live: set by the add that starts it,
	// cleared by run as it returns. Guarded by mu.
	running bool
	// changed has capacity 1; a change sends to it without blocking, under
	// mu, and run receives from it. A stale token costs one rebuild.
	changed chan struct{}
}

// sigEntry is one signal's os/signal registration and its listeners.
type sigEntry struct {
	// ch is registered with signal.Notify for one signal; os/signal sends
	// to it without blocking, run receives. Immutable.
	ch chan os.Signal
	// listeners is guarded by hub.mu.
	listeners map[*sigListener]struct{}
}

// hub is the process's signal dispatcher.
var hub = sigHub{changed: make(chan struct{}, 1)}

// add registers l for its signals (step 1), unbound, starting the
// dispatcher if none runs.
// Any goroutine may call it, without hub.mu.
func (h *sigHub) add(l *sigListener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.entries == nil {
		h.entries = make(map[os.Signal]*sigEntry)
		h.byRuntime = make(map[*Runtime]map[*sigListener]struct{})
	}
	for _, sig := range l.sigs {
		e := h.entries[sig]
		if e == nil {
			e = &sigEntry{ch: make(chan os.Signal, signalBuffer), listeners: make(map[*sigListener]struct{})}
			signal.Notify(e.ch, sig)
			h.entries[sig] = e
		}
		e.listeners[l] = struct{}{}
	}
	l.registered = true
	h.listeners++
	if h.running {
		h.pokeLocked()
	} else {
		h.running = true
		go h.run()
	}
}

// bind binds l to rt, the runtime polling one of its futures (step 4), if
// l is not bound yet: l joins rt's listeners, which rt's shutdown closes.
// If rt's shutdown has finished, l is closed with ErrShutdown instead. A
// listener already out of the hub (closed, or a one-shot that has its
// signal) has nothing for a shutdown to close, and is only marked bound.
// Called by SignalFuture.poll, without hub.mu or l.mu.
func (h *sigHub) bind(l *sigListener, rt *Runtime) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.bound.Load() { // another future of l bound it first
		return
	}
	l.bound.Store(true) // store-release under hub.mu; pairs with poll's load
	if !l.registered {
		return
	}
	select {
	case <-rt.sched.Done():
		h.removeLocked(l)
		l.close(errSignalShutdown(), false)
		return
	default:
	}
	l.rt = rt
	rl := h.byRuntime[rt]
	if rl == nil {
		rl = make(map[*sigListener]struct{})
		h.byRuntime[rt] = rl
		h.pokeLocked() // run must select on rt's Done channel
	}
	rl[l] = struct{}{}
}

// remove unregisters l, if it is registered, then closes it with err (nil
// leaves it open, for a one-shot listener whose signal is buffered).
// Idempotent. Any goroutine may call it, without hub.mu or l.mu.
func (h *sigHub) remove(l *sigListener, err error) {
	h.mu.Lock()
	h.removeLocked(l)
	h.mu.Unlock()
	if err != nil {
		l.close(err, false)
	}
}

// removeLocked unregisters l if it is registered, stopping the os/signal
// channel of every signal l was the last listener of.
// hub.mu must be held.
func (h *sigHub) removeLocked(l *sigListener) {
	if !l.registered {
		return
	}
	l.registered = false
	for _, sig := range l.sigs {
		e := h.entries[sig]
		delete(e.listeners, l)
		if len(e.listeners) == 0 {
			signal.Stop(e.ch)
			delete(h.entries, sig)
		}
	}
	if l.rt != nil {
		rl := h.byRuntime[l.rt]
		delete(rl, l)
		if len(rl) == 0 {
			delete(h.byRuntime, l.rt)
		}
	}
	h.listeners--
	h.pokeLocked()
}

// pokeLocked makes run rebuild its select.
// hub.mu must be held.
func (h *sigHub) pokeLocked() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}

// run is the dispatcher goroutine (step 2). It returns once no listener
// remains (step 6).
// Started by add only, with running set.
func (h *sigHub) run() {
	var cases []reflect.SelectCase
	var targets []any // *sigEntry or *Runtime, for cases[1:]
	for {
		h.mu.Lock()
		if h.listeners == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		cases = append(cases[:0], reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.changed)})
		targets = targets[:0]
		for _, e := range h.entries {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(e.ch)})
			targets = append(targets, e)
		}
		for rt := range h.byRuntime {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(rt.sched.Done())})
			targets = append(targets, rt)
		}
		h.mu.Unlock()
		i, v, _ := reflect.Select(cases)
		if i == 0 {
			continue
		}
		switch t := targets[i-1].(type) {
		case *sigEntry:
			h.dispatch(t, v.Interface().(os.Signal))
		case *Runtime:
			h.closeRuntime(t)
		}
	}
}

// dispatch pushes sig to the listeners of e, if e is still sig's entry (a
// signal received from a channel stopped meanwhile goes to no one). A
// one-shot listener leaves the hub with its signal.
// Called by run, and by tests through InjectSignal.
func (h *sigHub) dispatch(e *sigEntry, sig os.Signal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.entries[sig] != e {
		return
	}
	for l := range e.listeners {
		l.push(sig)
		if l.oneShot {
			h.removeLocked(l) // deleting the current key during range is allowed
		}
	}
}

// closeRuntime closes the listeners bound to rt, whose shutdown finished
// (step 5), each in one step with its removal, so that a listener out of
// the hub is a closed one.
// Called by run and by Runtime.Shutdown.
func (h *sigHub) closeRuntime(rt *Runtime) {
	err := errSignalShutdown()
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.byRuntime[rt] {
		h.removeLocked(l) // deleting the current key during range is allowed
		l.close(err, false)
	}
}

// errSignalShutdown returns the error of a listener closed by its runtime's
// shutdown.
func errSignalShutdown() error {
	return fmt.Errorf("%w: %w", ErrSignalStreamClosed, ErrShutdown)
}

// sigListener is one listener of the hub: the state behind a SignalStream
// or a one-shot SignalFuture.
type sigListener struct {
	// sigs are the signals listened to, without duplicates. Immutable.
	sigs []os.Signal
	// oneShot makes the listener leave the hub with its first signal.
	// Immutable.
	oneShot bool
	// registered says the listener is in the hub. Guarded by hub.mu.
	registered bool
	// rt is the runtime the listener is bound to (hub step 4): nil while
	// unbound, and when bind found the listener out of the hub or the
	// runtime done. Written by bind, read by removeLocked, under hub.mu.
	rt *Runtime
	// bound says bind has run for the listener: set once, by bind, under
	// hub.mu; read without a lock by SignalFuture.poll, to skip bind.
	bound atomic.Bool

	// mu guards the fields below. Lock order: hub.mu, then mu.
	mu sync.Mutex
	// buf[:n] are the signals delivered and not yet received, oldest
	// first.
	buf [signalBuffer]os.Signal
	n   int
	// dropped counts the signals coalesced away by a full buffer.
	dropped uint64
	// err is set by close: the error of a receive that finds buf empty.
	err error
	// waiters are the pending receives (SignalFutures).
	waiters waker.List[struct{}]
}

// push buffers sig and wakes the pending receives. When the buffer is full,
// sig coalesces, as the kernel coalesces a signal already pending: it is
// dropped if a like signal is buffered; otherwise it replaces the newest
// buffered signal that has a like one before it, so that every kind of
// signal in a burst stays represented (for a listener of at most
// signalBuffer signals). Either way dropped counts one.
// hub.mu must be held (the dispatcher).
func (l *sigListener) push(sig os.Signal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if l.n < len(l.buf) {
		l.buf[l.n] = sig
		l.n++
	} else {
		l.dropped++
		l.coalesceLocked(sig)
	}
	l.waiters.WakeAll() // Wake never blocks
}

// coalesceLocked fits sig into the full buffer (see push).
// l.mu must be held.
func (l *sigListener) coalesceLocked(sig os.Signal) {
	for _, s := range l.buf[:l.n] {
		if s == sig {
			return
		}
	}
	for j := l.n - 1; j > 0; j-- {
		for _, s := range l.buf[:j] {
			if s == l.buf[j] {
				copy(l.buf[j:], l.buf[j+1:l.n])
				l.buf[l.n-1] = sig
				return
			}
		}
	}
}

// poll is a receive: the oldest buffered signal, else the close error,
// else f waits with wk and poll reports false.
// Called by f's owner.
func (l *sigListener) poll(f *SignalFuture, wk waker.Waker) (os.Signal, error, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		sig := l.buf[0]
		copy(l.buf[:], l.buf[1:l.n])
		l.n--
		l.buf[l.n] = nil
		l.waiters.Remove(&f.w)
		return sig, nil, true
	}
	if l.err != nil {
		l.waiters.Remove(&f.w)
		return nil, l.err, true
	}
	l.waiters.Register(&f.w, wk)
	return nil, nil, false
}

// unwait takes f out of the waiters. Called by f's owner.
func (l *sigListener) unwait(f *SignalFuture) {
	l.mu.Lock()
	l.waiters.Remove(&f.w)
	l.mu.Unlock()
}

// close makes later receives fail with err once the buffer is empty (the
// first close's err wins), emptying it first if drop is set, and wakes the
// pending ones.
// Any goroutine may call it, holding hub.mu or not (hub.mu comes before l.mu).
func (l *sigListener) close(err error, drop bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
	if drop {
		clear(l.buf[:l.n])
		l.n = 0
	}
	l.waiters.WakeAll()
}

// newListener makes a listener of sigs, unbound, and registers it. nil
// signals and duplicates are skipped.
func newListener(oneShot bool, sigs []os.Signal) (*sigListener, error) {
	l := &sigListener{oneShot: oneShot}
	for _, sig := range sigs {
		if sig != nil && !containsSignal(l.sigs, sig) {
			l.sigs = append(l.sigs, sig)
		}
	}
	if len(l.sigs) == 0 {
		return nil, ErrNoSignals
	}
	hub.add(l)
	return l, nil
}

// containsSignal reports whether sigs holds sig.
func containsSignal(sigs []os.Signal, sig os.Signal) bool {
	for _, s := range sigs {
		if s == sig {
			return true
		}
	}
	return false
}

// SignalStream is a listener of signals: every signal of its set that
// arrives between its creation and its Close is delivered to it, whatever
// other listeners of the same signals there are. Signals arriving while no
// Next is pending wait in a buffer of 16; beyond that they coalesce (see
// Dropped). Close it when done: until then the process handles its signals
// instead of taking their default action (a SIGINT does not end it).
//
// A stream needs no runtime to be made. It belongs to the first runtime
// that polls one of its Next futures (a task's poll, or BlockOn's), and
// stays with it: that runtime's shutdown closes the stream, with an error
// wrapping ErrSignalStreamClosed and ErrShutdown, even if Next futures are
// polled on another runtime too (they see it closed); a first poll by a
// runtime already shut down closes it the same way. Polls outside any
// runtime (future.Block, a hand-made future.Context) bind it to none, and
// a stream no runtime polled belongs to none: only Close releases it.
type SignalStream struct {
	l *sigListener
}

// Signals starts listening for sigs (nil entries and duplicates are
// skipped) and returns the stream of them; the signals are caught from
// when it returns, before any Next is polled. It fails with an error
// wrapping ErrNoSignals for an empty list. The stream is closed by Close,
// or by the shutdown of the runtime that first polls one of its Next
// futures (see SignalStream).
// Any goroutine or task may call it.
func Signals(sigs ...os.Signal) (*SignalStream, error) {
	if inBubble() {
		// The process's signals are delivered by goroutines shared by
		// every caller, which a bubble must not start.
		return nil, fmt.Errorf("%w: signals (in a testing/synctest bubble)", ErrSimulated)
	}
	l, err := newListener(false, sigs)
	if err != nil {
		return nil, err
	}
	return &SignalStream{l: l}, nil
}

// Next returns a future of the next signal: the oldest one buffered, or the
// next to arrive. Once the stream is closed it fails with an error wrapping
// ErrSignalStreamClosed. Several Next futures may be pending at once; each
// signal goes to one of them. Cancelling one loses no signal.
// Any goroutine or task may call it.
func (s *SignalStream) Next() *SignalFuture { return &SignalFuture{l: s.l} }

// Close stops the stream: its signals are no longer caught for it (when no
// other listener wants them, they get their default action back), buffered
// signals are dropped, and every pending and later Next fails with
// ErrSignalStreamClosed. Idempotent. Any goroutine or task may call it.
func (s *SignalStream) Close() {
	hub.remove(s.l, nil)
	s.l.close(ErrSignalStreamClosed, true)
}

// Dropped returns how many signals the stream's full buffer coalesced
// away. Any goroutine may call it.
func (s *SignalStream) Dropped() uint64 {
	s.l.mu.Lock()
	defer s.l.mu.Unlock()
	return s.l.dropped
}

// SignalFuture is the future of one signal: SignalStream.Next, Signal,
// Interrupt, Terminate, Hangup. Its pointer is a
// future.Future[future.Result[os.Signal]] and a future.Canceler. It must not
// be copied after its first poll. The zero SignalFuture fails with
// ErrSignalStreamClosed.
type SignalFuture struct {
	_ noCopy
	// l is the listener received from, nil for a future that fails with err.
	l   *sigListener
	err error
	// oneShot says the future owns l (Signal and its kin) and removes it
	// from the hub when done with it.
	oneShot bool
	// w is the future's place among l's waiters. Guarded by l.mu.
	w waker.Waiter[struct{}]
	// done is set when Poll returned the result, cancelled by Cancel.
	done, cancelled bool
}

// Signal returns a future of the first of sigs to arrive after the call:
// a one-shot listener, registered now, that leaves the hub with its signal.
// No runtime is needed to make it, so that a program can pass it to the
// future it runs (blitz.Run(ctx, mainAsync(blitz.Interrupt()))). Like a
// SignalStream, it belongs to the first runtime that polls it, whose
// shutdown completes it with an error wrapping ErrSignalStreamClosed and
// ErrShutdown. It fails with the error Signals would return. Cancel it if
// it is abandoned: until then its signals are caught for it, and a
// shutdown releases it only if its runtime polled it.
// Any goroutine or task may call it.
func Signal(sigs ...os.Signal) *SignalFuture {
	l, err := newListener(true, sigs)
	if err != nil {
		return &SignalFuture{err: err}
	}
	return &SignalFuture{l: l, oneShot: true}
}

// Interrupt is Signal(os.Interrupt): SIGINT on Unix, Ctrl-C or Ctrl-Break
// on Windows.
func Interrupt() *SignalFuture { return Signal(os.Interrupt) }

// Terminate is Signal(SIGTERM); on Windows, SIGTERM is what Go makes of a
// console's close, logoff and shutdown events. Where the platform has no
// SIGTERM the future fails with an error wrapping errors.ErrUnsupported.
func Terminate() *SignalFuture { return platformSignal("SIGTERM", sigTerminate) }

// Hangup is Signal(SIGHUP). On Windows and other platforms without SIGHUP
// the future fails with an error wrapping errors.ErrUnsupported.
func Hangup() *SignalFuture { return platformSignal("SIGHUP", sigHangup) }

// platformSignal is Signal(sig), or a future failing with
// errors.ErrUnsupported for a signal the platform lacks (nil).
func platformSignal(name string, sig os.Signal) *SignalFuture {
	if sig == nil {
		return &SignalFuture{err: fmt.Errorf("blitz: %s: %w", name, errors.ErrUnsupported)}
	}
	return Signal(sig)
}

// Poll completes with the next signal, or with the listener's error once it
// is closed and drained. The first poll by a runtime (cx of a task or of
// BlockOn) binds the listener to that runtime, if none polled it before
// (see SignalStream). Polling after completion panics with
// future.ErrPolledAfterCompletion, after Cancel with
// future.ErrPolledAfterCancel.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the future package, "The cooperative budget").
func (f *SignalFuture) Poll(cx *future.Context) (future.Result[os.Signal], bool) {
	switch {
	case f.cancelled:
		panic(future.ErrPolledAfterCancel)
	case f.done:
		panic(future.ErrPolledAfterCompletion)
	}
	if !cx.Proceed() {
		return future.Result[os.Signal]{}, false
	}
	if h, ok := Current(cx); ok {
		if err := h.rt.refuseSimulated("a signal"); err != nil {
			f.done = true
			return future.Fail[os.Signal](err), true
		}
	}
	v, ok := f.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (f *SignalFuture) poll(cx *future.Context) (future.Result[os.Signal], bool) {
	switch {
	case f.cancelled:
		panic(future.ErrPolledAfterCancel)
	case f.done:
		panic(future.ErrPolledAfterCompletion)
	}
	if f.l == nil {
		f.done = true
		if f.err == nil {
			return future.Fail[os.Signal](ErrSignalStreamClosed), true
		}
		return future.Fail[os.Signal](f.err), true
	}
	if !f.l.bound.Load() { // load-acquire; pairs with bind's store
		if h, ok := Current(cx); ok && h.rt != nil {
			hub.bind(f.l, h.rt)
		}
	}
	sig, err, ok := f.l.poll(f, cx.Waker())
	if !ok {
		return future.Result[os.Signal]{}, false
	}
	f.done = true
	if f.oneShot {
		hub.remove(f.l, nil)
	}
	if err != nil {
		return future.Fail[os.Signal](err), true
	}
	return future.Ok(sig), true
}

// Cancel withdraws the pending receive; a one-shot future also leaves the
// hub, dropping a signal delivered to it and not yet returned. Nothing
// stays registered. Idempotent; it makes SignalFuture a future.Canceler.
func (f *SignalFuture) Cancel() {
	if f.cancelled {
		return
	}
	f.cancelled = true
	if f.l == nil || f.done {
		return
	}
	f.l.unwait(f)
	if f.oneShot {
		hub.remove(f.l, ErrSignalStreamClosed)
	}
}
