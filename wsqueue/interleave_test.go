package wsqueue_test

// Deterministic interleavings of the local queue, forced by pausing a stealer
// at the hook points of export_test.go. They are the tests cited by the
// package doc's sections "Memory ordering", "ABA and index wrap", "Steals in
// progress" and "The LIFO slot".

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	. "github.com/blitz-go/blitz/wsqueue"
)

// stealResult is what a background steal took.
type stealResult struct {
	item int // the returned item, -1 for nil
	n    int // items taken, the returned one included
	st   StealStatus
	dst  []int // what it put into its destination, oldest first
}

// pausedSteal is a steal running on its own goroutine that stops the first
// time it reaches a hook point, until released.
type pausedSteal struct {
	reached chan struct{}
	release chan struct{}
	done    chan stealResult
}

// startPausedSteal installs a hook on s that pauses the first steal to reach
// at, then starts StealInto(dst) on a new goroutine and waits until it is
// paused. onOther, if not nil, is called at every other hook point.
func startPausedSteal(t *testing.T, s *Stealer[int], dst *Owner[int], at HookPoint, onOther func(HookPoint)) *pausedSteal {
	t.Helper()
	p := &pausedSteal{reached: make(chan struct{}), release: make(chan struct{}), done: make(chan stealResult, 1)}
	var paused atomic.Bool
	SetHook(s, func(h HookPoint) {
		if h == at && paused.CompareAndSwap(false, true) {
			close(p.reached)
			<-p.release
			return
		}
		if onOther != nil {
			onOther(h)
		}
	})
	go func() {
		item, n, st := StealIntoN(s, dst)
		p.done <- stealResult{item: val(item), n: n, st: st, dst: popAll(dst)}
	}()
	<-p.reached
	return p
}

// finish releases the steal and returns its result.
func (p *pausedSteal) finish() stealResult {
	close(p.release)
	return <-p.done
}

// newFull returns a queue of the given capacity holding 0..n-1.
func newFull(t *testing.T, capacity, n int) (*Owner[int], *Stealer[int]) {
	t.Helper()
	o, s, err := NewSize[int](capacity)
	if err != nil {
		t.Fatal(err)
	}
	o.PushBatch(ints(0, n), nil)
	return o, s
}

// TestOwnerPopsPastStealInProgress ("Steals in progress"): while a stealer that
// has claimed items is stalled before copying them, the owner's Pop neither
// waits for it nor returns a claimed item.
func TestOwnerPopsPastStealInProgress(t *testing.T) {
	o, s := newFull(t, 8, 8)
	dst, _ := New[int]()
	p := startPausedSteal(t, s, dst, HookStealClaimed, nil)

	steal, real, tail := Indices(s)
	equal(t, [3]uint32{steal, real, tail}, [3]uint32{0, 4, 8}, "claimed [0,4): real moved, steal did not")
	equal(t, popAll(o), []int{4, 5, 6, 7}, "the owner pops past the claim without waiting")
	equal(t, o.Len(), 0)

	r := p.finish()
	equal(t, r, stealResult{item: 3, n: 4, st: StatusTaken, dst: []int{0, 1, 2}})
	steal, real, _ = Indices(s)
	equal(t, real, steal, "completion sets steal = real")
}

// TestClaimedSlotsStayOccupiedUntilStealCompletes ("ABA and index wrap",
// "Steals in progress"):
// the owner measures free space from steal, not real, so it cannot overwrite
// the slots a stalled stealer has yet to copy, even after the ring has come
// round to them; a push that finds no room while a steal is in progress hands
// the pushed item alone to the overflow.
func TestClaimedSlotsStayOccupiedUntilStealCompletes(t *testing.T) {
	o, s := newFull(t, 8, 6)
	dst, _ := New[int]()
	p := startPausedSteal(t, s, dst, HookStealClaimed, nil) // claims 0,1,2

	equal(t, popAll(o), []int{3, 4, 5})
	equal(t, o.Len(), 0, "nothing left to pop")
	equal(t, o.Free(), 2, "slots 0-2 are still being copied: only 6 and 7 are free")

	var rec recorder
	o.PushBatch(ints(100, 4), &rec)
	equal(t, rec.batches, [][]int{{102}, {103}}, "no half to claim during a steal: items go out alone")
	equal(t, o.Free(), 0)

	r := p.finish()
	equal(t, r, stealResult{item: 2, n: 3, st: StatusTaken, dst: []int{0, 1}}, "the claimed items were not overwritten")
	equal(t, o.Free(), 6, "the completion freed the claimed slots")
	equal(t, popAll(o), []int{100, 101})
}

