package syncprim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/stretchr/testify/require"
)

// TestOnceCellRace races 50 tasks and 50 goroutines to initialize one cell,
// with inits that fail at random: exactly one init succeeds, only owners'
// inits run (one at a time), a caller whose init failed gets its error and
// every other caller gets the one value.
func TestOnceCellRace(t *testing.T) {
	iters := 200
	if testing.Short() {
		iters = 20
	}
	s := newScheduler(t, 4)
	for it := range iters {
		var c OnceCell[int]
		var running, successes, calls atomic.Int32
		var failures atomic.Int32
		enter := func() {
			if running.Add(1) != 1 {
				t.Error("two initializers at once")
			}
			calls.Add(1)
		}
		fail := func() bool { return rand.IntN(3) == 0 }
		check := func(v int, err error, id int) {
			if err != nil {
				if !errors.Is(err, errOcInit) {
					t.Errorf("caller %d: %v", id, err)
				}
				failures.Add(1)
				return
			}
			if got, ok := c.Get(); !ok || got != v {
				t.Errorf("caller %d got %d, cell holds %d (%v)", id, v, got, ok)
			}
		}
		var hs []scheduler.JoinHandle[future.Result[int]]
		var cancelledOwners atomic.Int32
		for i := range 50 {
			init := func() future.Future[future.Result[int]] {
				enter()
				return &raceInitFut{
					running: &running, fail: fail(), successes: &successes,
					cancelled: &cancelledOwners, v: 1000*it + i,
				}
			}
			var f future.Future[future.Result[int]] = newInitTask(&c, init)
			if i%4 == 3 { // gives up after its first pending poll
				f = &cancelAfterOnePoll{f: f}
			}
			hs = append(hs, spawnFuture(s, f))
		}
		var wg sync.WaitGroup
		for i := 50; i < 100; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, err := c.GetOrInitBlocking(context.Background(), func(context.Context) (int, error) {
					enter()
					defer running.Add(-1)
					if fail() {
						return 0, errOcInit
					}
					successes.Add(1)
					return 1000*it + i, nil
				})
				check(v, err, i)
			}()
		}
		for i, r := range waitAll(t, hs...) {
			if !errors.Is(r.Err, errOcGaveUp) {
				check(r.Value, r.Err, i)
			}
		}
		wg.Wait()
		require.EqualValues(t, 1, successes.Load(), "iteration %d", it)
		require.Equal(t, calls.Load(), failures.Load()+cancelledOwners.Load()+1)
		require.Equal(t, 0, c.waiterCount())
	}
}

var errOcGaveUp = errors.New("gave up")

// raceInitFut is the race's init future: it yields once, then succeeds or
// fails; a Cancel counts a cancelled owner.
type raceInitFut struct {
	running, successes, cancelled *atomic.Int32
	fail, yielded                 bool
	v                             int
}

func (f *raceInitFut) Poll(cx *future.Context) (future.Result[int], bool) {
	if !f.yielded {
		f.yielded = true
		cx.Waker().Wake()
		return future.Result[int]{}, false
	}
	f.running.Add(-1)
	if f.fail {
		return future.Fail[int](errOcInit), true
	}
	f.successes.Add(1)
	return future.Ok(f.v), true
}

func (f *raceInitFut) Cancel() {
	f.running.Add(-1)
	f.cancelled.Add(1)
}

// cancelAfterOnePoll polls f once and, if it is pending, cancels it and
// completes with errOcGaveUp.
type cancelAfterOnePoll struct {
	f future.Future[future.Result[int]]
}

func (c *cancelAfterOnePoll) Poll(cx *future.Context) (future.Result[int], bool) {
	if r, ok := c.f.Poll(cx); ok {
		return r, true
	}
	future.Cancel(c.f)
	return future.Fail[int](errOcGaveUp), true
}

// initTask drives a GetOrInit future as a task, so the future lives in the
// task's state (embedded, no allocation per wait).
type initTask struct {
	f InitFuture[int]
}

func newInitTask(c *OnceCell[int], init func() future.Future[future.Result[int]]) *initTask {
	return &initTask{f: *c.GetOrInit(init)}
}

func (t *initTask) Poll(cx *future.Context) (future.Result[int], bool) { return t.f.Poll(cx) }

func (t *initTask) Cancel() { t.f.Cancel() }

