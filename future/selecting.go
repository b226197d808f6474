package future

import "errors"

// This file holds the select over futures of async functions: the markers
// On and OnKeep, which a select statement's cases receive from, and
// Selecting and SelectCase, the state that the generated code keeps for
// such a select.

// On marks a case of a select over futures in an async function: the case
// waits for f, and its received value is f's value.
//
//	for {
//		select {
//		case t := <-future.OnKeep(iv): // a tick; iv goes on ticking
//			...
//		case r := <-future.On(jobs.Recv()): // a job, or the channel's close
//			...
//		case <-future.OnKeep(stop): // a signal
//			return nil
//		}
//	}
//
// The generator compiles the select into one wait for whichever case's
// future completes first, as Go's select waits for whichever channel is
// ready. As in Go, the operands of every case are evaluated once, in source
// order, on entering the select; a case whose future is nil is never
// chosen, as a case on a nil channel is not; a default clause runs when no
// case is ready at once; break leaves the select. When several futures are
// ready together, the case tried first turns from one select to the next,
// so that no ready case starves the others (Go chooses at random; this
// choice is deterministic).
//
// The select owns a future given to On: when another case wins, or the
// async function is cancelled while it waits, the future is cancelled
// (a receive that loses takes nothing from its channel). A future given
// to OnKeep stays its owner's: when another case wins it is left pending,
// and a later select or await goes on waiting for the same future; its
// owner cancels it when done with it (defer future.Cancel(iv)). Use OnKeep
// for a future that lives across iterations (an Interval, a signal, a
// stop future, a long receive), On for one made in the case.
//
// Like Await, On is a marker: called other than in such a select, it
// panics with an error that is ErrAwaitOutsideGenerated.
func On[T any](f Future[T]) <-chan T {
	_ = f
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	return nil
}

// OnKeep marks a case of a select over futures whose future the select
// does not own: see On.
func OnKeep[T any](f Future[T]) <-chan T {
	_ = f
	if awaitPanics {
		panic(outsideGenerated(1))
	}
	return nil
}

// Selecting is the state of one select over futures of an async function,
// which the generated code keeps in its state machine and reuses for every
// execution of that select: a program never uses it directly. Its cases
// are added in source order with AddCase (case 0 starts a new execution),
// then Wait returns it as the future of the select, whose value (also
// kept for Winner) is the index of the winning case, or -1 for the default
// clause.
//
// Selecting and its cases are owned by the state machine: one goroutine at
// a time, as for any future.
type Selecting struct {
	cases   []selCase // by case index; reused from one execution to the next
	n       int       // the cases of the current execution
	turn    int       // the case tried first at the next execution
	first   int       // the case tried first in the current execution
	dflt    bool      // the current execution has a default clause
	pending bool      // the current execution waits: its owned cases may be registered
	won     int       // the winner of the last execution that completed; -1 for default
}

// selCase is a SelectCase of any type.
type selCase interface {
	poll(cx *Context) bool
	drop()
}

// SelectCase is one case of a Selecting: its future, whether the select
// owns it, and the value it received when it won.
type SelectCase[T any] struct {
	f     Future[T] // nil when the case has no future (never ready) or is over
	owned bool      // the select cancels f when the case loses
	v     T         // the value received, until Value takes it
	// held is the storage of a moved future (AddMovedCase), which f
	// points into; nil otherwise.
	held interface{ reset() }
}

// AddCase adds case i, waiting for f, to s, and returns it; owned says
// whether the select owns f (On) or not (OnKeep). Case 0 starts a new
// execution of the select: owned futures left registered by an execution
// that did not reach its end (an operand that panicked) are cancelled.
// The case's storage is reused from the last execution when its type is
// the same, so that a select in a loop allocates nothing once warm.
func AddCase[T any](s *Selecting, i int, f Future[T], owned bool) *SelectCase[T] {
	c := addCase[T](s, i)
	c.f, c.owned = f, owned
	return c
}

