package waker_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/blitz-go/blitz/waker"
)

// future stands for a primitive's future with its Waiter embedded.
type future struct {
	waiter waker.Waiter[int]
	task   counter
}

func TestNewOfAPointerDoesNotAllocate(t *testing.T) {
	c := &counter{}
	var sink waker.Waker
	allocs := testing.AllocsPerRun(100, func() { sink = waker.New(c) })
	assert.Zero(t, allocs)
	assert.False(t, sink.IsZero())
}

func TestListOperationsDoNotAllocate(t *testing.T) {
	var l waker.List[int]
	fs := make([]future, 8)
	wks := make([]waker.Waker, len(fs))
	for i := range fs {
		wks[i] = waker.New(&fs[i].task)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		for i := range fs {
			l.PushBack(&fs[i].waiter, wks[i])
		}
		l.Remove(&fs[3].waiter)
		l.WakeOne()
		l.PushFront(&fs[3].waiter, waker.New(&fs[3].task))
		l.WakeAll()
	}), "PushBack, PushFront, Remove, WakeOne, WakeAll")

	assert.Zero(t, testing.AllocsPerRun(100, func() {
		var wl waker.WakeList
		for i := range fs {
			l.PushBack(&fs[i].waiter, wks[i])
		}
		l.PopInto(&wl)
		wl.WakeAll()
	}), "PopInto, WakeAll on a local WakeList")
}

func TestSignalWakeAndTryWaitDoNotAllocateAfterFirstUse(t *testing.T) {
	var s waker.Signal
	wk := waker.New(&s)
	s.TryWait() // first use makes the channel
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		wk.Wake()
		s.TryWait()
	}))
}
