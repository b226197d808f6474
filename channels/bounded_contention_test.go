package channels

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// TestBoundedYieldOnContentionModes checks when a poll may yield its task
// after a lost CAS: a task's poll under a budget, not a woken waiter's (a
// woken waiter polls in tryImpatient mode: see pollSend), once per
// operation.
func TestBoundedYieldOnContentionModes(t *testing.T) {
	var sig waker.Signal
	plain := future.NewContext(waker.New(&sig)) // no budget: outside an executor
	budgeted := future.NewContext(waker.New(&sig))
	var b future.Budget
	b.Reset()
	budgeted.SetBudget(&b)

	var n qnode
	require.Equal(t, tryImpatient, firstTryMode(nil, &n, false), "blocking call")
	require.Equal(t, tryYield, firstTryMode(budgeted, &n, false), "task, first poll")
	require.Equal(t, tryImpatient, firstTryMode(budgeted, &n, true), "task, woken from the waiters")
	require.False(t, yieldOnContention(plain, &n), "no budget: retry with backoffs")
	require.False(t, n.contended)
	require.True(t, yieldOnContention(budgeted, &n), "task under a budget")
	require.True(t, n.contended)
	require.True(t, b.Yielded())
	require.Equal(t, tryImpatient, firstTryMode(budgeted, &n, false), "yielded once already")

	// Without contention tryYield behaves as tryImpatient.
	c := NewBounded[int](1)
	require.NoError(t, c.trySend(1, tryYield))
	require.Equal(t, ErrFull, c.trySend(2, tryYield))
	v, err := c.tryRecv(tryYield)
	require.NoError(t, err)
	require.Equal(t, 1, v)
	_, err = c.tryRecv(tryYield)
	require.Equal(t, ErrEmpty, err)
}

// contentionCounts counts the operations of TestBoundedContentionStress
// that yielded their task after a lost CAS.
type contentionCounts struct {
	sends, recvs atomic.Int64 // completed after a contention yield
	cancelled    atomic.Int64 // cancelled (a lost select) after one
}

// noteSend records a finished SendFuture's contention yield, if any.
func (k *contentionCounts) noteSend(f *SendFuture[int], won bool) {
	k.note(&f.n, &k.sends, won)
}

// noteRecv records a finished RecvFuture's contention yield, if any.
func (k *contentionCounts) noteRecv(f *RecvFuture[int], won bool) {
	k.note(&f.n, &k.recvs, won)
}

// note counts n's contention yield, if it yielded, in completed when its
// operation won, else as cancelled.
func (k *contentionCounts) note(n *qnode, completed *atomic.Int64, won bool) {
	switch {
	case !n.contended:
	case won:
		completed.Add(1)
	default:
		k.cancelled.Add(1)
	}
}

// contentionProducer is a task sending ids, each with a plain Send to a or
// a select of sends to a and b. (Plain operations use a only, on both
// sides, so that the test cannot deadlock with every producer waiting on a
// full b and every consumer on an empty a.)
func contentionProducer(a, b *Bounded[int], ids []int, seed uint64, k *contentionCounts) func(cx *future.Context) bool {
	rng := rand.New(rand.NewPCG(seed, 1))
	var one *SendFuture[int]
	var pair [2]*SendFuture[int]
	var sel future.Future[future.Selected[error]]
	i := 0
	return func(cx *future.Context) bool {
		for i < len(ids) {
			if one == nil && sel == nil {
				if rng.IntN(2) == 0 {
					one = a.Send(ids[i])
				} else {
					pair[0], pair[1] = a.Send(ids[i]), b.Send(ids[i])
					sel = future.Select[error](pair[0], pair[1])
				}
			}
			if one != nil {
				err, ok := one.Poll(cx)
				if !ok {
					return false
				}
				if err != nil {
					panic(err)
				}
				k.noteSend(one, true)
				one = nil
			} else {
				r, ok := sel.Poll(cx)
				if !ok {
					return false
				}
				if r.Value != nil {
					panic(r.Value)
				}
				k.noteSend(pair[0], r.Index == 0)
				k.noteSend(pair[1], r.Index == 1)
				sel = nil
			}
			i++
		}
		return true
	}
}

