package header_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
)

// st is a state word spelled out field by field; S packs it with MakeState.
type st struct {
	l       header.Lifecycle
	n, c    bool // notified, cancelled
	j, d    bool // join interest, detached
	sh, ref int
	p       uint16 // polls
}

// S packs s.
func (s st) S() header.State {
	return header.MakeState(s.l, s.n, s.c, s.j, s.d, s.sh, s.ref) | header.State(s.p)
}

// Which fields a table row owns. A transition's rows spell out the fields the
// transition reads or writes; every other field is a bystander, which
// checkRows sets to each value of the bystander set in turn, in both the
// state before and the expected state after: the transition must give the
// same result and leave the bystander as it was.
type owned uint8

const (
	ownLifecycle owned = 1 << iota
	ownNotified
	ownCancelled
	ownShield
	ownRef
	ownJoin // join interest and detached together
	ownPolls
)

var (
	lifecycles = []header.Lifecycle{header.Idle, header.Scheduled, header.Running, header.Complete}
	bools      = []bool{false, true}
	shields    = []int{0, 1, header.MaxShieldDepth}
	refs       = []int{0, 1, 2, header.MaxRefCount}
	// joins are the reachable pairs of (join interest, detached): spawned with
	// a JoinHandle, spawned without one, detached.
	joins = [][2]bool{{true, false}, {false, false}, {false, true}}
)

// bystanders returns every combination of the fields outside own, applied to
// a row's before and after states.
func bystanders(own owned) []func(st) st {
	fs := []func(st) st{func(s st) st { return s }}
	vary := func(o owned, n int, set func(st, int) st) {
		if own&o != 0 {
			return
		}
		var next []func(st) st
		for _, f := range fs {
			for i := range n {
				next = append(next, func(s st) st { return set(f(s), i) })
			}
		}
		fs = next
	}
	vary(ownLifecycle, len(lifecycles), func(s st, i int) st { s.l = lifecycles[i]; return s })
	vary(ownNotified, 2, func(s st, i int) st { s.n = bools[i]; return s })
	vary(ownCancelled, 2, func(s st, i int) st { s.c = bools[i]; return s })
	vary(ownShield, len(shields), func(s st, i int) st { s.sh = shields[i]; return s })
	vary(ownRef, len(refs), func(s st, i int) st { s.ref = refs[i]; return s })
	vary(ownJoin, len(joins), func(s st, i int) st { s.j, s.d = joins[i][0], joins[i][1]; return s })
	vary(ownPolls, 2, func(s st, i int) st { s.p = [...]uint16{0, 0x1234}[i]; return s })
	return fs
}

// row is one line of a transition table: from the state from, the transition
// returns want (compared with assert.Equal; an error is compared with
// errors.Is) and leaves the state to. If panics is set, the transition must
// panic with an error wrapping ErrBadTransition and leave the state as it
// was.
type row struct {
	from, to st
	want     any
	panics   bool
}

func (r row) String() string {
	if r.panics {
		return fmt.Sprintf("%v/panics", r.from.S())
	}
	return fmt.Sprintf("%v/%v", r.from.S(), r.want)
}

// recovered runs f and returns what it panicked with, or nil.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// checkRows runs every row of a transition table with every bystander
// combination.
func checkRows(t *testing.T, own owned, rows []row, do func(h *header.Header) any) {
	t.Helper()
	vary := bystanders(own)
	for _, r := range rows {
		t.Run(r.String(), func(t *testing.T) {
			for _, by := range vary {
				from := by(r.from).S()
				var h header.Header
				h.Init(nopTask{}, false)
				h.SetStateForTest(from)
				if r.panics {
					v := recovered(func() { do(&h) })
					err, ok := v.(error)
					require.Truef(t, ok, "from %v: no error panic (got %v)", from, v)
					require.ErrorIsf(t, err, header.ErrBadTransition, "from %v", from)
					require.Equalf(t, from, h.Load(), "from %v: state changed by a panicking transition", from)
					continue
				}
				got := do(&h)
				if werr, ok := r.want.(error); ok {
					gerr, _ := got.(error)
					require.ErrorIsf(t, gerr, werr, "from %v", from)
				} else {
					require.Equalf(t, r.want, got, "from %v", from)
				}
				require.Equalf(t, by(r.to).S(), h.Load(), "from %v", from)
			}
		})
	}
}

