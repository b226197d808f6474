package blitz

import (
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// signalWaker lets a goroutine wait for an I/O op: a Signal and a Context
// whose Waker wakes it.
type signalWaker struct {
	sig waker.Signal
	cx  future.Context
}

// context returns the Context to submit and poll with.
func (s *signalWaker) context() *future.Context {
	s.cx.Reset(waker.New(&s.sig), nil, nil, future.NoWorker)
	return &s.cx
}

// wait blocks until the Waker was called.
func (s *signalWaker) wait() { <-s.sig.Chan() }
