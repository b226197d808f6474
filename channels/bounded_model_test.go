package channels

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
)

// refQueue is the reference of the model tests: a FIFO with a capacity
// (0: unbounded) and a closed flag.
type refQueue struct {
	q      []int
	cap    int
	closed bool
}

func (r *refQueue) send(v int) error {
	switch {
	case r.closed:
		return ErrClosed
	case r.cap > 0 && len(r.q) == r.cap:
		return ErrFull
	}
	r.q = append(r.q, v)
	return nil
}

func (r *refQueue) recv() (int, error) {
	if len(r.q) == 0 {
		if r.closed {
			return 0, ErrClosed
		}
		return 0, ErrEmpty
	}
	v := r.q[0]
	r.q = r.q[1:]
	return v, nil
}

func (r *refQueue) close() bool {
	was := r.closed
	r.closed = true
	return !was
}

// TestBoundedModel runs random single-threaded sequences of every
// operation, futures included (ready at once, or pending and then cancelled
// or completed), against refQueue.
func TestBoundedModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		runBoundedModel(t, rng, iter)
	}
}

// FuzzBoundedModel is TestBoundedModel driven by the fuzzer's bytes, which
// choose the capacity and every operation.
// go test -fuzz FuzzBoundedModel ./channels
func FuzzBoundedModel(f *testing.F) {
	f.Add([]byte{1, 0, 0, 9, 14, 15, 16, 17, 19, 2})
	f.Add([]byte("send, send, recv, close, recv"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		runBoundedModel(t, rand.New(&fuzzSource{b: ops}), 0)
	})
}

// fuzzSource is a rand.Source that replays fuzz input, eight bytes per
// number, then continues with a PCG (zeros would make rand's rejection
// sampling loop forever).
type fuzzSource struct {
	b    []byte
	i    int
	rest rand.PCG
}

func (s *fuzzSource) Uint64() uint64 {
	if s.i >= len(s.b) {
		return s.rest.Uint64()
	}
	var v uint64
	for range 8 {
		v <<= 8
		if s.i < len(s.b) {
			v |= uint64(s.b[s.i])
			s.i++
		}
	}
	return v
}

// runBoundedModel runs one random sequence of 200 operations on a fresh
// channel against refQueue.
func runBoundedModel(t *testing.T, rng *rand.Rand, iter int) {
	cx, _ := mpCx()
	{
		capacity := 1 + rng.IntN(5)
		c := NewBounded[int](capacity)
		ref := &refQueue{cap: capacity}
		next := 0
		for step := 0; step < 200; step++ {
			switch op := rng.IntN(20); {
			case op < 7:
				next++
				require.Equal(t, ref.send(next), c.TrySend(next), "iter %d step %d", iter, step)
			case op < 14:
				v, err := c.TryRecv()
				rv, rerr := ref.recv()
				require.Equal(t, rerr, err)
				require.Equal(t, rv, v)
			case op < 16: // send future: ready now, or pending, then cancelled or completed
				next++
				f := c.Send(next)
				err, ok := f.Poll(cx)
				want := ref.send(next)
				switch want {
				case nil:
					require.True(t, ok)
					require.NoError(t, err)
				case ErrClosed:
					require.True(t, ok)
					require.ErrorIs(t, err, ErrClosed)
				case ErrFull:
					require.False(t, ok)
					if rng.IntN(2) == 0 {
						f.Cancel()
						break
					}
					_, rerr := ref.recv()
					require.NoError(t, rerr)
					_, gerr := c.TryRecv()
					require.NoError(t, gerr)
					err, ok = f.Poll(cx)
					require.True(t, ok)
					require.NoError(t, err)
					require.NoError(t, ref.send(next))
				}
			case op < 18:
				f := c.Recv()
				res, ok := f.Poll(cx)
				rv, rerr := ref.recv()
				if rerr == ErrEmpty {
					require.False(t, ok)
					f.Cancel()
					break
				}
				require.True(t, ok)
				require.Equal(t, rerr, res.Err)
				require.Equal(t, rv, res.Value)
			case op < 19:
				require.Equal(t, len(ref.q), c.Len())
				require.Equal(t, ref.closed, c.IsClosed())
			default:
				if rng.IntN(4) == 0 {
					require.Equal(t, ref.close(), c.Close())
				}
			}
			s, r := c.waiters()
			require.Zero(t, s+r)
		}
	}
}