// nopTask and nopScheduler satisfy Init.
type nopTask struct{}

func (nopTask) Poll(*future.Context) bool   { return false }
func (nopTask) Abort(error)                 {}
func (nopTask) Scheduler() header.Scheduler { return nopScheduler{} }

type nopScheduler struct{}

func (nopScheduler) Schedule(*header.Header) {}

// schedTask is a task that never completes and goes to s when woken.
type schedTask struct {
	nopTask
	s header.Scheduler
}

func (t schedTask) Scheduler() header.Scheduler { return t.s }

func TestTransitionToScheduled(t *testing.T) {
	rows := []row{
		// Idle: the wake moves it to Scheduled and the caller must push it.
		{from: st{l: header.Idle}, to: st{l: header.Scheduled}, want: header.ScheduleEnqueue},
		// An Idle task never has the notified bit, but if it had one the
		// wake clears it: the push is the wake.
		{from: st{l: header.Idle, n: true}, to: st{l: header.Scheduled}, want: header.ScheduleEnqueue},
		// Scheduled or Running: the wake is recorded in the notified bit.
		{from: st{l: header.Scheduled}, to: st{l: header.Scheduled, n: true}, want: header.ScheduleNotified},
		{from: st{l: header.Scheduled, n: true}, to: st{l: header.Scheduled, n: true}, want: header.ScheduleNotified},
		{from: st{l: header.Running}, to: st{l: header.Running, n: true}, want: header.ScheduleNotified},
		{from: st{l: header.Running, n: true}, to: st{l: header.Running, n: true}, want: header.ScheduleNotified},
		// Complete: the wake is ignored.
		{from: st{l: header.Complete}, to: st{l: header.Complete}, want: header.ScheduleComplete},
		{from: st{l: header.Complete, n: true}, to: st{l: header.Complete, n: true}, want: header.ScheduleComplete},
	}
	checkRows(t, ownLifecycle|ownNotified, rows, func(h *header.Header) any { return h.TransitionToScheduled() })
}

func TestTransitionToRunning(t *testing.T) {
	var rows []row
	for _, l := range []header.Lifecycle{header.Idle, header.Running, header.Complete} {
		for _, n := range bools {
			for _, c := range bools {
				for _, sh := range shields {
					rows = append(rows, row{from: st{l: l, n: n, c: c, sh: sh}, panics: true})
				}
			}
		}
	}
	for _, p := range []uint16{0, 1, 0xffff} { // the poll count, wrapping
		rows = append(rows, row{
			from: st{l: header.Scheduled, p: p},
			to:   st{l: header.Running, p: p + 1}, want: header.RunPoll,
		})
	}
	for _, n := range bools {
		for _, sh := range shields {
			// Not cancelled: poll it, and count the poll; the notified bit
			// is cleared, since a wake from now on is a wake during this
			// poll.
			rows = append(rows, row{
				from: st{l: header.Scheduled, n: n, sh: sh},
				to:   st{l: header.Running, sh: sh, p: 1}, want: header.RunPoll,
			})
			// Cancelled: abort it unless a shield defers the cancellation.
			want := header.RunPoll
			if sh == 0 {
				want = header.RunAbort
			}
			rows = append(rows, row{
				from: st{l: header.Scheduled, n: n, c: true, sh: sh},
				to:   st{l: header.Running, c: true, sh: sh, p: 1}, want: want,
			})
		}
	}
	checkRows(t, ownLifecycle|ownNotified|ownCancelled|ownShield|ownPolls, rows,
		func(h *header.Header) any { return h.TransitionToRunning() })
}

