package header

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
)

// model is the reference for the state word: the same fields as plain
// struct fields, and each transition written out as the package doc states
// it, with no bit tricks and no CAS.
type model struct {
	lifecycle Lifecycle
	notified  bool
	cancelled bool
	join      bool
	detached  bool
	shield    int
	ref       int
	polls     uint16 // transitions to Running, wrapping
}

// modelOf unpacks s into a model.
func modelOf(s State) model {
	return model{
		lifecycle: s.Lifecycle(), notified: s.Notified(), cancelled: s.Cancelled(),
		join: s.JoinInterest(), detached: s.Detached(), shield: s.ShieldDepth(), ref: s.RefCount(),
		polls: s.Polls(),
	}
}

// state packs m.
func (m model) state() State {
	return MakeState(m.lifecycle, m.notified, m.cancelled, m.join, m.detached, m.shield, m.ref) | State(m.polls)
}

func (m model) effective() bool { return m.cancelled && m.shield == 0 }

// The operations the model and the header both know.
const (
	opSchedule = iota
	opRun
	opIdle
	opComplete
	opCancel
	opAddShield
	opRemoveShield
	opRef
	opUnref
	opDetach
	opYielded
	opCount
)

var opNames = [opCount]string{
	"TransitionToScheduled", "TransitionToRunning", "TransitionToIdle", "TransitionToComplete",
	"Cancel", "AddShield", "RemoveShield", "Ref", "Unref", "Detach",
	"TransitionToYielded",
}

// apply performs op on m. It returns the result in the form applyHeader
// gives it, or panics=true (and m unchanged) where the header must panic
// with ErrBadTransition.
func (m *model) apply(op int) (result string, panics bool) {
	switch op {
	case opSchedule:
		switch m.lifecycle {
		case Idle:
			m.lifecycle, m.notified = Scheduled, false
			return "enqueue", false
		case Scheduled, Running:
			m.notified = true
			return "notified", false
		default:
			return "complete", false
		}
	case opRun:
		if m.lifecycle != Scheduled {
			return "", true
		}
		m.lifecycle, m.notified = Running, false
		m.polls++
		if m.effective() {
			return "abort", false
		}
		return "poll", false
	case opIdle:
		if m.lifecycle != Running {
			return "", true
		}
		if m.effective() {
			return "abort", false
		}
		if m.notified {
			m.lifecycle, m.notified = Scheduled, false
			return "reschedule", false
		}
		m.lifecycle = Idle
		return "waiting", false
	case opYielded:
		if m.lifecycle != Running {
			return "", true
		}
		if m.effective() {
			return "abort", false
		}
		m.lifecycle, m.notified = Scheduled, false
		return "reschedule", false
	case opComplete:
		if m.lifecycle != Running {
			return "", true
		}
		before := m.state()
		m.lifecycle, m.notified = Complete, false
		return before.String(), false
	case opCancel:
		if m.cancelled || m.lifecycle == Complete {
			return "noop", false
		}
		m.cancelled = true
		if m.lifecycle == Idle && m.shield == 0 {
			m.lifecycle = Scheduled
			return "enqueue", false
		}
		return "deferred", false
	case opAddShield:
		if m.shield == MaxShieldDepth {
			return "overflow", false
		}
		m.shield++
		return "ok", false
	case opRemoveShield:
		if m.shield == 0 {
			return "underflow", false
		}
		m.shield--
		return fmt.Sprint(m.effective()), false
	case opRef:
		if m.ref == MaxRefCount {
			return "overflow", false
		}
		m.ref++
		return "ok", false
	case opUnref:
		if m.ref == 0 {
			return "", true
		}
		m.ref--
		return fmt.Sprint(m.ref == 0), false
	case opDetach:
		before := m.state()
		m.join, m.detached = false, true
		return before.String(), false
	}
	panic("model: unknown op")
}

// applyHeader performs op on h and renders its result like model.apply. A
// panic is returned as the recovered value.
func applyHeader(h *Header, op int) (result string, panicked any) {
	defer func() { panicked = recover() }()
	errName := func(err error) string {
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, ErrShieldOverflow), errors.Is(err, ErrRefOverflow):
			return "overflow"
		case errors.Is(err, ErrShieldUnderflow):
			return "underflow"
		}
		return "error " + err.Error()
	}
	switch op {
	case opSchedule:
		return map[ScheduleResult]string{
			ScheduleEnqueue: "enqueue", ScheduleNotified: "notified", ScheduleComplete: "complete",
		}[h.TransitionToScheduled()], nil
	case opRun:
		return map[RunResult]string{RunPoll: "poll", RunAbort: "abort"}[h.TransitionToRunning()], nil
	case opIdle:
		return map[IdleResult]string{
			IdleWaiting: "waiting", IdleReschedule: "reschedule", IdleAbort: "abort",
		}[h.TransitionToIdle()], nil
	case opYielded:
		return map[IdleResult]string{
			IdleWaiting: "waiting", IdleReschedule: "reschedule", IdleAbort: "abort",
		}[h.TransitionToYielded()], nil
	case opComplete:
		return h.TransitionToComplete().String(), nil
	case opCancel:
		return map[CancelResult]string{
			CancelEnqueue: "enqueue", CancelDeferred: "deferred", CancelNoop: "noop",
		}[h.Cancel()], nil
	case opAddShield:
		return errName(h.AddShield()), nil
	case opRemoveShield:
		eff, err := h.RemoveShield()
		if err != nil {
			return errName(err), nil
		}
		return fmt.Sprint(eff), nil
	case opRef:
		return errName(h.Ref()), nil
	case opUnref:
		return fmt.Sprint(h.Unref()), nil
	case opDetach:
		return h.Detach().String(), nil
	}
	panic("applyHeader: unknown op")
}

