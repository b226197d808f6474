package httpserver

import (
	"testing"
	"time"
)

// The pool parks at most maxIdle goroutines, hands out the most recently
// parked first, and ends the parked ones at close; a goroutine that
// returns after the close is not parked.
func TestHandlerPoolBoundsAndClose(t *testing.T) {
	var p handlerPool
	p.init()
	gs := make([]*handlerG, p.maxIdle+1)
	for i := range gs {
		gs[i] = &handlerG{next: make(chan *exchange, 1)}
	}
	for i := 0; i < p.maxIdle; i++ {
		if !p.put(gs[i]) {
			t.Fatalf("put %d of %d refused", i, p.maxIdle)
		}
	}
	if p.put(gs[p.maxIdle]) {
		t.Fatalf("put past maxIdle (%d) accepted", p.maxIdle)
	}
	if g := p.get(); g != gs[p.maxIdle-1] {
		t.Fatalf("get did not return the last parked goroutine")
	}
	p.close()
	for i := 0; i < p.maxIdle-1; i++ {
		select {
		case ex := <-gs[i].next:
			if ex != nil {
				t.Fatalf("goroutine %d handed an exchange at close", i)
			}
		default:
			t.Fatalf("goroutine %d not told to end at close", i)
		}
	}
	if p.get() != nil {
		t.Fatalf("get after close returned a goroutine")
	}
	if p.put(gs[p.maxIdle]) {
		t.Fatalf("put after close accepted")
	}
}

// A goroutine parked longer than handlerIdleTime is retired when another
// parks.
func TestHandlerPoolRetiresIdle(t *testing.T) {
	var p handlerPool
	p.init()
	old := &handlerG{next: make(chan *exchange, 1)}
	fresh := &handlerG{next: make(chan *exchange, 1)}
	if !p.put(old) {
		t.Fatal("put refused")
	}
	p.mu.Lock()
	old.since = time.Now().Add(-2 * handlerIdleTime)
	p.mu.Unlock()
	if !p.put(fresh) {
		t.Fatal("put refused")
	}
	select {
	case ex := <-old.next:
		if ex != nil {
			t.Fatal("the old goroutine was handed an exchange")
		}
	default:
		t.Fatal("the old goroutine was not retired")
	}
	if g := p.get(); g != fresh {
		t.Fatal("the fresh goroutine is not parked")
	}
	if g := p.get(); g != nil {
		t.Fatal("the retired goroutine is still parked")
	}
}