func TestTransitionToIdle(t *testing.T) {
	var rows []row
	for _, l := range []header.Lifecycle{header.Idle, header.Scheduled, header.Complete} {
		for _, n := range bools {
			for _, c := range bools {
				for _, sh := range shields {
					rows = append(rows, row{from: st{l: l, n: n, c: c, sh: sh}, panics: true})
				}
			}
		}
	}
	for _, sh := range shields {
		for _, c := range bools {
			if c && sh == 0 {
				continue // effective cancellation, below
			}
			// No wake during the poll: Idle, waiting for one.
			rows = append(rows, row{
				from: st{l: header.Running, c: c, sh: sh},
				to:   st{l: header.Idle, c: c, sh: sh}, want: header.IdleWaiting,
			})
			// A wake during the poll: straight back to Scheduled, bit
			// cleared, in the same CAS.
			rows = append(rows, row{
				from: st{l: header.Running, n: true, c: c, sh: sh},
				to:   st{l: header.Scheduled, c: c, sh: sh}, want: header.IdleReschedule,
			})
		}
	}
	// Effective cancellation: the task stays Running for its abort, whatever
	// the notified bit says.
	for _, n := range bools {
		rows = append(rows, row{
			from: st{l: header.Running, n: n, c: true},
			to:   st{l: header.Running, n: n, c: true}, want: header.IdleAbort,
		})
	}
	checkRows(t, ownLifecycle|ownNotified|ownCancelled|ownShield, rows,
		func(h *header.Header) any { return h.TransitionToIdle() })
}

func TestTransitionToComplete(t *testing.T) {
	// The result is the state before; checkRows compares it with want, so
	// the rows' want is filled in per bystander by the do function: it
	// returns whether the result equals the state before the call.
	var rows []row
	for _, l := range []header.Lifecycle{header.Idle, header.Scheduled, header.Complete} {
		for _, n := range bools {
			rows = append(rows, row{from: st{l: l, n: n}, panics: true})
		}
	}
	for _, n := range bools {
		rows = append(rows, row{
			from: st{l: header.Running, n: n},
			to:   st{l: header.Complete}, want: true,
		})
	}
	checkRows(t, ownLifecycle|ownNotified, rows, func(h *header.Header) any {
		before := h.Load()
		return h.TransitionToComplete() == before
	})
}

func TestTransitionToCompleteAndUnref(t *testing.T) {
	// As TestTransitionToComplete, with the reference count owned too: it
	// must drop exactly one reference in the same step, and refuse (panic,
	// nothing changed) a task with none.
	var rows []row
	for _, l := range []header.Lifecycle{header.Idle, header.Scheduled, header.Complete} {
		for _, n := range bools {
			for _, ref := range []int{0, 1, 2} {
				rows = append(rows, row{from: st{l: l, n: n, ref: ref}, panics: true})
			}
		}
	}
	for _, n := range bools {
		rows = append(rows, row{from: st{l: header.Running, n: n, ref: 0}, panics: true})
		for _, ref := range []int{1, 2, header.MaxRefCount} {
			rows = append(rows, row{
				from: st{l: header.Running, n: n, ref: ref},
				to:   st{l: header.Complete, ref: ref - 1}, want: true,
			})
		}
	}
	checkRows(t, ownLifecycle|ownNotified|ownRef, rows, func(h *header.Header) any {
		before := h.Load()
		return h.TransitionToCompleteAndUnref() == before
	})
}

func TestCancel(t *testing.T) {
	var rows []row
	for _, l := range lifecycles {
		for _, sh := range shields {
			// Already cancelled: nothing to do.
			rows = append(rows, row{
				from: st{l: l, c: true, sh: sh},
				to:   st{l: l, c: true, sh: sh}, want: header.CancelNoop,
			})
			if l == header.Complete {
				// Complete: too late.
				rows = append(rows, row{
					from: st{l: l, sh: sh},
					to:   st{l: l, sh: sh}, want: header.CancelNoop,
				})
				continue
			}
			if l == header.Idle && sh == 0 {
				// Idle, unshielded: queue it so that a worker aborts it.
				rows = append(rows, row{
					from: st{l: l},
					to:   st{l: header.Scheduled, c: true}, want: header.CancelEnqueue,
				})
				continue
			}
			// Queued, running, or shielded: the bit is set, a worker acts
			// on it later (an Idle shielded task stays Idle until woken).
			rows = append(rows, row{
				from: st{l: l, sh: sh},
				to:   st{l: l, c: true, sh: sh}, want: header.CancelDeferred,
			})
		}
	}
	checkRows(t, ownLifecycle|ownCancelled|ownShield, rows, func(h *header.Header) any { return h.Cancel() })
}