// onceModel is the reference OnceCell: the value, the owner and the FIFO
// of waiting futures.
type onceModel struct {
	set     bool
	value   int
	owner   int   // id of the future owning the right, -1 if none
	queue   []int // waiting futures
	handed  map[int]onceGrant
	initing bool // an owner holds the right (owner >= 0 or a future handed it)
}

// TestOnceCellModel drives GetOrInit futures, their init futures, Set and
// Get at random from one goroutine and compares with the model.
func TestOnceCellModel(t *testing.T) {
	steps := 100_000
	if testing.Short() {
		steps = 10_000
	}
	rng := rand.New(rand.NewPCG(5, 6))
	_, cx := bnCx()
	for round := 0; round < steps; {
		var c OnceCell[int]
		m := onceModel{owner: -1, handed: map[int]onceGrant{}}
		futs := map[int]*InitFuture[int]{}
		inits := map[int]*ocFut{}
		started := map[int]bool{}
		next := 0
		pick := func() int {
			for id := range futs {
				return id
			}
			return -1
		}
		passOn := func() {
			m.owner = -1
			if len(m.queue) == 0 {
				m.initing = false
				return
			}
			m.handed[m.queue[0]] = grantRight
			m.queue = m.queue[1:]
		}
		publish := func(v int) {
			m.set, m.value, m.initing, m.owner = true, v, false, -1
			for _, id := range m.queue {
				m.handed[id] = grantValue
			}
			m.queue = nil
		}
		// afterOwnerPoll applies the model of the owner's poll of its init.
		afterOwnerPoll := func(id int, r future.Result[int], ok bool) {
			f := inits[id]
			if !f.done {
				require.False(t, ok)
				return
			}
			require.True(t, ok)
			delete(futs, id)
			if f.r.Err != nil {
				require.ErrorIs(t, r.Err, errOcInit)
				passOn()
				return
			}
			require.Equal(t, f.r, r)
			publish(f.r.Value)
		}
		for range 200 {
			round++
			switch op := rng.IntN(6); {
			case op == 0 || len(futs) == 0:
				id := next
				next++
				inits[id] = new(ocFut)
				f := new(InitFuture[int])
				*f = *c.GetOrInit(ocInit(inits[id], new(int)))
				futs[id] = f
			case op == 1: // poll one
				id := pick()
				r, ok := futs[id].Poll(cx)
				switch {
				case !started[id]:
					started[id] = true
					switch {
					case m.set:
						require.True(t, ok)
						require.Equal(t, m.value, r.Value)
						delete(futs, id)
					case !m.initing:
						m.initing, m.owner = true, id
						afterOwnerPoll(id, r, ok)
					default:
						require.False(t, ok)
						m.queue = append(m.queue, id)
					}
				case m.owner == id:
					afterOwnerPoll(id, r, ok)
				case m.handed[id] == grantValue:
					require.True(t, ok)
					require.Equal(t, m.value, r.Value)
					delete(futs, id)
					delete(m.handed, id)
				case m.handed[id] == grantRight:
					delete(m.handed, id)
					m.owner = id
					afterOwnerPoll(id, r, ok)
				default:
					require.False(t, ok)
				}
			case op == 2: // complete the owner's init
				if m.owner >= 0 && !inits[m.owner].done {
					if rng.IntN(2) == 0 {
						inits[m.owner].complete(future.Fail[int](errOcInit))
					} else {
						inits[m.owner].complete(future.Ok(round))
					}
				}
			case op == 3: // cancel one
				id := pick()
				futs[id].Cancel()
				delete(futs, id)
				switch {
				case m.owner == id:
					require.True(t, inits[id].cancelled)
					passOn()
				case m.handed[id] == grantRight:
					delete(m.handed, id)
					passOn()
				default:
					delete(m.handed, id)
					for i, q := range m.queue {
						if q == id {
							m.queue = append(m.queue[:i], m.queue[i+1:]...)
							break
						}
					}
				}
			case op == 4:
				err := c.Set(-round)
				switch {
				case m.set:
					require.ErrorIs(t, err, ErrAlreadySet)
				case m.initing:
					require.ErrorIs(t, err, ErrInitializing)
				default:
					require.NoError(t, err)
					publish(-round)
				}
			default:
				v, ok := c.Get()
				require.Equal(t, m.set, ok)
				require.Equal(t, m.value, v, fmt.Sprint("step ", round))
			}
			require.Equal(t, len(m.queue), c.waiterCount())
		}
		for _, f := range futs {
			f.Cancel()
		}
		require.Equal(t, 0, c.waiterCount())
	}
}
