package blocking_test

// Model-based test: random sequences of submit, double submit, complete and
// shutdown run against a pool and, in lockstep, against a sequential
// reference of the protocol in doc.go. After each step the test waits until
// the pool is quiet (the task the reference says starts has started, and
// Stats equals the reference's counters), so that the reference stays
// deterministic although the workers are goroutines. At the end every
// accepted task must have run or been rejected exactly once.

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	. "github.com/blitz-go/blitz/blocking"
)

// mTask is a task of the model test. Its Run reports its start and blocks
// until the test completes it.
type mTask struct {
	Task
	id       int
	release  chan struct{}
	runs     int  // written by Run, read after the run was observed
	rejects  int  // written by Reject, on the test goroutine
	dropped  bool // rejected by Shutdown without a Reject to call
	accepted bool
}

// refPool is the reference: the state the protocol says the pool is in,
// once quiet.
type refPool struct {
	maxThreads int
	threads    int
	idle       int
	queue      []*mTask
	running    []*mTask
	started    uint64
	ran        uint64
	closed     bool
	report     Report
	// afterClose marks the tasks taken from the queue after Shutdown: they
	// count in Report.Ran when they complete.
	afterClose map[*mTask]bool
}

type modelRun struct {
	t       *testing.T
	rng     *rand.Rand
	p       *Pool
	ref     refPool
	tasks   []*mTask
	startCh chan int // ids of the tasks whose Run began
}

func (m *modelRun) newTask() *mTask {
	mt := &mTask{id: len(m.tasks), release: make(chan struct{})}
	mt.Run = func() {
		mt.runs++
		m.startCh <- mt.id
		<-mt.release
	}
	if m.rng.IntN(2) == 0 {
		mt.Reject = func(err error) {
			require.ErrorIs(m.t, err, ErrClosed)
			mt.rejects++
		}
	}
	m.tasks = append(m.tasks, mt)
	return mt
}

// expectStart waits for the start of task want.
func (m *modelRun) expectStart(want *mTask) {
	m.t.Helper()
	got := receive(m.t, m.startCh, "a task to start")
	require.Equal(m.t, want.id, got, "tasks start in FIFO order")
	m.ref.running = append(m.ref.running, want)
}

// settle waits until Stats match the reference.
func (m *modelRun) settle() {
	m.t.Helper()
	r := &m.ref
	want := Stats{
		Threads: r.threads, Idle: r.idle, Pending: len(r.queue),
		Started: r.started, Ran: r.ran,
	}
	deadline := time.Now().Add(waitLimit)
	for {
		got := m.p.Stats()
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			require.Equal(m.t, want, got, "Stats against the reference")
		}
		time.Sleep(20 * time.Microsecond)
	}
	select {
	case id := <-m.startCh:
		m.t.Fatalf("task %d started, the reference says none", id)
	default:
	}
}

func (m *modelRun) submit() {
	r := &m.ref
	mt := m.newTask()
	err := m.p.Submit(&mt.Task)
	if r.closed {
		require.ErrorIs(m.t, err, ErrClosed)
		return
	}
	require.NoError(m.t, err)
	mt.accepted = true
	switch {
	case r.idle > 0:
		r.idle--
		m.expectStart(mt)
	case r.threads < r.maxThreads:
		r.threads++
		r.started++
		m.expectStart(mt)
	default:
		r.queue = append(r.queue, mt)
	}
}

func (m *modelRun) resubmitQueued() {
	r := &m.ref
	if len(r.queue) == 0 || r.closed {
		return
	}
	mt := r.queue[m.rng.IntN(len(r.queue))]
	require.ErrorIs(m.t, m.p.Submit(&mt.Task), ErrQueued)
}

func (m *modelRun) complete() {
	r := &m.ref
	if len(r.running) == 0 {
		return
	}
	i := m.rng.IntN(len(r.running))
	mt := r.running[i]
	r.running = append(r.running[:i], r.running[i+1:]...)
	close(mt.release)
	r.ran++
	if r.afterClose[mt] {
		r.report.Ran++
	}
	switch {
	case len(r.queue) > 0:
		next := r.queue[0]
		r.queue = r.queue[1:]
		if r.closed {
			r.afterClose[next] = true
		}
		m.expectStart(next)
	case r.closed:
		r.threads--
	default:
		r.idle++
	}
}

// shutdown calls Shutdown with a context that has ended: it applies the
// policy and returns at once.
func (m *modelRun) shutdown() {
	r := &m.ref
	policy := Policy(m.rng.IntN(2))
	if !r.closed {
		r.closed = true
		r.threads -= r.idle
		r.idle = 0
	}
	var rejected []*mTask
	if policy == RejectQueued {
		rejected = r.queue
		r.report.Rejected += len(r.queue)
		r.queue = nil
	}
	before := make([]int, len(rejected))
	for i, mt := range rejected {
		before[i] = mt.rejects
	}
	report, err := m.p.Shutdown(cancelledCtx(), policy)
	require.Equal(m.t, r.report, report)
	if len(r.running) > 0 {
		require.ErrorIs(m.t, err, context.Canceled)
	} // else the woken idle workers may or may not have exited yet
	for i, mt := range rejected {
		if mt.Reject == nil {
			mt.dropped = true
			continue
		}
		require.Equal(m.t, before[i]+1, mt.rejects, "task %d: Reject calls by Shutdown", mt.id)
	}
}

func TestPoolMatchesReference(t *testing.T) {
	runs, steps := 40, 120
	if testing.Short() {
		runs, steps = 10, 80
	}
	for run := range runs {
		seed := uint64(run)*0x9e3779b97f4a7c15 + 1
		m := &modelRun{
			t:       t,
			rng:     rand.New(rand.NewPCG(seed, 7)),
			startCh: make(chan int, 1),
		}
		m.ref.maxThreads = 1 + m.rng.IntN(4)
		m.ref.afterClose = map[*mTask]bool{}
		p, err := New(Config{MaxThreads: m.ref.maxThreads, IdleTimeout: time.Hour})
		require.NoError(t, err)
		m.p = p
		t.Logf("run %d: seed %#x, MaxThreads %d", run, seed, m.ref.maxThreads)

		for range steps {
			switch x := m.rng.IntN(100); {
			case x < 50:
				m.submit()
			case x < 55:
				m.resubmitQueued()
			case x < 97:
				m.complete()
			default:
				m.shutdown()
			}
			m.settle()
		}
		for len(m.ref.running) > 0 {
			m.complete()
			m.settle()
		}
		if !m.ref.closed {
			m.shutdown()
			m.settle()
		}
		report, err := p.Shutdown(context.Background(), RunQueued)
		require.NoError(t, err)
		require.Equal(t, m.ref.report, report)
		require.Equal(t, Stats{Started: m.ref.started, Ran: m.ref.ran}, p.Stats())

		// Exactly once: every accepted task ran or was rejected; the
		// others neither.
		for _, mt := range m.tasks {
			fates := mt.runs + mt.rejects
			if mt.dropped {
				fates++
			}
			if !mt.accepted {
				require.Zero(t, fates, "task %d was refused but ran or was rejected", mt.id)
				continue
			}
			require.Equal(t, 1, fates, "task %d: runs %d, rejects %d, dropped %v",
				mt.id, mt.runs, mt.rejects, mt.dropped)
		}
	}
}