// TestSecondStealerBacksOffDuringSteal ("Steals in progress"): a steal in
// progress makes every other stealer of the queue return at once.
func TestSecondStealerBacksOffDuringSteal(t *testing.T) {
	o, s := newFull(t, 8, 8)
	dst, _ := New[int]()
	p := startPausedSteal(t, s, dst, HookStealCopied, nil)

	other, _ := New[int]()
	item, n, st := StealIntoN(s, other)
	if item != nil {
		t.Errorf("item = &%d, want nil", *item)
	}
	if n != 0 {
		t.Errorf("n = %v, want 0", n)
	}
	equal(t, st, StatusBusy)

	r := p.finish()
	equal(t, r.item, 3)
	equal(t, popAll(o), []int{4, 5, 6, 7})
}

// TestCompleteStealRetriesAreBoundedByOwnerPops ("Termination of the
// completion"): every
// failed completion CAS is caused by one owner pop, and the owner cannot pop
// more than capacity-n times while the steal is pending, because it cannot
// push into claimed slots. The test makes the owner pop exactly once before
// each completion attempt, the worst case, and sees the loop end after
// capacity-n retries.
func TestCompleteStealRetriesAreBoundedByOwnerPops(t *testing.T) {
	const capacity = 8
	o, s := newFull(t, capacity, capacity)
	dst, _ := New[int]()

	retry := make(chan struct{})
	resume := make(chan struct{})
	retries := 0
	p := startPausedSteal(t, s, dst, HookStealCopied, func(h HookPoint) {
		if h == HookCompleteRetry {
			retries++
			retry <- struct{}{}
			<-resume
		}
	})

	var popped []int
	var rec recorder
	pop := func() {
		if x := o.Pop(); x != nil {
			popped = append(popped, *x)
		}
		o.Push(ints(1000+len(rec.batches), 1)[0], &rec) // never fits while the steal is pending
	}
	pop() // makes the first completion attempt fail
	close(p.release)
	var r stealResult
loop:
	for {
		select {
		case <-retry:
			pop()
			resume <- struct{}{}
		case r = <-p.done:
			break loop
		}
	}
	equal(t, r.item, 3)
	equal(t, r.dst, []int{0, 1, 2})
	equal(t, retries, capacity-r.n, "one retry per owner pop, at most capacity-n")
	equal(t, popped, []int{4, 5, 6, 7})
	for _, b := range rec.batches {
		if len(b) != 1 {
			t.Errorf("during the steal the owner overflows single items: len(b) = %d, want %d: %v", len(b), 1, b)
		}
	}
}

// TestClaimCASFailsAfterOwnerPopBetweenLoadAndCAS ("ABA and index wrap", at
// small scale): a stealer that read head and tail, then lost the processor
// while the owner popped one item and pushed one, finds a queue of the same
// length, but its CAS compares the whole packed head and fails, so it claims
// from the new head instead of taking the popped item a second time.
func TestClaimCASFailsAfterOwnerPopBetweenLoadAndCAS(t *testing.T) {
	o, s := newFull(t, 8, 4)
	dst, _ := New[int]()
	p := startPausedSteal(t, s, dst, HookStealLoaded, nil)

	equal(t, val(o.Pop()), 0)
	o.Push(ints(4, 1)[0], nil)
	equal(t, o.Len(), 4, "same length as the stealer saw")

	r := p.finish()
	equal(t, r, stealResult{item: 2, n: 2, st: StatusTaken, dst: []int{1}})
	equal(t, popAll(o), []int{3, 4})
}

// TestPushDoesNotDisturbClaimInFlight ("The LIFO slot"): the owner's push
// writes only free slots and tail, never head, so a stealer that computed its
// claim before a burst of pushes still claims (at the first attempt) exactly
// the items it saw, and the pushed items stay with the owner.
func TestPushDoesNotDisturbClaimInFlight(t *testing.T) {
	o, s := newFull(t, 8, 4)
	dst, _ := New[int]()
	var loads atomic.Int32
	p := startPausedSteal(t, s, dst, HookStealLoaded, func(h HookPoint) {
		if h == HookStealLoaded {
			loads.Add(1)
		}
	})
	o.PushBatch(ints(4, 4), nil)

	r := p.finish()
	equal(t, r, stealResult{item: 1, n: 2, st: StatusTaken, dst: []int{0}})
	if got := loads.Load(); got != 0 {
		t.Errorf("the claim CAS succeeded at the first attempt: loads.Load() = %v, want 0", got)
	}
	equal(t, popAll(o), []int{2, 3, 4, 5, 6, 7})
}