// AddMovedCase is AddCase for a future.Movable future, which the case
// copies into storage of its own, reused from one execution to the next,
// and polls there: the generated code calls it, with explicit type
// arguments, for a case whose operand is a call returning such a future
// (future.On(ch.Recv())), so that the pointer the call returns does not
// escape and the select allocates nothing.
func AddMovedCase[T, F any, PF interface {
	*F
	Future[T]
}](s *Selecting, i int, f PF, owned bool) *SelectCase[T] {
	c := addCase[T](s, i)
	h, _ := c.held.(*heldFuture[F])
	if h == nil {
		h = new(heldFuture[F])
		c.held = h
	}
	h.val = *f
	c.f, c.owned = PF(&h.val), owned
	return c
}

// heldFuture is the storage of a moved future in its case.
type heldFuture[F any] struct{ val F }

// reset empties the storage, so that the case keeps nothing it no longer
// waits for.
func (h *heldFuture[F]) reset() {
	var zero F
	h.val = zero
}

// addCase starts case i of s: the case's storage, reused when its type is
// the same as at the last execution, emptied. Case 0 starts a new
// execution: owned futures left registered by an execution that did not
// reach its end (an operand that panicked) are cancelled.
func addCase[T any](s *Selecting, i int) *SelectCase[T] {
	if i == 0 {
		s.cancelOwned(-1)
		s.n = 0
	}
	if i != s.n {
		panic(errAddCaseOrder)
	}
	var c *SelectCase[T]
	if i < len(s.cases) {
		c, _ = s.cases[i].(*SelectCase[T])
	}
	if c == nil {
		c = new(SelectCase[T])
		if i < len(s.cases) {
			s.cases[i] = c
		} else {
			s.cases = append(s.cases, c)
		}
	}
	var zero T
	c.f, c.owned, c.v = nil, false, zero
	s.n = i + 1
	s.pending = true
	return c
}

// errAddCaseOrder is the panic of a case added out of order: a bug of the
// code that drives the Selecting (the generator's, or a hand-written one).
var errAddCaseOrder = errors.New("future: Selecting's cases added out of order")

// Value returns the value the case received when it won, and forgets it.
func (c *SelectCase[T]) Value() T {
	v := c.v
	var zero T
	c.v = zero
	return v
}

// poll polls the case's future; on completion it keeps the value and
// lets go of the future.
func (c *SelectCase[T]) poll(cx *Context) bool {
	if c.f == nil {
		return false
	}
	v, ok := c.f.Poll(cx)
	if ok {
		c.v, c.f = v, nil
		if c.held != nil {
			c.held.reset()
		}
	}
	return ok
}

// drop lets go of the case's future, cancelling it if the select owns it.
func (c *SelectCase[T]) drop() {
	f := c.f
	c.f = nil
	if f != nil && c.owned {
		Cancel(f)
	}
	if f != nil && c.held != nil {
		c.held.reset()
	}
}

// Wait ends the adding of cases and returns s as the future of the select:
// hasDefault says whether it has a default clause.
func (s *Selecting) Wait(hasDefault bool) *Selecting {
	s.dflt = hasDefault
	s.first = 0
	if s.n > 0 {
		s.first = s.turn % s.n
		s.turn = s.first + 1
	}
	return s
}

// Poll polls the cases, starting at the one whose turn it is, and
// completes with the index of the first that completes, after cancelling
// the other owned cases; or, when none is ready and the select has a
// default clause, with -1 after cancelling every owned case.
func (s *Selecting) Poll(cx *Context) (int, bool) {
	for k := range s.n {
		i := (s.first + k) % s.n
		if s.cases[i].poll(cx) {
			s.cancelOwned(i)
			s.won = i
			return i, true
		}
	}
	if s.dflt {
		s.cancelOwned(-1)
		s.won = -1
		return -1, true
	}
	return 0, false
}

// Winner returns the value of the last execution that completed: the
// index of the case that won, or -1 for the default clause.
func (s *Selecting) Winner() int { return s.won }

// Cancel cancels every owned case still pending and lets go of the others:
// the async function was cancelled while it waited in the select.
func (s *Selecting) Cancel() { s.cancelOwned(-1) }

// cancelOwned ends the current execution: every case but the winner lets
// go of its future, cancelling it if owned.
func (s *Selecting) cancelOwned(winner int) {
	if !s.pending {
		return
	}
	s.pending = false
	for i := range s.n {
		if i != winner {
			s.cases[i].drop()
		}
	}
}
