package channels

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// Watch is a single-value channel with a version: senders replace (or
// modify) the value, and receivers learn that it changed and read the latest
// value; intermediate values may be skipped, the latest never is.
//
// Protocol. The value and its version live under a read-write lock
// (senders write, Borrow reads); the version is also kept in an atomic,
// stored under the write lock, so that HasChanged and the futures compare
// it with the receiver's last seen version without a lock. Versions only
// grow.
//
// Receivers waiting for a change (tasks and goroutines) sit in one waiter
// list, with an atomic count of them. A receiver registers (counts itself
// in), then re-reads the version and the closed flag; a sender stores the
// version, then reads the count, taking the list's lock only when someone
// waits, and wakes every waiter outside it (PopInto/WakeList). The atomics
// are sequentially consistent, so either the sender sees the waiter or the
// waiter sees the new version: a Changed never misses the last send. A wake
// means "look" (nothing is handed over), so a cancelled wait has nothing to
// pass on.
type Watch[T any] struct {
	// num is the channel's number in task dumps, taken at its first wait
	// (number).
	num    atomic.Uint64
	mu     sync.RWMutex  // guards value; held for writing to change ver and closed
	value  T             // the latest value
	ver    atomic.Uint64 // the version of value: written under mu, read anywhere
	closed atomic.Bool   // set once under mu; read anywhere

	waiting waitSet // receivers waiting for a change
}

// NewWatch returns a watch holding initial, at version 0.
func NewWatch[T any](initial T) *Watch[T] {
	return &Watch[T]{value: initial}
}

// Send replaces the value and notifies the receivers. It returns ErrClosed
// after Close. It never waits (beyond the value lock) and allocates nothing.
func (w *Watch[T]) Send(v T) error {
	w.mu.Lock()
	if w.closed.Load() {
		w.mu.Unlock()
		return ErrClosed
	}
	w.value = v
	w.ver.Add(1)
	w.mu.Unlock()
	w.waiting.wakeAll() // after ver or closed was stored: see waitSet's "Protocol"
	return nil
}

// SendModify calls f with the value under the write lock, so it may modify
// it in place, then notifies the receivers as Send does. It returns ErrClosed
// after Close without calling f. f must not call the Watch or its receivers.
func (w *Watch[T]) SendModify(f func(*T)) error {
	if err := w.modify(f); err != nil {
		return err
	}
	w.waiting.wakeAll() // after ver or closed was stored: see waitSet's "Protocol"
	return nil
}

// modify runs f under the write lock, which a panic in f releases.
func (w *Watch[T]) modify(f func(*T)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed.Load() {
		return ErrClosed
	}
	f(&w.value)
	w.ver.Add(1)
	return nil
}

// Borrow returns a copy of the latest value.
func (w *Watch[T]) Borrow() T {
	w.mu.RLock()
	v := w.value
	w.mu.RUnlock()
	return v
}

// Subscribe returns a receiver that has seen the current version.
func (w *Watch[T]) Subscribe() *WatchReceiver[T] {
	return &WatchReceiver[T]{w: w, seen: w.ver.Load()}
}

// Close closes the watch: Send fails with ErrClosed, and receivers, once
// they have seen the last version, get ErrClosed from HasChanged and
// Changed. The value stays readable. Idempotent.
func (w *Watch[T]) Close() {
	w.mu.Lock()
	was := w.closed.Swap(true)
	w.mu.Unlock()
	if !was {
		w.waiting.wakeAll() // after ver or closed was stored: see waitSet's "Protocol"
	}
}

// waiters reports how many receivers wait (for tests).
func (w *Watch[T]) waiters() int { return w.waiting.len() }

// WatchReceiver observes a Watch. It has a single owner: its methods and
// futures are used by one goroutine or task at a time.
type WatchReceiver[T any] struct {
	w    *Watch[T]
	seen uint64 // the last version marked seen; owner only

	// bw is ChangedBlocking's waiter, so a blocking wait allocates nothing;
	// linked in w.waiting under waiting.mu while the owner waits.
	bw waker.Waiter[struct{}]
}

// Borrow returns a copy of the latest value without marking it seen.
func (r *WatchReceiver[T]) Borrow() T { return r.w.Borrow() }

// BorrowAndUpdate returns a copy of the latest value and marks its version
// seen.
func (r *WatchReceiver[T]) BorrowAndUpdate() T {
	w := r.w
	w.mu.RLock()
	v := w.value
	r.seen = w.ver.Load() // stable under the read lock: pairs with v
	w.mu.RUnlock()
	return v
}