// TestTransitionToShutdown: the shutdown claims Idle and Scheduled tasks
// (whatever their shields and notified bit) by moving them to Running with
// the cancelled bit; a Running task only gains the bit, a Complete one
// nothing.
func TestTransitionToShutdown(t *testing.T) {
	var rows []row
	for _, n := range bools {
		for _, c := range bools {
			for _, sh := range shields {
				for _, l := range []header.Lifecycle{header.Idle, header.Scheduled} {
					rows = append(rows, row{
						from: st{l: l, n: n, c: c, sh: sh},
						to:   st{l: header.Running, c: true, sh: sh}, want: true,
					})
				}
				rows = append(rows,
					row{from: st{l: header.Running, n: n, c: c, sh: sh}, to: st{l: header.Running, n: n, c: true, sh: sh}, want: false},
					row{from: st{l: header.Complete, n: n, c: c, sh: sh}, to: st{l: header.Complete, n: n, c: c, sh: sh}, want: false},
				)
			}
		}
	}
	checkRows(t, ownLifecycle|ownNotified|ownCancelled|ownShield, rows, func(h *header.Header) any { return h.TransitionToShutdown() })
}

// TestSchedulerAccessor returns the task's Scheduler.
func TestSchedulerAccessor(t *testing.T) {
	var h header.Header
	s := &countScheduler{}
	h.Init(schedTask{s: s}, false)
	assert.Equal(t, header.Scheduler(s), h.Scheduler())
}

func TestAddShield(t *testing.T) {
	var ok error
	rows := []row{
		{from: st{sh: 0}, to: st{sh: 1}, want: ok},
		{from: st{sh: 1}, to: st{sh: 2}, want: ok},
		{from: st{sh: header.MaxShieldDepth - 1}, to: st{sh: header.MaxShieldDepth}, want: ok},
		{from: st{sh: header.MaxShieldDepth}, to: st{sh: header.MaxShieldDepth}, want: header.ErrShieldOverflow},
	}
	checkRows(t, ownShield, rows, func(h *header.Header) any { return h.AddShield() })
}

func TestRemoveShield(t *testing.T) {
	type res struct {
		effective bool
		err       error
	}
	rows := []row{
		{from: st{}, to: st{}, want: res{false, header.ErrShieldUnderflow}},
		{from: st{c: true}, to: st{c: true}, want: res{false, header.ErrShieldUnderflow}},
		{from: st{sh: 1}, to: st{}, want: res{false, nil}},
		{from: st{sh: 2}, to: st{sh: 1}, want: res{false, nil}},
		// The last shield of a cancelled task: cancellation is now effective.
		{from: st{c: true, sh: 1}, to: st{c: true}, want: res{true, nil}},
		{from: st{c: true, sh: 2}, to: st{c: true, sh: 1}, want: res{false, nil}},
		{from: st{c: true, sh: header.MaxShieldDepth}, to: st{c: true, sh: header.MaxShieldDepth - 1}, want: res{false, nil}},
	}
	checkRows(t, ownCancelled|ownShield, rows, func(h *header.Header) any {
		eff, err := h.RemoveShield()
		if errors.Is(err, header.ErrShieldUnderflow) {
			err = header.ErrShieldUnderflow // the message may carry detail
		}
		return res{eff, err}
	})
}

func TestRef(t *testing.T) {
	var ok error
	rows := []row{
		{from: st{ref: 0}, to: st{ref: 1}, want: ok},
		{from: st{ref: 1}, to: st{ref: 2}, want: ok},
		{from: st{ref: 2}, to: st{ref: 3}, want: ok},
		{from: st{ref: header.MaxRefCount - 1}, to: st{ref: header.MaxRefCount}, want: ok},
		{from: st{ref: header.MaxRefCount}, to: st{ref: header.MaxRefCount}, want: header.ErrRefOverflow},
	}
	checkRows(t, ownRef, rows, func(h *header.Header) any { return h.Ref() })
}