// contentionConsumer is a task receiving until both channels are closed
// and drained, with selects over both, or a plain Recv from a while it is
// open.
func contentionConsumer(a, b *Bounded[int], l *ledger, seed uint64, k *contentionCounts) func(cx *future.Context) bool {
	rng := rand.New(rand.NewPCG(seed, 2))
	var one *RecvFuture[int]
	var pair [2]*RecvFuture[int]
	var sel future.Future[future.Selected[future.Result[int]]]
	aOpen, bOpen := true, true
	return func(cx *future.Context) bool {
		for aOpen || bOpen {
			if one == nil && sel == nil {
				switch {
				case aOpen && bOpen && rng.IntN(2) == 0:
					pair[0], pair[1] = a.Recv(), b.Recv()
					sel = future.Select[future.Result[int]](pair[0], pair[1])
				case aOpen:
					one = a.Recv()
				default:
					one = b.Recv()
				}
			}
			var r future.Result[int]
			from := a
			if one != nil {
				var ok bool
				if r, ok = one.Poll(cx); !ok {
					return false
				}
				k.noteRecv(one, true)
				if one.c == b {
					from = b
				}
				one = nil
			} else {
				s, ok := sel.Poll(cx)
				if !ok {
					return false
				}
				k.noteRecv(pair[0], s.Index == 0)
				k.noteRecv(pair[1], s.Index == 1)
				r = s.Value
				if s.Index == 1 {
					from = b
				}
				sel = nil
			}
			if r.Err != nil {
				if r.Err != ErrClosed {
					panic(r.Err)
				}
				if from == a {
					aOpen = false
				} else {
					bOpen = false
				}
				continue
			}
			l.recv(r.Value)
		}
		return true
	}
}

// TestBoundedContentionStress runs producer and consumer tasks on four
// workers over two channels (a small one, often full or empty, and a large
// one), with plain futures and selects, so that polls lose CASes on head
// and tail and yield (yieldOnContention), some of them in a select that
// another child then wins. Every message is received exactly once, and no
// waiter is left. Rounds repeat until each kind of contention yield was
// seen (they depend on timing) or the time is up; the counts are logged.
func TestBoundedContentionStress(t *testing.T) {
	n, limit := 200_000, 20*time.Second
	if testing.Short() {
		n, limit = 20_000, 3*time.Second
	}
	const producers, consumers = 4, 4
	s := newScheduler(t, 4)
	var k contentionCounts
	deadline := time.Now().Add(limit)
	rounds := 0
	for {
		rounds++
		a, b := NewBounded[int](4), NewBounded[int](256)
		l := newLedger(n)
		var ps, cs []scheduler.JoinHandle[struct{}]
		for p := 0; p < producers; p++ {
			var ids []int
			for id := p; id < n; id += producers {
				ids = append(ids, id)
			}
			ps = append(ps, spawnFn(s, contentionProducer(a, b, ids, uint64(rounds*100+p), &k)))
		}
		for q := 0; q < consumers; q++ {
			cs = append(cs, spawnFn(s, contentionConsumer(a, b, l, uint64(rounds*100+q), &k)))
		}
		waitAll(t, ps...)
		a.Close()
		b.Close()
		waitAll(t, cs...)
		l.check(t, false)
		for _, c := range []*Bounded[int]{a, b} {
			snd, rcv := c.waiters()
			require.Zero(t, snd+rcv, "waiters left")
			require.Zero(t, c.Len())
		}
		if k.sends.Load() > 0 && k.recvs.Load() > 0 && k.cancelled.Load() > 0 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("%d rounds of %d messages; contention yields: %d sends, %d receives completed after one, %d cancelled by a select after one",
		rounds, n, k.sends.Load(), k.recvs.Load(), k.cancelled.Load())
}
