package header_test

import (
	"sync"
	"testing"

	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/waker"
)

// mutexState is the reference for the benchmarks: the same fields as the
// state word that the transitions touch, as plain fields under a
// sync.Mutex.
type mutexState struct {
	mu        sync.Mutex
	lifecycle header.Lifecycle
	notified  bool
}

// wake is TransitionToScheduled under the lock.
func (m *mutexState) wake() (enqueue bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.lifecycle {
	case header.Idle:
		m.lifecycle, m.notified = header.Scheduled, false
		return true
	case header.Scheduled, header.Running:
		m.notified = true
	}
	return false
}

// run is TransitionToRunning under the lock.
func (m *mutexState) run() {
	m.mu.Lock()
	m.lifecycle, m.notified = header.Running, false
	m.mu.Unlock()
}

// idle is TransitionToIdle under the lock.
func (m *mutexState) idle() (reschedule bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.notified {
		m.lifecycle, m.notified = header.Scheduled, false
		return true
	}
	m.lifecycle = header.Idle
	return false
}

// benchHeader returns an initialised header with a no-op scheduler.
func benchHeader() *header.Header {
	h := &header.Header{}
	h.Init(nopTask{}, true)
	return h
}

// BenchmarkWakeIdle: a wake of an Idle task (Idle -> Scheduled and the
// scheduler's no-op Schedule), then back to Idle through a poll
// (TransitionToRunning, TransitionToIdle).
func BenchmarkWakeIdle(b *testing.B) {
	b.Run("header", func(b *testing.B) {
		h := benchHeader()
		b.ReportAllocs()
		for b.Loop() {
			h.Wake()
			h.TransitionToRunning()
			if h.TransitionToIdle() != header.IdleWaiting {
				b.Fatal("not idle")
			}
		}
	})
	b.Run("mutex", func(b *testing.B) {
		var m mutexState
		var s nopScheduler
		b.ReportAllocs()
		for b.Loop() {
			if m.wake() {
				s.Schedule(nil)
			}
			m.run()
			if m.idle() {
				b.Fatal("not idle")
			}
		}
	})
}

// BenchmarkWakeWhileRunning: the notified path. A wake of a Running task sets
// the notified bit, TransitionToIdle turns it into a reschedule, and
// TransitionToRunning starts the next poll.
func BenchmarkWakeWhileRunning(b *testing.B) {
	b.Run("header", func(b *testing.B) {
		h := benchHeader()
		h.Wake()
		h.TransitionToRunning()
		b.ReportAllocs()
		for b.Loop() {
			h.Wake()
			if h.TransitionToIdle() != header.IdleReschedule {
				b.Fatal("not rescheduled")
			}
			h.TransitionToRunning()
		}
	})
	b.Run("mutex", func(b *testing.B) {
		m := mutexState{lifecycle: header.Running}
		b.ReportAllocs()
		for b.Loop() {
			m.wake()
			if !m.idle() {
				b.Fatal("not rescheduled")
			}
			m.run()
		}
	})
}

// BenchmarkPollCycle: TransitionToRunning and TransitionToIdle, the two
// transitions around every poll. The state is put back to Scheduled with a
// plain store (an atomic store for the header, a field write for the mutex),
// outside the measured transitions' logic.
func BenchmarkPollCycle(b *testing.B) {
	b.Run("header", func(b *testing.B) {
		h := benchHeader()
		scheduled := header.MakeState(header.Scheduled, false, false, true, false, 0, 2)
		b.ReportAllocs()
		for b.Loop() {
			h.SetStateForTest(scheduled)
			h.TransitionToRunning()
			if h.TransitionToIdle() != header.IdleWaiting {
				b.Fatal("not idle")
			}
		}
	})
	b.Run("mutex", func(b *testing.B) {
		var m mutexState
		b.ReportAllocs()
		for b.Loop() {
			m.lifecycle = header.Scheduled
			m.run()
			if m.idle() {
				b.Fatal("not idle")
			}
		}
	})
}

// sinkWaker keeps BenchmarkWaker's result alive.
var sinkWaker waker.Waker

// BenchmarkWaker: the Waker a worker hands to every poll, built on each
// call (waker.New and its check of the pointer's type).
func BenchmarkWaker(b *testing.B) {
	h := benchHeader()
	for range b.N {
		sinkWaker = h.Waker()
	}
}
