package channels

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// ledger accounts for every message of a stress test: each id must end up
// received exactly once, or returned to its sender (a SendError or a failed
// try), or never sent at all (its producer stopped at the close).
type ledger struct {
	received []atomic.Uint32
	returned []atomic.Uint32
	skipped  []atomic.Uint32
	count    atomic.Int64 // messages received so far
}

func newLedger(n int) *ledger {
	return &ledger{
		received: make([]atomic.Uint32, n),
		returned: make([]atomic.Uint32, n),
		skipped:  make([]atomic.Uint32, n),
	}
}

func (l *ledger) recv(v int) { l.received[v].Add(1); l.count.Add(1) }

// check verifies the exactly-once rule for every id.
func (l *ledger) check(t *testing.T, closedEarly bool) {
	t.Helper()
	lost, dup := 0, 0
	for i := range l.received {
		r, b, s := l.received[i].Load(), l.returned[i].Load(), l.skipped[i].Load()
		if r+b+s != 1 {
			if r+b+s == 0 {
				lost++
			} else {
				dup++
			}
		}
		if !closedEarly {
			require.Equal(t, uint32(1), r, "message %d", i)
		}
	}
	require.Zero(t, lost, "lost messages")
	require.Zero(t, dup, "duplicated messages")
}

// stressSize is the number of messages of a full stress run.
func stressSize() int {
	if testing.Short() {
		return 20_000
	}
	return 1_000_000
}

// sendAll sends ids on c with the given tier (0 try, 1 blocking, 2 future
// from a goroutine via future.Block) and records what came back.
func sendAll(c *Bounded[int], l *ledger, ids []int, tier int) {
	for i, id := range ids {
		var err error
		switch tier {
		case 0:
			for {
				if err = c.TrySend(id); err != ErrFull {
					break
				}
				runtime.Gosched()
			}
		case 1:
			err = c.SendBlocking(context.Background(), id)
		default:
			f := c.Send(id)
			err, _ = future.Block(context.Background(), f)
		}
		if err != nil {
			l.returned[id].Add(1)
			if se := (*SendError[int])(nil); errors.As(err, &se) && se.Value != id {
				panic("SendError with a foreign value")
			}
			for _, rest := range ids[i+1:] {
				l.skipped[rest].Add(1)
			}
			return
		}
	}
}

// recvAll receives from c until ErrClosed with the given tier.
func recvAll(c *Bounded[int], l *ledger, tier int) {
	for {
		var v int
		var err error
		switch tier {
		case 0:
			v, err = c.TryRecv()
			if err == ErrEmpty {
				runtime.Gosched()
				continue
			}
		case 1:
			v, err = c.RecvBlocking(context.Background())
		default:
			f := c.Recv()
			var r future.Result[int]
			r, _ = future.Block(context.Background(), f)
			v, err = r.Get()
		}
		if err != nil {
			if err != ErrClosed {
				panic(err)
			}
			return
		}
		l.recv(v)
	}
}

// producerTask is a task that sends ids with the future tier.
func producerTask(c *Bounded[int], l *ledger, ids []int) func(cx *future.Context) bool {
	i := 0
	pending := false
	var f SendFuture[int]
	return func(cx *future.Context) bool {
		for i < len(ids) {
			if !pending {
				f = *c.Send(ids[i])
				pending = true
			}
			err, ok := f.Poll(cx)
			if !ok {
				return false
			}
			pending = false
			if err != nil {
				l.returned[ids[i]].Add(1)
				for _, rest := range ids[i+1:] {
					l.skipped[rest].Add(1)
				}
				return true
			}
			i++
		}
		return true
	}
}

// consumerTask is a task that receives until ErrClosed with the future tier.
func consumerTask(c *Bounded[int], l *ledger) func(cx *future.Context) bool {
	pending := false
	var f RecvFuture[int]
	return func(cx *future.Context) bool {
		for {
			if !pending {
				f = *c.Recv()
				pending = true
			}
			r, ok := f.Poll(cx)
			if !ok {
				return false
			}
			pending = false
			if r.Err != nil {
				return true
			}
			l.recv(r.Value)
		}
	}
}

// runBoundedStress moves n messages through a channel of the given capacity
// with producers and consumers of every tier, tasks and goroutines. With
// closeAt > 0, a goroutine closes the channel once closeAt messages were
// received; otherwise the channel is closed after the last send.
func runBoundedStress(t *testing.T, n, capacity, closeAt int) {
	s := newScheduler(t, 4)
	c := NewBounded[int](capacity)
	l := newLedger(n)
	const producers = 6 // 3 goroutine tiers + 3 tasks
	var wg sync.WaitGroup
	var handles []scheduler.JoinHandle[struct{}]
	chunk := n / producers
	for p := 0; p < producers; p++ {
		lo, hi := p*chunk, (p+1)*chunk
		if p == producers-1 {
			hi = n
		}
		ids := make([]int, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ids = append(ids, i)
		}
		if p < 3 {
			wg.Add(1)
			go func() { defer wg.Done(); sendAll(c, l, ids, p) }()
		} else {
			handles = append(handles, spawnFn(s, producerTask(c, l, ids)))
		}
	}
	var cwg sync.WaitGroup
	var consumers []scheduler.JoinHandle[struct{}]
	for k := 0; k < 3; k++ {
		cwg.Add(1)
		go func() { defer cwg.Done(); recvAll(c, l, k) }()
		consumers = append(consumers, spawnFn(s, consumerTask(c, l)))
	}
	if closeAt > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.count.Load() < int64(closeAt) {
				runtime.Gosched()
			}
			c.Close()
		}()
	}
	wg.Wait()
	waitAll(t, handles...)
	c.Close()
	cwg.Wait()
	waitAll(t, consumers...)
	l.check(t, closeAt > 0)
	snd, rcv := c.waiters()
	require.Zero(t, snd+rcv, "waiters left")
	require.Zero(t, c.Len())
}

func TestBoundedStress(t *testing.T) {
	n := stressSize()
	for _, capacity := range []int{1, 3, 64} {
		runBoundedStress(t, n/4, capacity, 0)
	}
	runBoundedStress(t, n, 1024, 0)
}

func TestBoundedStressClose(t *testing.T) {
	n := stressSize()
	for _, capacity := range []int{1, 4, 256} {
		runBoundedStress(t, n/4, capacity, n/8)
	}
}