func TestUnref(t *testing.T) {
	rows := []row{
		{from: st{ref: 0}, panics: true},
		{from: st{ref: 1}, to: st{ref: 0}, want: true},
		{from: st{ref: 2}, to: st{ref: 1}, want: false},
		{from: st{ref: header.MaxRefCount}, to: st{ref: header.MaxRefCount - 1}, want: false},
	}
	checkRows(t, ownRef, rows, func(h *header.Header) any { return h.Unref() })
}

func TestDetach(t *testing.T) {
	var rows []row
	for _, j := range bools {
		for _, d := range bools {
			rows = append(rows, row{from: st{j: j, d: d}, to: st{d: true}, want: true})
		}
	}
	checkRows(t, ownJoin, rows, func(h *header.Header) any {
		before := h.Load()
		return h.Detach() == before
	})
}

func TestWakeSchedulesOnlyFromIdle(t *testing.T) {
	for _, l := range lifecycles {
		t.Run(l.String(), func(t *testing.T) {
			var s countScheduler
			var h header.Header
			h.Init(schedTask{s: &s}, true)
			h.SetStateForTest(st{l: l, j: true, ref: 2}.S())
			h.Waker().Wake()
			want := 0
			if l == header.Idle {
				want = 1
			}
			assert.Equal(t, want, s.n)
			h.Wake()
			assert.Equal(t, want, s.n, "a second wake never schedules again")
		})
	}
}

// countScheduler counts Schedule calls; single goroutine only.
type countScheduler struct{ n int }

func (s *countScheduler) Schedule(*header.Header) { s.n++ }

func TestInitSetsIdleWithReferences(t *testing.T) {
	var h header.Header
	task := &struct{ nopTask }{}
	h.Init(task, true)
	assert.Equal(t, st{l: header.Idle, j: true, ref: 2}.S(), h.Load(), "scheduler's and JoinHandle's references")
	assert.Same(t, task, h.Task())
	assert.Same(t, &h, h.Waker().Target(), "the Waker wakes h")

	var h2 header.Header
	h2.Init(nopTask{}, false)
	assert.Equal(t, st{l: header.Idle, ref: 1}.S(), h2.Load(), "scheduler's reference only")
	assert.Nil(t, *h2.QueueNext())
	*h2.QueueNext() = &h
	assert.Same(t, &h, *h2.QueueNext())
}

func TestInitScheduled(t *testing.T) {
	var s countScheduler
	var h header.Header
	task := &schedTask{s: &s}
	h.InitScheduled(task, true)
	assert.Equal(t, st{l: header.Scheduled, j: true, ref: 2}.S(), h.Load(), "scheduled, with both references")
	assert.Same(t, task, h.Task())
	h.Wake()
	assert.Zero(t, s.n, "a wake of a scheduled task is not pushed again")
	assert.True(t, h.Load().Notified())
	assert.Equal(t, header.RunPoll, h.TransitionToRunning())

	var h2 header.Header
	h2.InitScheduled(nopTask{}, false)
	assert.Equal(t, st{l: header.Scheduled, ref: 1}.S(), h2.Load())
	assert.PanicsWithError(t, header.ErrNilTask.Error(), func() { h2.InitScheduled(nil, false) })
}

func TestReinitScheduled(t *testing.T) {
	// Only a Complete header with no reference may be reused; any other
	// state panics and is left as it was.
	for _, l := range lifecycles {
		for _, ref := range []int{0, 1, 2} {
			for _, jd := range joins {
				from := st{l: l, j: jd[0], d: jd[1], c: true, ref: ref}.S()
				var h header.Header
				task := &struct{ nopTask }{}
				h.Init(task, false)
				h.SetStateForTest(from)
				if l != header.Complete || ref != 0 {
					v := recovered(func() { h.ReinitScheduled(true) })
					err, ok := v.(error)
					require.Truef(t, ok, "from %v: no error panic (got %v)", from, v)
					require.ErrorIsf(t, err, header.ErrBadTransition, "from %v", from)
					require.Equalf(t, from, h.Load(), "from %v: changed by a refused reinit", from)
					continue
				}
				h.ReinitScheduled(false)
				require.Equalf(t, st{l: header.Scheduled, ref: 1}.S(), h.Load(), "from %v", from)
				require.Same(t, task, h.Task(), "the task is kept")
				h.SetStateForTest(from)
				h.ReinitScheduled(true)
				require.Equalf(t, st{l: header.Scheduled, j: true, ref: 2}.S(), h.Load(), "from %v", from)
			}
		}
	}
}