// Porcupine model of a Bounded: state pQueue, inputs pIn, outputs pOut.
type pQueue struct {
	q      string // the values, one rune each (they are small)
	closed bool
}

type pIn struct {
	op string // trySend, send, tryRecv, recv, close
	v  int
}

type pOut struct {
	v   int
	err string // "", "full", "empty", "closed", "timeout", "true", "false"
}

func boundedModel(capacity int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return pQueue{} },
		Step: func(state, input, output any) (bool, any) {
			s, in, out := state.(pQueue), input.(pIn), output.(pOut)
			switch in.op {
			case "trySend", "send":
				switch out.err {
				case "":
					if s.closed || len(s.q) == capacity {
						return false, s
					}
					return true, pQueue{q: s.q + string(rune(in.v)), closed: s.closed}
				case "full":
					return !s.closed && len(s.q) == capacity, s
				case "closed":
					return s.closed, s
				case "timeout":
					return true, s
				}
			case "tryRecv", "recv":
				switch out.err {
				case "":
					if len(s.q) == 0 || rune(s.q[0]) != rune(out.v) {
						return false, s
					}
					return true, pQueue{q: s.q[1:], closed: s.closed}
				case "empty":
					return len(s.q) == 0 && !s.closed, s
				case "closed":
					return len(s.q) == 0 && s.closed, s
				case "timeout":
					return true, s
				}
			case "close":
				return (out.err == "true") == !s.closed, pQueue{q: s.q, closed: true}
			}
			return false, s
		},
		DescribeOperation: func(input, output any) string {
			return fmt.Sprintf("%s(%d) -> %v", input.(pIn).op, input.(pIn).v, output)
		},
	}
}

// errName names a channel error for the porcupine model.
func errName(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrFull):
		return "full"
	case errors.Is(err, ErrEmpty):
		return "empty"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return err.Error()
}

// TestBoundedLinearizable records many short concurrent histories of every
// tier (TrySend, a Send future driven by future.Block, TryRecv, RecvBlocking,
// Close) and checks each with porcupine against a FIFO with a capacity and
// a closed flag. ErrFull and ErrEmpty must be linearizable too.
func TestBoundedLinearizable(t *testing.T) {
	histories := 300
	if testing.Short() {
		histories = 80
	}
	const clients, opsPer = 6, 15
	for h := 0; h < histories; h++ {
		capacity := 2 + h%2
		c := NewBounded[int](capacity)
		var clock atomic.Int64
		var mu sync.Mutex
		var ops []porcupine.Operation
		var wg sync.WaitGroup
		for cl := 0; cl < clients; cl++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(h), uint64(cl)))
				for i := 0; i < opsPer; i++ {
					in := pIn{v: 1 + cl*opsPer + i}
					var out pOut
					call := clock.Add(1)
					switch k := rng.IntN(100); {
					case k < 30:
						in.op = "trySend"
						out.err = errName(c.TrySend(in.v))
					case k < 45:
						in.op = "send"
						ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
						f := c.Send(in.v)
						err, berr := future.Block(ctx, f)
						cancel()
						if berr != nil {
							err = berr
						}
						out.err = errName(err)
					case k < 75:
						in.op = "tryRecv"
						v, err := c.TryRecv()
						out = pOut{v: v, err: errName(err)}
					case k < 97:
						in.op = "recv"
						ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
						v, err := c.RecvBlocking(ctx)
						cancel()
						out = pOut{v: v, err: errName(err)}
					default:
						in.op = "close"
						out.err = fmt.Sprint(c.Close())
					}
					ret := clock.Add(1)
					mu.Lock()
					ops = append(ops, porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret})
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		res := porcupine.CheckOperationsTimeout(boundedModel(capacity), ops, 10*time.Second)
		if res == porcupine.Illegal {
			slices.SortFunc(ops, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
			for _, o := range ops {
				t.Logf("[%d,%d] c%d %v -> %v", o.Call, o.Return, o.ClientId, o.Input, o.Output)
			}
			t.Fatalf("history %d is not linearizable", h)
		}
		s, r := c.waiters()
		require.Zero(t, s+r)
	}
}
