package blitz

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sync"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// ErrInvalidStop is what ServeStats.Err wraps when ServeConfig.Stop is
// neither a future nor a context.Context: the server stops at once.
var ErrInvalidStop = errors.New("blitz: ServeConfig.Stop is neither a future nor a context.Context")

// stopWaiter is ServeConfig.Stop, whatever its type: poll reports whether
// it completed (arranging a wake otherwise), cancel lets go of it.
type stopWaiter interface {
	poll(cx *future.Context) bool
	cancel()
}

// stopOf returns the stopWaiter of v: nil for no stop (nil, or a nil
// future), or an error wrapping ErrInvalidStop.
func stopOf(v any) (stopWaiter, error) {
	if v == nil {
		return nil, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil
	}
	// The futures a program stops a server with, without reflection.
	switch f := v.(type) {
	case future.Future[struct{}]:
		return futureStop[struct{}]{f}, nil
	case future.Future[future.Result[os.Signal]]:
		return futureStop[future.Result[os.Signal]]{f}, nil
	case future.Future[error]:
		return futureStop[error]{f}, nil
	case future.Future[future.Result[struct{}]]:
		return futureStop[future.Result[struct{}]]{f}, nil
	case future.Future[time.Time]:
		return futureStop[time.Time]{f}, nil
	case future.Future[bool]:
		return futureStop[bool]{f}, nil
	case context.Context:
		return &contextStop{ctx: f}, nil
	}
	return reflectStop(v)
}

// futureStop is a stop future of value type T.
type futureStop[T any] struct{ f future.Future[T] }

func (s futureStop[T]) poll(cx *future.Context) bool {
	_, ok := s.f.Poll(cx)
	return ok
}

func (s futureStop[T]) cancel() { future.Cancel(s.f) }

// contextStop is a context whose Done starts the stop: a callback
// registered with context.AfterFunc at the first poll wakes the server.
type contextStop struct {
	ctx   context.Context
	mu    sync.Mutex  // guards wk, shared with the AfterFunc callback
	wk    waker.Waker // the server's waker, renewed at each poll
	after func() bool // stops the callback; nil before the first poll; owner (the serving task) only
}

func (s *contextStop) poll(cx *future.Context) bool {
	if s.ctx.Err() != nil {
		return true
	}
	s.mu.Lock()
	s.wk = cx.Waker()
	s.mu.Unlock()
	if s.after == nil {
		s.after = context.AfterFunc(s.ctx, func() {
			s.mu.Lock()
			wk := s.wk
			s.mu.Unlock()
			wk.Wake()
		})
	}
	return s.ctx.Err() != nil
}

func (s *contextStop) cancel() {
	if s.after != nil {
		s.after()
	}
}

// contextPtrType is the parameter type of every Poll method.
var contextPtrType = reflect.TypeFor[*future.Context]()

// reflectStop is the stop of a future whose value type the switch of
// stopOf does not list: its Poll is called through reflection (a few
// hundred nanoseconds, and an allocation, per poll of the server).
func reflectStop(v any) (stopWaiter, error) {
	m := reflect.ValueOf(v).MethodByName("Poll")
	if !m.IsValid() {
		return nil, fmt.Errorf("%w: %T", ErrInvalidStop, v)
	}
	t := m.Type()
	if t.NumIn() != 1 || t.In(0) != contextPtrType || t.NumOut() != 2 || t.Out(1).Kind() != reflect.Bool {
		return nil, fmt.Errorf("%w: %T has no method Poll(*future.Context) (T, bool)", ErrInvalidStop, v)
	}
	return &reflectedStop{v: v, pollM: m}, nil
}

// reflectedStop is a stop future polled through reflection.
type reflectedStop struct {
	v     any
	pollM reflect.Value
}

func (s *reflectedStop) poll(cx *future.Context) bool {
	out := s.pollM.Call([]reflect.Value{reflect.ValueOf(cx)})
	return out[1].Bool()
}

func (s *reflectedStop) cancel() { future.Cancel(s.v) }