func TestSetJoinWaiter(t *testing.T) {
	for _, l := range lifecycles {
		for _, jd := range joins {
			for _, ref := range []int{0, 1, 2} {
				from := st{l: l, j: jd[0], d: jd[1], n: true, ref: ref}.S()
				var h header.Header
				h.Init(nopTask{}, true)
				h.SetStateForTest(from)
				complete := h.SetJoinWaiter()
				if l == header.Complete {
					require.Truef(t, complete, "from %v", from)
					require.Equalf(t, from, h.Load(), "from %v: changed", from)
					continue
				}
				require.Falsef(t, complete, "from %v", from)
				got := h.Load()
				require.Truef(t, got.JoinWaiter(), "from %v: bit not set", from)
				require.Equalf(t, from.String(), strings.Replace(got.String(), "|joinwaiter", "", 1), "from %v: other fields changed", from)
				require.False(t, h.SetJoinWaiter(), "set twice")
				require.Equal(t, got, h.Load(), "set twice: changed")
				// The bit survives the completion, for the completer to see.
				if l == header.Running && ref > 0 {
					require.True(t, h.TransitionToCompleteAndUnref().JoinWaiter())
					require.True(t, h.SetJoinWaiter(), "complete now")
				}
			}
		}
	}
}

func TestInitPanicsOnNil(t *testing.T) {
	var h header.Header
	assert.PanicsWithError(t, header.ErrNilTask.Error(), func() { h.Init(nil, false) })
	assert.PanicsWithError(t, header.ErrNilTask.Error(), func() { h.Init(schedTask{}, false) }, "a task without a Scheduler")
}

func TestMakeStateRoundTripsEveryField(t *testing.T) {
	for _, l := range lifecycles {
		for _, n := range bools {
			for _, c := range bools {
				for _, jd := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					for _, sh := range []int{0, 1, 0x80, header.MaxShieldDepth} {
						for _, ref := range []int{0, 1, 0x800000, header.MaxRefCount} {
							s := header.MakeState(l, n, c, jd[0], jd[1], sh, ref)
							require.Equal(t, l, s.Lifecycle())
							require.Equal(t, n, s.Notified())
							require.Equal(t, c, s.Cancelled())
							require.Equal(t, jd[0], s.JoinInterest())
							require.Equal(t, jd[1], s.Detached())
							require.Equal(t, sh, s.ShieldDepth())
							require.Equal(t, ref, s.RefCount())
							require.Equal(t, c && sh == 0, s.CancellationEffective())
						}
					}
				}
			}
		}
	}
}

func TestMakeStatePanicsOutOfRange(t *testing.T) {
	assert.Panics(t, func() { header.MakeState(header.Idle, false, false, false, false, -1, 0) })
	assert.Panics(t, func() { header.MakeState(header.Idle, false, false, false, false, header.MaxShieldDepth+1, 0) })
	assert.Panics(t, func() { header.MakeState(header.Idle, false, false, false, false, 0, -1) })
	assert.Panics(t, func() { header.MakeState(header.Idle, false, false, false, false, 0, header.MaxRefCount+1) })
}

func TestStateString(t *testing.T) {
	assert.Equal(t, "running|notified|cancelled|join shield=1 ref=2",
		st{l: header.Running, n: true, c: true, j: true, sh: 1, ref: 2}.S().String())
	assert.Equal(t, "complete|detached shield=0 ref=0", st{l: header.Complete, d: true}.S().String())
	assert.Equal(t, "lifecycle(7)", header.Lifecycle(7).String())
}