// TestOwnerNeverWaitsForStalledStealer ("Steals in progress"): with a
// stealer stalled between copy and completion for as long as the test likes,
// the owner keeps pushing, popping and overflowing. In the mark-then-spin
// protocol that "Termination of the completion" rejects, the owner's pop
// would spin here until the stealer ran again.
func TestOwnerNeverWaitsForStalledStealer(t *testing.T) {
	o, s := newFull(t, 8, 8)
	dst, _ := New[int]()
	p := startPausedSteal(t, s, dst, HookStealCopied, nil)

	var rec recorder
	taken := 0
	for i := range 10_000 {
		o.Push(ints(100+i, 1)[0], &rec)
		if o.Pop() != nil {
			taken++
		}
	}
	if taken <= 0 {
		t.Errorf("taken = %v, want > 0", taken)
	}
	r := p.finish()
	equal(t, r.item, 3)
}

// TestStolenItemsCarryThePushersWrites ("Memory ordering"): in Go every
// sync/atomic operation is sequentially consistent, so the question is which
// happens-before edges the protocol relies on. The owner writes plain fields
// of each item before pushing it and the consumers read and write them with
// no other synchronization than the queue: under -race, a missing edge
// (push -> tail store -> tail load -> claim -> read) is reported as a race.
func TestStolenItemsCarryThePushersWrites(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 5_000
	}
	type item struct{ payload, consumed int }
	o, s, err := NewSize[item](16)
	if err != nil {
		t.Fatal(err)
	}
	var ov MutexDeque[item]
	var got atomic.Int64
	check := func(it *item, who int) {
		if it.payload != 42 {
			t.Errorf("payload %d: the pusher's write is not visible", it.payload)
		}
		it.consumed = who
		got.Add(1)
	}
	var wg sync.WaitGroup
	for w := 1; w <= 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst, _ := New[item]()
			for got.Load() < int64(n) {
				it := s.StealInto(dst)
				if it == nil {
					runtime.Gosched()
					continue
				}
				check(it, w)
				for it = dst.Pop(); it != nil; it = dst.Pop() {
					check(it, w)
				}
			}
		}()
	}
	overflow := OverflowFunc[item](func(b []*item) {
		for _, it := range b {
			ov.PushBack(it)
		}
	})
	for i := range n {
		o.Push(&item{payload: 42}, overflow)
		if i%4 == 0 {
			if it := o.Pop(); it != nil {
				check(it, 0)
			}
		}
		for it := ov.PopFront(); it != nil; it = ov.PopFront() {
			check(it, 0)
		}
	}
	for got.Load() < int64(n) {
		if it := o.Pop(); it != nil {
			check(it, 0)
		} else {
			runtime.Gosched()
		}
	}
	wg.Wait()
	equal(t, got.Load(), int64(n))
}

// seedLIFO is a Go transcription of the 4-slot LIFO stack of the Zig
// original (blitz-io): a top index and four slots, each atomic, updated by
// separate operations. Its push was not shown in the design we read; this is
// the natural one. takeTop is what a second party (a stealer, or a waker on
// another thread) would have to run to take from the stack.
type seedLIFO struct {
	top   atomic.Uint32
	stack [4]atomic.Pointer[int]
}

// TestSeedLIFOStackLosesItems ("The LIFO slot"): with two parties, the
// Zig original's stack loses items, whatever the memory orderings: lifo_top
// and the slot are two words without a common CAS, so one party's store of
// lifo_top undoes the other's. The interleaving is played step by step on one
// goroutine, so it is a logic race, not a memory-model one. Our queue keeps
// instead the invariant that every removal is one CAS on the packed head
// (TestPushDoesNotDisturbClaimInFlight and the stress and linearizability
// tests check it).
func TestSeedLIFOStackLosesItems(t *testing.T) {
	var q seedLIFO
	a, c, d, e := ints(0, 1)[0], ints(2, 1)[0], ints(3, 1)[0], ints(4, 1)[0]
	push := func(x *int) { // owner, in one go
		top := q.top.Load()
		q.stack[top].Store(x)
		q.top.Store(top + 1)
	}
	push(a)

	ownerTop := q.top.Load()             // owner, push(c) step 1: reads top = 1
	thiefTop := q.top.Load()             // thief, take step 1: reads top = 1
	got := q.stack[thiefTop-1].Swap(nil) // thief, take step 2: takes a
	q.stack[ownerTop].Store(c)           // owner, push(c) step 2
	q.top.Store(ownerTop + 1)            // owner, push(c) step 3: top = 2
	q.top.Store(thiefTop - 1)            // thief, take step 3: top = 0, c is now above top
	equal(t, got, a)

	push(d)
	push(e) // overwrites c
	var left []int
	for top := q.top.Load(); top > 0; top = q.top.Load() {
		left = append(left, *q.stack[top-1].Swap(nil))
		q.top.Store(top - 1)
	}
	equal(t, left, []int{4, 3}, "c (2) was pushed once and is gone")
}
