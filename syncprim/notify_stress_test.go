package syncprim

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/future"
	"github.com/stretchr/testify/require"
)

// notifyModel is the reference Notify: a permit, a FIFO of polled futures
// and the generation.
type notifyModel struct {
	permit bool
	gen    uint64
	queue  []int          // polled, queued futures in order
	handed map[int]bool   // woken, not yet repolled: true if by NotifyOne
	made   map[int]uint64 // unpolled futures: generation at creation
}

func (m *notifyModel) notifyOne() {
	if len(m.queue) == 0 {
		m.permit = true
		return
	}
	m.handed[m.queue[0]] = true
	m.queue = m.queue[1:]
}

func (m *notifyModel) remove(id int) bool {
	for i, q := range m.queue {
		if q == id {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			return true
		}
	}
	return false
}

// TestNotifyModel applies random operations from one goroutine and
// compares every observable result with the model.
func TestNotifyModel(t *testing.T) {
	steps := 200_000
	if testing.Short() {
		steps = 20_000
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var n Notify
	m := notifyModel{handed: map[int]bool{}, made: map[int]uint64{}}
	_, cx := bnCx()
	futs := map[int]*NotifiedFuture{}
	polled := map[int]bool{}
	next := 0
	pick := func() int {
		for id := range futs {
			return id
		}
		return -1
	}
	for range steps {
		switch op := rng.IntN(7); {
		case op == 0:
			n.NotifyOne()
			m.notifyOne()
		case op == 1 && rng.IntN(4) == 0:
			n.NotifyWaiters()
			m.gen++
			for _, id := range m.queue {
				m.handed[id] = false
			}
			m.queue = nil
		case op == 2:
			require.Equal(t, m.permit, n.TryNotified())
			m.permit = false
		case op == 3 || len(futs) == 0:
			f := new(NotifiedFuture)
			*f = *n.Notified()
			futs[next] = f
			m.made[next] = m.gen
			next++
		case op <= 5: // poll one
			id := pick()
			_, ok := futs[id].Poll(cx)
			want := false
			if !polled[id] {
				polled[id] = true
				switch {
				case m.made[id] != m.gen:
					want = true
				case m.permit:
					want, m.permit = true, false
				default:
					m.queue = append(m.queue, id)
				}
				delete(m.made, id)
			} else if _, h := m.handed[id]; h {
				want = true
				delete(m.handed, id)
			}
			require.Equal(t, want, ok, "future %d", id)
			if ok {
				delete(futs, id)
			}
		default: // cancel one
			id := pick()
			futs[id].Cancel()
			if !m.remove(id) && m.handed[id] {
				m.notifyOne()
			}
			delete(m.handed, id)
			delete(m.made, id)
			delete(futs, id)
		}
		require.Equal(t, len(m.queue), n.waiterCount())
	}
}

// TestNotifyProducersConsumers has goroutines call NotifyOne while tasks
// and goroutines consume notifications: once the producers are done, the
// consumed count plus the stored permit equals the NotifyOne calls that took
// effect, exactly.
func TestNotifyProducersConsumers(t *testing.T) {
	perProducer := 100_000
	if testing.Short() {
		perProducer = 5_000
	}
	const producers, taskConsumers, goConsumers = 3, 3, 3
	var n Notify
	var effective, consumed atomic.Int64
	var stop atomic.Bool
	s := newScheduler(t, 3)
	var hs []func()
	for range taskConsumers {
		var f NotifiedFuture
		waiting := false
		h := spawnFn(s, func(cx *future.Context) bool {
			for {
				if !waiting {
					f = *n.Notified()
					waiting = true
				}
				if _, ok := f.Poll(cx); !ok {
					return false
				}
				waiting = false
				if stop.Load() {
					return true
				}
				consumed.Add(1)
			}
		})
		hs = append(hs, func() { waitAll(t, h) })
	}
	var cwg sync.WaitGroup
	for range goConsumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for {
				if err := n.NotifiedBlocking(context.Background()); err != nil {
					t.Error(err)
					return
				}
				if stop.Load() {
					return
				}
				consumed.Add(1)
			}
		}()
	}
	var pwg sync.WaitGroup
	for range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for i := range perProducer {
				if i%2 == 0 {
					runtime.Gosched() // let consumers queue, so hand-offs happen too
				}
				if n.notifyOne() {
					effective.Add(1)
				}
			}
		}()
	}
	pwg.Wait()
	permit := func() int64 {
		if n.state.Load()&notifyModeMask == notifyNotified {
			return 1
		}
		return 0
	}
	deadline := time.Now().Add(30 * time.Second)
	for consumed.Load()+permit() != effective.Load() {
		require.True(t, time.Now().Before(deadline), "consumed %d + permit %d != %d",
			consumed.Load(), permit(), effective.Load())
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a doubled notification would show now
	got := consumed.Load()
	require.Equal(t, effective.Load(), got+permit())
	t.Logf("%d NotifyOne calls took effect, %d consumed", effective.Load(), got)
	stop.Store(true)
	finished := make(chan struct{})
	go func() {
		cwg.Wait()
		for _, h := range hs {
			h()
		}
		close(finished)
	}()
	for {
		n.NotifyWaiters()
		select {
		case <-finished:
			require.Equal(t, got, consumed.Load(), "consumed after the count settled")
			require.Positive(t, got)
			return
		case <-time.After(time.Millisecond):
		}
	}
}