// modelTask and modelScheduler satisfy Init; the model tests never poll.
type modelTask struct{}

func (modelTask) Poll(*future.Context) bool { return false }
func (modelTask) Abort(error)               {}
func (modelTask) Scheduler() Scheduler      { return modelScheduler{} }

type modelScheduler struct{}

func (modelScheduler) Schedule(*Header) {}

// checker runs one sequence of operations on a header and the model side by
// side.
type checker struct {
	h     Header
	m     model
	trace []string
}

func newChecker(start State) *checker {
	c := &checker{m: modelOf(start)}
	c.h.Init(modelTask{}, false)
	c.h.state.Store(uint64(start))
	c.trace = append(c.trace, "start "+start.String())
	return c
}

// step applies op to both and returns a description of the first
// disagreement, or "".
func (c *checker) step(op int) string {
	before := c.m.state()
	c.trace = append(c.trace, opNames[op])
	want, wantPanic := c.m.apply(op)
	got, gotPanic := applyHeader(&c.h, op)
	fail := func(format string, args ...any) string {
		return fmt.Sprintf("%s from %v: %s\ntrace: %q", opNames[op], before, fmt.Sprintf(format, args...), c.trace)
	}
	if wantPanic {
		err, ok := gotPanic.(error)
		if !ok || !errors.Is(err, ErrBadTransition) {
			return fail("want a panic with ErrBadTransition, got result %q, panic %v", got, gotPanic)
		}
	} else {
		if gotPanic != nil {
			return fail("unexpected panic %v", gotPanic)
		}
		if got != want {
			return fail("result %q, model says %q", got, want)
		}
	}
	if s := c.h.Load(); s != c.m.state() {
		return fail("state %v, model says %v", s, c.m.state())
	}
	return ""
}

// randomStart draws a starting state, biased toward the edges of the
// counted fields so that overflow and underflow come up.
func randomStart(r *rand.Rand) State {
	edge := func(max int) int {
		switch r.IntN(5) {
		case 0:
			return 0
		case 1:
			return 1
		case 2:
			return max - 1
		case 3:
			return max
		}
		return r.IntN(max + 1)
	}
	jd := joinsModel[r.IntN(len(joinsModel))]
	return MakeState(Lifecycle(r.IntN(4)), r.IntN(2) == 0, r.IntN(4) == 0, jd[0], jd[1],
		edge(MaxShieldDepth), edge(MaxRefCount))
}

// joinsModel are the reachable (join interest, detached) pairs.
var joinsModel = [][2]bool{{true, false}, {false, false}, {false, true}}

// TestHeaderMatchesModel applies random sequences of operations to a Header
// and to the model and compares every result and every state.
func TestHeaderMatchesModel(t *testing.T) {
	seqs, steps := 20000, 64
	if testing.Short() {
		seqs = 2000
	}
	r := rand.New(rand.NewPCG(0x5eed, 2))
	for range seqs {
		c := newChecker(randomStart(r))
		for range steps {
			// Weight the lifecycle moves so that sequences go around the
			// lifecycle many times.
			op := r.IntN(opCount + 4)
			if op >= opCount {
				op = []int{opSchedule, opRun, opIdle, opCancel}[op-opCount]
			}
			if msg := c.step(op); msg != "" {
				require.FailNow(t, msg)
			}
		}
	}
}

// TestModelFromEveryStartCoversEveryOp checks every operation once from
// every combination of the fields' interesting values: the model test's
// exhaustive base case.
func TestModelFromEveryStartCoversEveryOp(t *testing.T) {
	for l := range Lifecycle(4) {
		for _, n := range []bool{false, true} {
			for _, cn := range []bool{false, true} {
				for _, jd := range joinsModel {
					for _, sh := range []int{0, 1, MaxShieldDepth} {
						for _, ref := range []int{0, 1, 2, MaxRefCount} {
							for op := range opCount {
								c := newChecker(MakeState(l, n, cn, jd[0], jd[1], sh, ref))
								if msg := c.step(op); msg != "" {
									require.FailNow(t, msg)
								}
							}
						}
					}
				}
			}
		}
	}
}
