package waker_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/waker"
)

// expectPanic fails t unless f panics with a value that errors.Is target.
func expectPanic(t *testing.T, target error, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		err, ok := r.(error)
		require.Truef(t, ok, "want a panic with %v, got %v", target, r)
		assert.ErrorIs(t, err, target)
	}()
	f()
}

func TestZeroWakerWakeIsNoop(t *testing.T) {
	var wk waker.Waker
	assert.True(t, wk.IsZero())
	assert.Nil(t, wk.Target())
	wk.Wake() // must not panic
}

func TestNewWakesItsTarget(t *testing.T) {
	var c counter
	wk := waker.New(&c)
	assert.False(t, wk.IsZero())
	wk.Wake()
	wk.Wake()
	assert.EqualValues(t, 2, c.n.Load(), "every Wake reaches a counter, which does not coalesce")
	assert.Same(t, &c, wk.Target())
}

func TestWillWakeReportsSameTargetOnly(t *testing.T) {
	var a, b counter
	assert.True(t, waker.New(&a).WillWake(waker.New(&a)))
	assert.False(t, waker.New(&a).WillWake(waker.New(&b)))
	assert.False(t, waker.Waker{}.WillWake(waker.Waker{}), "a zero Waker is always worth replacing")
	assert.False(t, waker.New(&a).WillWake(waker.Waker{}))
	assert.False(t, waker.Waker{}.WillWake(waker.New(&a)))
	assert.True(t, waker.Noop().WillWake(waker.Noop()))
	assert.False(t, waker.Noop().IsZero())
	f := func() {}
	assert.False(t, waker.Func(f).WillWake(waker.Func(f)), "each Func is its own target")
	fw := waker.Func(f)
	assert.True(t, fw.WillWake(fw))
	assert.True(t, waker.New(&a) == waker.New(&a), "Wakers compare with ==")
}

func TestFuncWakerCallsTheFunction(t *testing.T) {
	n := 0
	wk := waker.Func(func() { n++ })
	wk.Wake()
	waker.Noop().Wake()
	assert.Equal(t, 1, n)
}

// sliceWakeable is a Wakeable of an incomparable type.
type sliceWakeable []int

func (sliceWakeable) Wake() {}

func TestNewMisusePanics(t *testing.T) {
	expectPanic(t, waker.ErrNilWakeable, func() { waker.New(nil) })
	expectPanic(t, waker.ErrNilWakeable, func() { waker.Func(nil) })
	expectPanic(t, waker.ErrIncomparable, func() { waker.New(sliceWakeable{1}) })
}

func TestSentinelErrorsCarryThePackagePrefix(t *testing.T) {
	for _, err := range []error{
		waker.ErrNilWakeable, waker.ErrIncomparable, waker.ErrNilWaiter,
		waker.ErrWaiterLinked, waker.ErrForeignWaiter, waker.ErrWakeListFull,
	} {
		assert.Regexp(t, "^waker: ", err.Error())
		assert.False(t, errors.Is(err, waker.ErrNilWaiter) && err != waker.ErrNilWaiter)
	}
}
