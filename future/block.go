package future

import (
	"context"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/waker"
)

// Block polls f on the calling goroutine until it completes, and returns its
// value: the runtime-free bridge from goroutines to futures. It polls with a
// Context like NewContext's, whose Waker is a *waker.Signal of the call's
// own, and between polls it waits on that Signal, so it polls again only
// after a wake and never spins. The Signal and the Context are reused by
// later calls (Block allocates nothing of its own once warm): a Waker taken
// from the Context may be woken after Block returned, which costs a later
// call one spurious poll. A wake that arrives during a poll stays pending
// in the Signal, so none is lost.
//
// If ctx is done before f completes, Block cancels f (Cancel) and returns the
// zero T and an error that wraps both context.Cause(ctx) and ctx.Err(), so
// errors.Is matches either. A future that completes on the poll Block makes
// first wins over a ctx that is already done, as a pending wakeup wins in
// waker.Signal.Wait.
//
// Block takes ownership of f; f must not need a runtime's Services (it sees a
// nil Executor). A nil f is a misuse answered with ErrNilFuture as the
// error, since Block has one to return. Any goroutine may call Block, but
// not a task's Poll: blocking a worker stalls its runtime.
func Block[T any](ctx context.Context, f Future[T]) (T, error) {
	if f == nil {
		var zero T
		return zero, fmt.Errorf("future: block: %w", ErrNilFuture)
	}
	b := GetBlocker()
	checked := false
	for {
		if v, ok := f.Poll(&b.cx); ok {
			b.Put()
			return v, nil
		}
		if !checked {
			checked = true
			if !b.own && waker.MayBeInBubble() {
				// Wait on a channel of the bubble, or the bubble's clock
				// would not move while this goroutine waits: poll again
				// with a Blocker of its own (the future takes the new
				// Waker; a wake of the old one is a spurious wakeup of a
				// later user).
				b.Put()
				b = newBlocker().init()
				continue
			}
		}
		if err := b.sig.Wait(ctx); err != nil {
			Cancel(f)
			b.Put()
			var zero T
			return zero, blockError(ctx, err)
		}
	}
}

// Blocker is what a goroutine polls futures with and waits on between
// polls: a waker.Signal, and a Context whose Waker wakes it. Block uses
// one per call, and so may an executor's own blocking calls (a runtime's
// BlockOn, a JoinHandle's Wait): GetBlocker takes one from a pool and Put
// gives it back, so that such calls allocate nothing of their own once
// warm.
//
// A Waker handed out during one use may fire after the Blocker was put
// back (a future kept it, and completes or is woken later, as a cancelled
// one may). The wake then lands on a later use of the same Blocker as a
// spurious wakeup, which the user absorbs by polling again after every
// wake and returning only on a completed poll, as Block does.
//
// A Blocker is used by one goroutine at a time, between GetBlocker and Put.
type Blocker struct {
	sig waker.Signal
	// wk is the Waker of sig, made once.
	wk waker.Waker
	cx Context
	// taken is set by GetBlocker and cleared by Put, so that a second Put
	// does not give the Blocker to two users at once.
	taken bool
	// own says the Blocker was made in a synctest bubble and does not go
	// to the pool (see newBlocker).
	own bool
}

// blockers holds the Blockers not in use, each with the channel of its
// Signal made outside any testing/synctest bubble (see newBlocker).
var blockers = sync.Pool{New: func() any { return newBlocker() }}

// newBlocker makes a Blocker and the channel of its Signal. The Go runtime
// binds a channel made in a testing/synctest bubble to that bubble, and
// ends the process when a goroutine outside it (or in another) uses it:
// a Blocker made in a bubble is therefore its maker's own, and Put does
// not keep it (waker.MayBeInBubble says whether a goroutine may be in a
// bubble; it reads the clock). The clock is read when the pool makes a
// Blocker, and by Block before it first waits: not on a Block that does
// not wait.
func newBlocker() *Blocker {
	b := new(Blocker)
	b.wk = waker.New(&b.sig)
	b.sig.Chan()
	b.own = waker.MayBeInBubble()
	return b
}

// GetBlocker takes a Blocker, its Context set as NewContext sets one
// whose Waker wakes the Blocker's Signal. Any goroutine may call it, in a
// testing/synctest bubble too (see newBlocker).
func GetBlocker() *Blocker { return blockers.Get().(*Blocker).init() }

// init readies b for a user.
func (b *Blocker) init() *Blocker {
	b.cx = Context{waker: b.wk, worker: NoWorker}
	b.taken = true
	return b
}

// Context returns the Context to poll with. An executor may Reset it with
// its own Services, keeping the Blocker's Waker.
func (b *Blocker) Context() *Context { return &b.cx }

// Waker returns the Waker that wakes the Blocker's Signal.
func (b *Blocker) Waker() waker.Waker { return b.wk }

// Signal returns the Signal to wait on between polls.
func (b *Blocker) Signal() *waker.Signal { return &b.sig }

// Put gives b back. A wakeup left pending (a wake that came during the
// last poll) is dropped, so that the next use does not begin with a
// spurious one, and the Context forgets what it referred to. b must not
// be used after; a second Put does nothing.
func (b *Blocker) Put() {
	if !b.taken {
		return
	}
	b.taken = false
	b.sig.TryWait()
	b.cx = Context{}
	if !b.own { // one made in a bubble stays there
		blockers.Put(b)
	}
}

// blockError is Block's error for a done ctx whose Err is err.
func blockError(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("future: block: %w (%w)", cause, err)
	}
	return fmt.Errorf("future: block: %w", err)
}
