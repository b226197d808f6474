package channels

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// uSendAll sends ids, recording a send refused by the close as returned and
// the rest as skipped.
func uSendAll(u *Unbounded[int], l *ledger, ids []int) bool {
	for i, id := range ids {
		if err := u.Send(id); err != nil {
			l.returned[id].Add(1)
			for _, rest := range ids[i+1:] {
				l.skipped[rest].Add(1)
			}
			return true
		}
	}
	return true
}

// uConsumerTask receives until ErrClosed with the future tier.
func uConsumerTask(u *Unbounded[int], l *ledger) func(cx *future.Context) bool {
	pending := false
	var f UnboundedRecvFuture[int]
	return func(cx *future.Context) bool {
		for {
			if !pending {
				f = *u.Recv()
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

// uRecvMixed receives until ErrClosed, switching tiers as it goes.
func uRecvMixed(u *Unbounded[int], l *ledger) {
	for i := 0; ; i++ {
		var v int
		var err error
		switch i % 3 {
		case 0:
			v, err = u.TryRecv()
			if err == ErrEmpty {
				runtime.Gosched()
				continue
			}
		case 1:
			v, err = u.RecvBlocking(context.Background())
		default:
			f := u.Recv()
			var r future.Result[int]
			r, _ = future.Block(context.Background(), f)
			v, err = r.Get()
		}
		if err == ErrClosed {
			return
		}
		if err != nil {
			panic(err)
		}
		l.recv(v)
	}
}

func runUnboundedStress(t *testing.T, n int, taskConsumer bool, closeAt int) {
	s := newScheduler(t, 4)
	u := NewUnbounded[int]()
	l := newLedger(n)
	const producers = 6
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
		if p%2 == 0 {
			wg.Add(1)
			go func() { defer wg.Done(); uSendAll(u, l, ids) }()
		} else {
			handles = append(handles, spawnFn(s, func(*future.Context) bool { return uSendAll(u, l, ids) }))
		}
	}
	var consumer []scheduler.JoinHandle[struct{}]
	cdone := make(chan struct{})
	if taskConsumer {
		consumer = append(consumer, spawnFn(s, uConsumerTask(u, l)))
		close(cdone)
	} else {
		go func() { defer close(cdone); uRecvMixed(u, l) }()
	}
	if closeAt > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l.count.Load() < int64(closeAt) {
				runtime.Gosched()
			}
			u.Close()
		}()
	}
	wg.Wait()
	waitAll(t, handles...)
	u.Close()
	<-cdone
	waitAll(t, consumer...)
	l.check(t, closeAt > 0)
	require.Zero(t, u.waiters())
	require.Zero(t, u.Len())
}

func TestUnboundedStress(t *testing.T) {
	n := stressSize()
	runUnboundedStress(t, n, false, 0)
	runUnboundedStress(t, n, true, 0)
}

func TestUnboundedStressClose(t *testing.T) {
	n := stressSize() / 2
	runUnboundedStress(t, n, false, n/3)
	runUnboundedStress(t, n, true, n/3)
}
