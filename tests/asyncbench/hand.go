package asyncbench

import (
	"errors"
	"fmt"
	"io"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// The hand-written futures below compute what the async functions of
// funcs.go compute, written the way an expert writes a future against the
// runtime's API: a small state enum, the futures awaited held by value in
// the struct (so awaiting allocates nothing), and only the values that live
// across an await as fields. Each is owned by the task that polls it (the
// poll contract), so no field needs a lock.

// handleState is where handleFuture resumes.
type handleState uint8

const (
	handleRead      handleState = iota // start the next read
	handleReading                      // rf is in flight
	handleWriting                      // wf (the half of an even value) is in flight
	handleWaiting                      // gf is in flight
	handleReplying                     // wf (the total) is in flight
	handleDone                         // returned
	handleCancelled                    // cancelled
)

// handleFuture is handle by hand.
type handleFuture struct {
	c     *Conn
	g     *Gate
	total int
	state handleState
	rf    ReadFuture
	wf    WriteFuture
	gf    syncprim.NotifiedFuture
}

// newHandleFuture returns handle(c, g) as a hand-written future.
func newHandleFuture(c *Conn, g *Gate) *handleFuture {
	return &handleFuture{c: c, g: g}
}

// Poll runs the handler until it waits or returns.
func (h *handleFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	for {
		switch h.state {
		case handleRead:
			h.rf = h.c.Read()
			h.state = handleReading
			fallthrough
		case handleReading:
			r, ok := h.rf.Poll(cx)
			if !ok {
				return future.Result[int]{}, false
			}
			v, err := r.Get()
			switch {
			case errors.Is(err, io.EOF):
				h.gf = h.g.Wait()
				h.state = handleWaiting
			case err != nil:
				return h.finish(err)
			case v < 0:
				return h.finish(ErrNegative)
			case v%2 == 0:
				h.wf = h.c.Write(v / 2)
				h.state = handleWriting
			default:
				h.total += v
				h.state = handleRead
			}
		case handleWriting:
			n, ok := h.wf.Poll(cx)
			if !ok {
				return future.Result[int]{}, false
			}
			h.total += n
			h.state = handleRead
		case handleWaiting:
			if _, ok := h.gf.Poll(cx); !ok {
				return future.Result[int]{}, false
			}
			h.wf = h.c.Write(h.total)
			h.state = handleReplying
			fallthrough
		case handleReplying:
			if _, ok := h.wf.Poll(cx); !ok {
				return future.Result[int]{}, false
			}
			return h.finish(nil)
		case handleDone:
			panic(future.ErrPolledAfterCompletion)
		default:
			panic(future.ErrPolledAfterCancel)
		}
	}
}

// finish completes the handler with the total and err.
func (h *handleFuture) finish(err error) (future.Result[int], bool) {
	h.state = handleDone
	return future.Result[int]{Value: h.total, Err: err}, true
}

// Cancel withdraws the wait at the gate, if the handler is there; the reads
// and writes have nothing registered.
func (h *handleFuture) Cancel() {
	if h.state == handleWaiting {
		h.gf.Cancel()
	}
	if h.state != handleDone {
		h.state = handleCancelled
	}
}

// gatherState is where gatherFuture resumes.
type gatherState uint8

const (
	gatherNext      gatherState = iota // start the next receive
	gatherReceiving                    // rf is in flight
	gatherDone                         // returned
	gatherCancelled                    // cancelled
)

// gatherFuture is gather by hand.
type gatherFuture struct {
	rs    []channels.OneshotReceiver[int]
	i     int
	sum   int
	state gatherState
	rf    channels.OneshotRecvFuture[int]
}

// newGatherFuture returns gather(rs) as a hand-written future.
func newGatherFuture(rs []channels.OneshotReceiver[int]) *gatherFuture {
	return &gatherFuture{rs: rs}
}

// Poll receives the results in order until one is not there yet, or all
// are.
func (g *gatherFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	for {
		switch g.state {
		case gatherNext:
			if g.i == len(g.rs) {
				g.state = gatherDone
				return future.Ok(g.sum), true
			}
			g.rf = *g.rs[g.i].Recv()
			g.state = gatherReceiving
			fallthrough
		case gatherReceiving:
			res, ok := g.rf.Poll(cx)
			if !ok {
				return future.Result[int]{}, false
			}
			v, err := res.Get()
			if err != nil {
				g.state = gatherDone
				return future.Result[int]{Value: g.sum, Err: fmt.Errorf("asyncbench: result %d: %w", g.i, err)}, true
			}
			g.sum += v * (g.i + 1)
			g.i++
			g.state = gatherNext
		case gatherDone:
			panic(future.ErrPolledAfterCompletion)
		default:
			panic(future.ErrPolledAfterCancel)
		}
	}
}

// Cancel withdraws the receive in flight, if any.
func (g *gatherFuture) Cancel() {
	if g.state == gatherReceiving {
		g.rf.Cancel()
	}
	if g.state != gatherDone {
		g.state = gatherCancelled
	}
}

// awaitLoopState is where awaitLoopFuture resumes.
type awaitLoopState uint8

const (
	awaitLoopNext      awaitLoopState = iota // start the next await
	awaitLoopAwaiting                        // lf is in flight
	awaitLoopDone                            // returned
	awaitLoopCancelled                       // cancelled
)

// awaitLoopFuture is awaitLoop by hand.
type awaitLoopFuture struct {
	k, i, sum int
	state     awaitLoopState
	lf        LaterFuture
}

// newAwaitLoopFuture returns awaitLoop(k) as a hand-written future.
func newAwaitLoopFuture(k int) *awaitLoopFuture { return &awaitLoopFuture{k: k} }

// Poll runs the loop until an await is not ready, or the loop ends.
func (a *awaitLoopFuture) Poll(cx *future.Context) (int, bool) {
	for {
		switch a.state {
		case awaitLoopNext:
			if a.i == a.k {
				a.state = awaitLoopDone
				return a.sum, true
			}
			a.lf = Later(a.i)
			a.state = awaitLoopAwaiting
			fallthrough
		case awaitLoopAwaiting:
			v, ok := a.lf.Poll(cx)
			if !ok {
				return 0, false
			}
			a.sum += v
			a.i++
			a.state = awaitLoopNext
		case awaitLoopDone:
			panic(future.ErrPolledAfterCompletion)
		default:
			panic(future.ErrPolledAfterCancel)
		}
	}
}

// Cancel stops the loop; a LaterFuture has nothing registered to withdraw.
func (a *awaitLoopFuture) Cancel() {
	if a.state != awaitLoopDone {
		a.state = awaitLoopCancelled
	}
}
