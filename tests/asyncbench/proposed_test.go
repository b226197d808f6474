package asyncbench

// This file is the generated code of handle, awaitLoop and gather (funcs_async.go)
// edited by hand the way the generator could emit it, written to measure
// what the change would buy before anyone made it: each future awaited
// through the address of a local (future.Await(&rf)) becomes a field of the
// future's own type in the struct, assigned where the local was declared,
// polled with a static call and zeroed once it completes or is cancelled,
// instead of a local that escapes to the heap because its address is stored
// in an interface field. Nothing else changes (the state word, the blocks,
// the other fields), except in gatherProposed, which says what more it
// changes. The generator now does all of this, and more (handle's v is a
// local of Poll, awaitLoop ranges over k with i as its index); this copy
// stays fixed, a hand-edited point of comparison.
// The tests run it beside the others.

import (
	"errors"
	"fmt"
	"io"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// handleProposed is handleAsyncFuture with the awaited futures as fields.
type handleProposed struct {
	state int // the block Poll runs next; -1 once returned, -2 once cancelled
	c     *Conn
	g     *Gate
	total int
	v     int
	rf    ReadFuture              // the read awaited
	wf    WriteFuture             // the write awaited
	gf    syncprim.NotifiedFuture // the wait at the gate awaited
}

// newHandleProposed is handleAsync for handleProposed.
func newHandleProposed(c *Conn, g *Gate) *handleProposed {
	return &handleProposed{c: c, g: g}
}

// Poll runs handle until it awaits a future that is not ready, or returns.
func (f *handleProposed) Poll(cx *future.Context) (_ future.Result[int], _ bool) {
poll:
	for {
		switch f.state {
		case 0:
			f.total = 0
			f.state = 1
			continue poll
		case 1:
			f.rf = f.c.Read()
			f.state = 2
			fallthrough
		case 2:
			r, ready := f.rf.Poll(cx)
			if !ready {
				return
			}
			f.rf = ReadFuture{}
			var err error
			f.v, err = r.Get()
			if errors.Is(err, io.EOF) {
				f.state = 8
				continue poll
			}
			if err != nil {
				f.state = -1
				return future.Result[int]{Value: f.total, Err: err}, true
			}
			switch {
			case f.v < 0:
				f.state = 3
			case f.v%2 == 0:
				f.state = 4
			default:
				f.state = 5
			}
			continue poll
		case 3:
			f.state = -1
			return future.Result[int]{Value: f.total, Err: ErrNegative}, true
		case 4:
			f.wf = f.c.Write(f.v / 2)
			f.state = 6
			continue poll
		case 5:
			f.total += f.v
			f.state = 7
			continue poll
		case 6:
			v2, ready := f.wf.Poll(cx)
			if !ready {
				return
			}
			f.wf = WriteFuture{}
			f.total += v2
			f.state = 7
			continue poll
		case 7:
			f.state = 1
			continue poll
		case 8:
			f.gf = f.g.Wait()
			f.state = 9
			fallthrough
		case 9:
			_, ready := f.gf.Poll(cx)
			if !ready {
				return
			}
			f.gf = syncprim.NotifiedFuture{}
			f.wf = f.c.Write(f.total)
			f.state = 10
			fallthrough
		case 10:
			_, ready := f.wf.Poll(cx)
			if !ready {
				return
			}
			f.wf = WriteFuture{}
			f.state = -1
			return future.Result[int]{Value: f.total, Err: nil}, true
		case -1:
			panic(future.ErrPolledAfterCompletion)
		default:
			panic(future.ErrPolledAfterCancel)
		}
	}
}

// Cancel cancels the future that handle awaits, if any; handle goes no further.
func (f *handleProposed) Cancel() {
	switch f.state {
	case 2:
		future.Cancel(&f.rf)
		f.rf = ReadFuture{}
	case 6, 10:
		future.Cancel(&f.wf)
		f.wf = WriteFuture{}
	case 9:
		future.Cancel(&f.gf)
		f.gf = syncprim.NotifiedFuture{}
	}
	if f.state != -1 {
		f.state = -2
	}
}

// awaitLoopProposed is awaitLoopAsyncFuture with the awaited future as a
// field.
type awaitLoopProposed struct {
	state      int // the block Poll runs next; -1 once returned, -2 once cancelled
	rangeValue int
	rangeIndex int
	k          int
	sum        int
	i          int
	lf         LaterFuture // the future awaited
}

// newAwaitLoopProposed is awaitLoopAsync for awaitLoopProposed.
func newAwaitLoopProposed(k int) *awaitLoopProposed {
	return &awaitLoopProposed{k: k}
}

// Poll runs awaitLoop until it awaits a future that is not ready, or returns.
func (f *awaitLoopProposed) Poll(cx *future.Context) (_ int, _ bool) {
poll:
	for {
		switch f.state {
		case 0:
			f.sum = 0
			f.rangeValue = f.k
			f.rangeIndex = 0
			f.state = 1
			continue poll
		case 1:
			if f.rangeIndex >= f.rangeValue {
				f.state = 4
				continue poll
			}
			f.i = f.rangeIndex
			f.lf = Later(f.i)
			f.state = 2
			fallthrough
		case 2:
			v, ready := f.lf.Poll(cx)
			if !ready {
				return
			}
			f.lf = LaterFuture{}
			f.sum += v
			f.state = 3
			continue poll
		case 3:
			f.rangeIndex++
			f.state = 1
			continue poll
		case 4:
			f.state = -1
			return f.sum, true
		case -1:
			panic(future.ErrPolledAfterCompletion)
		default:
			panic(future.ErrPolledAfterCancel)
		}
	}
}

// Cancel cancels the future that awaitLoop awaits, if any; awaitLoop goes no further.
func (f *awaitLoopProposed) Cancel() {
	switch f.state {
	case 2:
		future.Cancel(&f.lf)
		f.lf = LaterFuture{}
	}
	if f.state != -1 {
		f.state = -2
	}
}

// gatherProposed is gatherAsyncFuture with the awaited future as a field
// and, beyond that, the range loop lowered without copies: the generated
// code keeps rangeValue (a copy of rs), rangeIndex (beside i) and r (the
// range value, a field because the range declares it) although the body
// assigns neither rs nor i and uses r only before its await, so the loop
// can run over rs with i as its index and r as a local of the head block.
type gatherProposed struct {
	state int // the block Poll runs next; -1 once returned, -2 once cancelled
	rs    []channels.OneshotReceiver[int]
	sum   int
	i     int
	rf    channels.OneshotRecvFuture[int] // the receive awaited
}

// newGatherProposed is gatherAsync for gatherProposed.
func newGatherProposed(rs []channels.OneshotReceiver[int]) *gatherProposed {
	return &gatherProposed{rs: rs}
}

// Poll runs gather until it awaits a future that is not ready, or returns.
func (f *gatherProposed) Poll(cx *future.Context) (_ future.Result[int], _ bool) {
poll:
	for {
		switch f.state {
		case 0:
			f.sum = 0
			f.i = 0
			f.state = 1
			continue poll
		case 1:
			if f.i >= len(f.rs) {
				f.state = 4
				continue poll
			}
			r := f.rs[f.i]
			f.rf = *r.Recv()
			f.state = 2
			fallthrough
		case 2:
			res, ready := f.rf.Poll(cx)
			if !ready {
				return
			}
			f.rf = channels.OneshotRecvFuture[int]{}
			v, err := res.Get()
			if err != nil {
				f.state = -1
				return future.Result[int]{Value: f.sum, Err: fmt.Errorf("asyncbench: result %d: %w", f.i, err)}, true
			}
			f.sum += v * (f.i + 1)
			f.state = 3
			continue poll
		case 3:
			f.i++
			f.state = 1
			continue poll
		case 4:
			f.state = -1
			return future.Result[int]{Value: f.sum, Err: nil}, true
		case -1:
			panic(future.ErrPolledAfterCompletion)
		default:
			panic(future.ErrPolledAfterCancel)
		}
	}
}

// Cancel cancels the receive that gather awaits, if any; gather goes no
// further.
func (f *gatherProposed) Cancel() {
	switch f.state {
	case 2:
		future.Cancel(&f.rf)
		f.rf = channels.OneshotRecvFuture[int]{}
	}
	if f.state != -1 {
		f.state = -2
	}
}
