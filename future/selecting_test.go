package future_test

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/future"
)

// The generated code of a select over futures, written by hand: cases
// added in order, Wait, Poll until a winner, Value.
func TestSelectingByHand(t *testing.T) {
	reg := &future.Registry{}
	var s future.Selecting
	cx, _ := newCx()
	for round := range 3 {
		owned, kept := future.NewProbe[int](reg), future.NewProbe[string](reg)
		c0 := future.AddCase(&s, 0, future.Future[int](owned), true)
		c1 := future.AddCase(&s, 1, future.Future[string](kept), false)
		f := s.Wait(false)
		if _, ok := f.Poll(cx); ok {
			t.Fatalf("round %d: a winner with nothing ready", round)
		}
		kept.Complete("k")
		w, ok := f.Poll(cx)
		if !ok || w != 1 || s.Winner() != 1 || c1.Value() != "k" {
			t.Fatalf("round %d: winner %d (%v), Winner %d", round, w, ok, s.Winner())
		}
		if st := owned.Stats(); st.Cancels != 1 || st.Registered {
			t.Fatalf("round %d: the owned loser: %+v; want cancelled and unregistered", round, st)
		}
		_ = c0
	}
}

// A select whose operands panicked before Wait left its owned futures
// registered: the next execution (case 0 added again) cancels them.
func TestSelectingAbandonedExecutionIsCancelled(t *testing.T) {
	reg := &future.Registry{}
	var s future.Selecting
	cx, _ := newCx()
	p := future.NewProbe[int](reg)
	future.AddCase(&s, 0, future.Future[int](p), true)
	_, _ = s.Wait(false).Poll(cx) // registers p
	// The function goes on without finishing the select (as after a
	// panic between AddCase and Wait in a later execution).
	q := future.NewProbe[int](reg)
	future.AddCase(&s, 0, future.Future[int](q), true)
	if st := p.Stats(); st.Cancels != 1 || st.Registered {
		t.Fatalf("the abandoned case: %+v; want cancelled", st)
	}
	s.Cancel()
	s.Cancel() // idempotent
	if st := q.Stats(); st.Cancels != 1 {
		t.Fatalf("Cancel: %+v; want the owned case cancelled once", st)
	}
}

func TestSelectingAddCaseOutOfOrderPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("AddCase of case 2 after case 0 did not panic")
		}
	}()
	var s future.Selecting
	future.AddCase(&s, 0, future.Ready(1), true)
	future.AddCase(&s, 2, future.Ready(2), true)
}

func TestOnCalledForRealPanicsWithItsSentinel(t *testing.T) {
	for name, f := range map[string]func(){
		"On":     func() { future.On(future.Ready(1)) },
		"OnKeep": func() { future.OnKeep(future.Ready(1)) },
	} {
		func() {
			defer func() {
				err, ok := recover().(error)
				if !ok || !errors.Is(err, future.ErrAwaitOutsideGenerated) {
					t.Fatalf("%s: recovered %v, want future.ErrAwaitOutsideGenerated", name, err)
				}
			}()
			f()
			t.Fatalf("%s returned", name)
		}()
	}
}

// mover is a future.Movable: ready when ready is set, counting cancels in
// a counter it points to.
type mover struct {
	v       int
	ready   bool
	cancels *int
}

func (*mover) MovableBeforePoll() {}

func (m *mover) Poll(*future.Context) (int, bool) { return m.v, m.ready }

func (m *mover) Cancel() { *m.cancels++ }

// AddMovedCase copies the future into storage of the case's own, reused
// by the next execution, polls it there, and cancels it there when it
// loses; nothing is allocated once warm.
func TestSelectingMovedCase(t *testing.T) {
	var s future.Selecting
	cx, _ := newCx()
	cancels := 0
	round := func(i int) {
		a := future.AddMovedCase[int, mover](&s, 0, &mover{v: i, cancels: &cancels}, true)
		b := future.AddMovedCase[int, mover](&s, 1, &mover{v: -i, ready: true, cancels: &cancels}, true)
		w, ok := s.Wait(false).Poll(cx)
		if !ok || w != 1 || b.Value() != -i {
			t.Fatalf("round %d: winner %d (%v)", i, w, ok)
		}
		_ = a
	}
	round(1)
	if cancels != 1 {
		t.Fatalf("the moved loser was cancelled %d times; want once", cancels)
	}
	if allocs := testing.AllocsPerRun(100, func() { round(2) }); allocs != 0 {
		t.Fatalf("a warm select of moved cases allocated %v times", allocs)
	}
}