// HasChanged reports whether a version newer than the last seen exists,
// without marking it seen. It returns ErrClosed when the watch is closed
// and nothing is unseen. It never waits and allocates nothing.
func (r *WatchReceiver[T]) HasChanged() (bool, error) {
	w := r.w
	if w.ver.Load() != r.seen {
		return true, nil
	}
	if w.closed.Load() {
		// Close is ordered after every send: one more look is definitive.
		if w.ver.Load() != r.seen {
			return true, nil
		}
		return false, ErrClosed
	}
	return false, nil
}

// check is the ready test of Changed: nil after marking a newer version
// seen, ErrClosed, or errNotYet.
func (r *WatchReceiver[T]) check() error {
	changed, err := r.HasChanged()
	switch {
	case changed:
		r.seen = r.w.ver.Load()
		return nil
	case err != nil:
		return err
	}
	return errNotYet
}

// errNotYet is check's "keep waiting"; it never leaves the package.
var errNotYet = errors.New("channels: watch: not changed yet")

// ready reports whether check would not return errNotYet.
func (r *WatchReceiver[T]) ready() bool {
	return r.w.ver.Load() != r.seen || r.w.closed.Load()
}

// ChangedFuture is the future of WatchReceiver.Changed. Its pointer is a
// future.Future[error] and a future.Canceler. It completes with nil once a
// version newer than the last seen exists (marking it seen), or ErrClosed.
// Its waiter lives inside it, so waiting allocates nothing.
type ChangedFuture[T any] struct {
	_         noCopy
	r         *WatchReceiver[T]
	wt        waker.Waiter[struct{}] // linked in r.w.waiting while waiting; under waiting.mu
	pushed    bool                   // wt was pushed since the last look; owner only
	done      bool                   // owner only
	cancelled bool                   // owner only
}

// Changed returns a future that waits for a version newer than the last
// seen.
func (r *WatchReceiver[T]) Changed() *ChangedFuture[T] {
	return &ChangedFuture[T]{r: r}
}

// Poll completes once the value changed or the watch closed, or waits.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the package doc, "Tiers").
func (f *ChangedFuture[T]) Poll(cx *future.Context) (error, bool) {
	f.checkPoll()
	if !cx.Proceed() {
		return nil, false
	}
	r := f.r
	if f.pushed {
		if !r.ready() && r.w.waiting.keepWaiting(&f.wt, cx.Waker()) {
			cx.Waiting(waitWatchChanged, number(&r.w.num)) // for a task dump: which channel
			return nil, false
		}
		r.w.waiting.unregister(&f.wt)
		f.pushed = false
	}
	for {
		if err := r.check(); err != errNotYet {
			cx.Spend()
			f.done = true
			return err, true
		}
		if r.w.waiting.register(&f.wt, cx.Waker(), r.ready) {
			f.pushed = true
			cx.Waiting(waitWatchChanged, number(&r.w.num)) // for a task dump: which channel
			return nil, false
		}
	}
}

// checkPoll panics on a poll after completion or cancellation.
func (f *ChangedFuture[T]) checkPoll() {
	if f.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if f.cancelled {
		panic(future.ErrPolledAfterCancel)
	}
}

// Cancel removes the waiter; nothing was handed to it, so nothing is lost
// (the change stays unseen). Idempotent; a no-op after completion.
func (f *ChangedFuture[T]) Cancel() {
	if f.done || f.cancelled {
		return
	}
	f.cancelled = true
	if f.pushed {
		f.r.w.waiting.unregister(&f.wt)
		f.pushed = false
	}
}

// ChangedBlocking waits in the calling goroutine for a version newer than
// the last seen, marking it seen, or returns ErrClosed. When ctx is done
// first it returns an error wrapping ctx.Err() and marks nothing seen (a
// change there by then wins: it returns nil).
func (r *WatchReceiver[T]) ChangedBlocking(ctx context.Context) error {
	if err := r.check(); err != errNotYet {
		return err
	}
	sig := getSignal()
	defer putSignal(sig)
	wt := &r.bw
	for {
		if !r.w.waiting.register(wt, waker.New(sig), r.ready) {
			if err := r.check(); err != errNotYet {
				return err
			}
			continue
		}
		for {
			err := sig.Wait(ctx)
			if err == nil && !r.ready() && r.w.waiting.linked(wt) {
				continue // spurious: a late wake meant for an earlier user of sig
			}
			// Woken (perhaps by a send whose version we had already seen)
			// or ctx done.
			r.w.waiting.unregister(wt)
			if cerr := r.check(); cerr != errNotYet {
				return cerr
			}
			if err != nil {
				return fmt.Errorf("channels: watch changed: %w", err)
			}
			break
		}
	}
}
