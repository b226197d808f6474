package waker_test

import (
	"testing"
	"testing/synctest"

	"github.com/blitz-go/blitz/waker"
)

// TestSignalPoolBubbles: outside a testing/synctest bubble the pool hands
// out Signals that work and recycles them; inside one it hands out
// Signals of their own and keeps none of them, and MayBeInBubble tells
// the two apart.
func TestSignalPoolBubbles(t *testing.T) {
	var sp waker.SignalPool
	if waker.MayBeInBubble() {
		t.Fatal("MayBeInBubble outside any bubble")
	}
	s := sp.Get()
	s.Wake()
	if !s.TryWait() {
		t.Fatal("a pooled Signal lost its wakeup")
	}
	sp.Put(s)

	synctest.Test(t, func(t *testing.T) {
		if !waker.MayBeInBubble() {
			t.Fatal("not MayBeInBubble inside a bubble")
		}
		in := sp.Get()
		in.Wake()
		if !in.TryWait() {
			t.Fatal("a bubble's Signal lost its wakeup")
		}
		sp.Put(in)
		for range 100 {
			if got := sp.Get(); got == in {
				t.Fatal("a bubble's Signal went back to the pool")
			}
		}
	})
}
