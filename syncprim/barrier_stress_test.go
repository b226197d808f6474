package syncprim

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

// TestBarrierRoundsMixed runs many rounds with tasks and goroutines as the
// parties: exactly one leader per round, every party sees the same round
// number, and nobody passes round g before all parties of round g arrived.
func TestBarrierRoundsMixed(t *testing.T) {
	const tasks, goroutines = 3, 3
	const parties = tasks + goroutines
	rounds := 10_000
	if testing.Short() {
		rounds = 1_000
	}
	b := NewBarrier(parties)
	arrived := make([]atomic.Int32, rounds)
	leaders := make([]atomic.Int32, rounds)
	check := func(round int, r BarrierResult) {
		if r.Generation != uint64(round) {
			t.Errorf("round %d: generation %d", round, r.Generation)
		}
		if n := arrived[round].Load(); n != parties {
			t.Errorf("round %d: passed with %d arrivals", round, n)
		}
		if r.Leader {
			leaders[round].Add(1)
		}
	}
	s := newScheduler(t, 2)
	var hs []func()
	for range tasks {
		round := 0
		var f BarrierFuture
		started := false
		h := spawnFn(s, func(cx *future.Context) bool {
			for round < rounds {
				if !started {
					arrived[round].Add(1)
					f = *b.Wait()
					started = true
				}
				r, ok := f.Poll(cx)
				if !ok {
					return false
				}
				check(round, r)
				started = false
				round++
			}
			return true
		})
		hs = append(hs, func() { waitAll(t, h) })
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range rounds {
				arrived[round].Add(1)
				r, err := b.WaitBlocking(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				check(round, r)
			}
		}()
	}
	for _, h := range hs {
		h()
	}
	wg.Wait()
	for g := range rounds {
		require.EqualValues(t, 1, leaders[g].Load(), "round %d", g)
	}
	require.Equal(t, 0, b.waiterCount())
}

// barrierModel is the reference: a count per round and the queued futures.
type barrierModel struct {
	n, count int
	gen      uint64
	queued   map[int]uint64 // future id -> round, while queued
	released map[int]uint64 // future id -> round, released but not polled
}

// TestBarrierModel drives futures, cancels and TryWait at random from one
// goroutine and compares every result with the model.
func TestBarrierModel(t *testing.T) {
	steps := 200_000
	if testing.Short() {
		steps = 20_000
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 5} {
		b := NewBarrier(n)
		m := barrierModel{n: n, queued: map[int]uint64{}, released: map[int]uint64{}}
		wk, cx := bnCx()
		futs := map[int]*BarrierFuture{}
		next := 0
		pick := func() (int, bool) {
			for id := range futs { // map order is random enough
				return id, true
			}
			return 0, false
		}
		complete := func() {
			for id, g := range m.queued {
				m.released[id] = g
			}
			clear(m.queued)
			m.count = 0
			m.gen++
		}
		for range steps / 4 {
			switch op := rng.IntN(4); {
			case op == 0 || len(futs) == 0: // a new arrival
				id := next
				next++
				f := new(BarrierFuture)
				*f = *b.Wait()
				wakes := wk.n.Load()
				r, ok := f.Poll(cx)
				if m.count+1 == n {
					require.True(t, ok)
					require.Equal(t, BarrierResult{Leader: true, Generation: m.gen}, r)
					require.EqualValues(t, wakes+int64(len(m.queued)), wk.n.Load())
					complete()
				} else {
					require.False(t, ok)
					m.count++
					m.queued[id] = m.gen
					futs[id] = f
				}
			case op == 1: // repoll one
				id, _ := pick()
				r, ok := futs[id].Poll(cx)
				if g, rel := m.released[id]; rel {
					require.True(t, ok)
					require.Equal(t, BarrierResult{Generation: g}, r)
					delete(m.released, id)
					delete(futs, id)
				} else {
					require.False(t, ok)
				}
			case op == 2: // cancel one
				id, _ := pick()
				futs[id].Cancel()
				if _, q := m.queued[id]; q {
					delete(m.queued, id)
					m.count--
				}
				delete(m.released, id)
				delete(futs, id)
			default:
				r, ok := b.TryWait()
				if m.count+1 == n {
					require.True(t, ok)
					require.Equal(t, BarrierResult{Leader: true, Generation: m.gen}, r)
					complete()
				} else {
					require.False(t, ok)
				}
			}
			require.Equal(t, len(m.queued), b.waiterCount())
		}
		for _, f := range futs {
			f.Cancel()
		}
		require.Equal(t, 0, b.waiterCount())
	}
}

// TestBarrierCancelRacesCompletion races a cancel of a queued future with
// the arrival that completes its round: either the cancel withdrew it
// (the completing arrival then only queued) or the round happened (the
// cancel was a no-op); never both, never neither.
func TestBarrierCancelRacesCompletion(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 2_000
	}
	for range n {
		b := NewBarrier(2)
		_, cx := bnCx()
		f := b.Wait()
		f.Poll(cx)
		var wg sync.WaitGroup
		var led bool
		wg.Add(1)
		go func() { defer wg.Done(); _, led = b.TryWait() }()
		f.Cancel()
		wg.Wait()
		if led {
			require.Equal(t, 0, b.waiterCount())
			_, ok := b.TryWait()
			require.False(t, ok)
		} else {
			_, ok := b.TryWait()
			require.False(t, ok, "the withdrawn arrival still counted")
		}
	}
}
