package syncprim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// refSem is the reference: a FIFO queue with partial grants at the head,
// written as plainly as possible. Single-threaded.
type refSem struct {
	free   int
	closed bool
	q      []*refW
}

// refW is one reference acquire; state is what its next poll returns.
type refW struct {
	need, got int
	state     int // rwQueued, rwGranted, rwClosed, rwFinished
}

const (
	rwQueued = iota
	rwGranted
	rwClosed
	rwFinished
)

func (r *refSem) try(n int) bool {
	if n < 0 || r.closed || len(r.q) > 0 || r.free < n {
		return false
	}
	r.free -= n
	return true
}

// acquire is an Acquire's first poll: true when ready at once.
func (r *refSem) acquire(w *refW) (ready bool, closed bool) {
	switch {
	case r.closed:
		return true, true
	case w.need == 0 || (len(r.q) == 0 && r.free >= w.need):
		r.free -= w.need
		return true, false
	}
	if len(r.q) == 0 {
		w.got, r.free = r.free, 0
	}
	w.state = rwQueued
	r.q = append(r.q, w)
	return false, false
}

func (r *refSem) release(n int) {
	for n > 0 && len(r.q) > 0 {
		h := r.q[0]
		take := min(n, h.need-h.got)
		h.got += take
		n -= take
		if h.got == h.need {
			h.state = rwGranted
			r.q = r.q[1:]
		}
	}
	r.free += n
}

func (r *refSem) cancel(w *refW) {
	switch w.state {
	case rwQueued:
		i := slices.Index(r.q, w)
		r.q = slices.Delete(r.q, i, i+1)
		r.release(w.got)
	case rwGranted:
		r.release(w.need)
	}
	w.state = rwFinished
}

func (r *refSem) close() {
	if r.closed {
		return
	}
	r.closed = true
	for _, w := range r.q {
		r.free += w.got
		w.got = 0
		w.state = rwClosed
	}
	r.q = nil
}

// TestSemaphoreModel runs random single-threaded sequences of every
// operation against refSem and compares every observable result: the
// partial-grant, hand-off and cancellation logic in isolation.
func TestSemaphoreModel(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	for round := range rounds {
		runSemaphoreModel(t, rand.New(rand.NewPCG(uint64(round), 7)), round)
	}
}

// FuzzSemaphoreModel is TestSemaphoreModel driven by the fuzzer's bytes: they
// choose the initial permits and every operation, so the fuzzer can steer
// towards sequences of hand-offs, cancels and closes that random seeds miss.
// go test -fuzz FuzzSemaphoreModel ./syncprim
func FuzzSemaphoreModel(f *testing.F) {
	f.Add([]byte{2, 3, 1, 4, 0, 9, 8, 7, 5, 5, 6, 2})
	f.Add([]byte("acquire, release, cancel, close"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		runSemaphoreModel(t, rand.New(&byteSource{b: ops}), 0)
	})
}

// byteSource is a rand.Source that replays fuzz input, eight bytes per
// number, then continues with a PCG, so that the input decides the start of
// a run. (Zeros after the input would make rand's rejection sampling loop
// forever.)
type byteSource struct {
	b    []byte
	i    int
	rest rand.PCG
}

func (s *byteSource) Uint64() uint64 {
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

// runSemaphoreModel runs one random sequence of 60 operations against refSem
// and compares every observable result.
func runSemaphoreModel(t *testing.T, rng *rand.Rand, round int) {
	cx, _ := newCountCx()
	{
		init := rng.IntN(4)
		s := NewSemaphore(init)
		ref := &refSem{free: init}
		type pair struct {
			h *acqHolder
			w *refW
		}
		var live []pair
		held := 0 // permits held by completed acquires, to release later
		for step := range 60 {
			switch op := rng.IntN(10); {
			case op < 2:
				n := rng.IntN(4)
				got := s.TryAcquire(n)
				require.Equal(t, ref.try(n), got, "round %d step %d try(%d)", round, step, n)
				if got {
					held += n
				}
			case op < 4:
				n := rng.IntN(5)
				h := newAcq(s, n)
				w := &refW{need: n}
				ready, closed := ref.acquire(w)
				err, ok := h.f.Poll(cx)
				require.Equal(t, ready, ok, "round %d step %d acquire(%d)", round, step, n)
				if ok {
					require.Equal(t, closed, err != nil)
					if err == nil {
						held += n
					}
					continue
				}
				live = append(live, pair{h, w})
			case op < 6:
				n := rng.IntN(3)
				if rng.IntN(2) == 0 && held > 0 {
					n = min(n, held)
					held -= n
				}
				s.Release(n)
				ref.release(n)
			case op < 8 && len(live) > 0:
				i := rng.IntN(len(live))
				p := live[i]
				err, ok := p.h.f.Poll(cx)
				switch p.w.state {
				case rwQueued:
					require.False(t, ok, "round %d step %d", round, step)
					continue
				case rwGranted:
					require.True(t, ok)
					require.NoError(t, err)
					held += p.w.need
				case rwClosed:
					require.True(t, ok)
					require.ErrorIs(t, err, ErrClosed)
				}
				p.w.state = rwFinished
				live = slices.Delete(live, i, i+1)
			case op < 10 && len(live) > 0:
				i := rng.IntN(len(live))
				live[i].h.f.Cancel()
				ref.cancel(live[i].w)
				live = slices.Delete(live, i, i+1)
			case op == 9 && rng.IntN(20) == 0:
				s.Close()
				ref.close()
			}
			require.Equal(t, ref.free, s.Available(), "round %d step %d", round, step)
			require.Equal(t, len(ref.q), s.waiters(), "round %d step %d", round, step)
			require.Equal(t, ref.closed, s.IsClosed())
		}
		for _, p := range live {
			p.h.f.Cancel()
			ref.cancel(p.w)
		}
		require.Equal(t, ref.free, s.Available())
		require.Equal(t, 0, s.waiters())
	}
}
