package wsqueue_test

import (
	"runtime"
	"sync"
	"testing"

	. "github.com/blitz-go/blitz/wsqueue"
)

// The benchmarks run each structure side by side with a buffered channel of
// the same capacity ("chan") and a sync.Mutex-protected slice deque
// ("mutexdeque"). The sub-benchmark names are parsed by the repository's
// side-by-side benchmark tool: keep them, and keep "wsqueue" first.

// benchCap is the capacity of every structure in the benchmarks.
const benchCap = DefaultCapacity

// benchItems returns pointers to reuse, so that no benchmark allocates items.
func benchItems() []*int {
	vals := make([]int, 1024)
	ptrs := make([]*int, len(vals))
	for i := range vals {
		vals[i] = i
		ptrs[i] = &vals[i]
	}
	return ptrs
}

// BenchmarkLocalPushPop measures the owner's push followed by a pop on the
// local queue (FIFO), one op being the pair.
func BenchmarkLocalPushPop(b *testing.B) {
	items := benchItems()
	b.Run("wsqueue", func(b *testing.B) {
		o, _ := New[int]()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			o.Push(items[i&1023], nil)
			if o.Pop() == nil {
				b.Fatal("empty")
			}
		}
	})
	b.Run("chan", func(b *testing.B) {
		ch := make(chan *int, benchCap)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ch <- items[i&1023]
			if <-ch == nil {
				b.Fatal("empty")
			}
		}
	})
	b.Run("mutexdeque", func(b *testing.B) {
		m := NewMutexDeque[int](benchCap)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m.PushBack(items[i&1023])
			if m.PopFront() == nil {
				b.Fatal("empty")
			}
		}
	})
}

// BenchmarkStealContended measures one owner pushing while one thief steals
// (half at a time where the structure allows it) into its own queue of the
// same kind, and drains that;
// ns/op is per element moved from the owner to the thief. The owner keeps at
// most benchCap items queued, as the channel does; it asks the structure for
// its room only when the room it last saw is used up, so that the bound costs
// the harness little.
func BenchmarkStealContended(b *testing.B) {
	items := benchItems()
	b.Run("wsqueue", func(b *testing.B) {
		o, s := New[int]()
		dst, _ := New[int]()
		b.ReportAllocs()
		runPair(b, func(n int) {
			for i, room := 0, 0; i < n; {
				if room == 0 {
					if room = o.Free(); room == 0 {
						runtime.Gosched()
						continue
					}
				}
				o.Push(items[i&1023], nil)
				i, room = i+1, room-1
			}
		}, func(n int) {
			steals := 0
			for got, misses := 0, 0; got < n; {
				if s.StealInto(dst) == nil {
					misses = idle(misses)
					continue
				}
				got, misses, steals = got+1, 0, steals+1
				for dst.Pop() != nil {
					got++
				}
			}
			b.ReportMetric(float64(n)/float64(max(steals, 1)), "items/steal")
		})
	})
	b.Run("chan", func(b *testing.B) {
		ch := make(chan *int, benchCap)
		b.ReportAllocs()
		runPair(b, func(n int) {
			for i := range n {
				ch <- items[i&1023]
			}
		}, func(n int) {
			for range n {
				<-ch
			}
		})
	})
	b.Run("mutexdeque", func(b *testing.B) {
		m := NewMutexDeque[int](benchCap)
		dst := NewMutexDeque[int](benchCap) // the thief's own deque, like wsqueue's dst
		local := make([]*int, 0, benchCap)
		b.ReportAllocs()
		runPair(b, func(n int) {
			for i, room := 0, 0; i < n; {
				if room == 0 {
					if room = benchCap - m.Len(); room == 0 {
						runtime.Gosched()
						continue
					}
				}
				m.PushBack(items[i&1023])
				i, room = i+1, room-1
			}
		}, func(n int) {
			steals := 0
			defer func() { b.ReportMetric(float64(n)/float64(max(steals, 1)), "items/steal") }()
			for got, misses := 0, 0; got < n; {
				local = m.PopFrontHalf(local[:0])
				if len(local) == 0 {
					misses = idle(misses)
					continue
				}
				got, misses, steals = got+1, 0, steals+1 // runs the last, queues the rest
				for _, x := range local[:len(local)-1] {
					dst.PushBack(x)
				}
				for dst.PopFront() != nil {
					got++
				}
			}
		})
	})
}

// idle is what a benchmark thief does when it finds nothing: yield, as a
// worker goes on to other work sources. (Spinning on the victim instead turns
// steal-half into one item per steal and slows the owner down with cache
// traffic; it measured about 9x slower for the local queue.) It returns the
// new miss count.
func idle(misses int) int {
	runtime.Gosched()
	return misses + 1
}

// runPair runs owner(b.N) and thief(b.N) on two goroutines and times them
// together.
func runPair(b *testing.B, owner, thief func(n int)) {
	var wg sync.WaitGroup
	wg.Add(1)
	b.ResetTimer()
	go func() {
		defer wg.Done()
		owner(b.N)
	}()
	thief(b.N)
	wg.Wait()
}

// BenchmarkChaseLev measures the owner's push followed by a pop on the
// Chase-Lev deque (LIFO), one op being the pair. The channel can only be FIFO.
func BenchmarkChaseLev(b *testing.B) {
	items := benchItems()
	b.Run("wsqueue", func(b *testing.B) {
		o, _ := NewDeque[int](benchCap)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			o.Push(items[i&1023])
			if o.Pop() == nil {
				b.Fatal("empty")
			}
		}
	})
	b.Run("chan", func(b *testing.B) {
		ch := make(chan *int, benchCap)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ch <- items[i&1023]
			if <-ch == nil {
				b.Fatal("empty")
			}
		}
	})
	b.Run("mutexdeque", func(b *testing.B) {
		m := NewMutexDeque[int](benchCap)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			m.PushBack(items[i&1023])
			if m.PopBack() == nil {
				b.Fatal("empty")
			}
		}
	})
}

// BenchmarkChaseLevContended measures one owner pushing onto the Chase-Lev
// deque (keeping at most benchCap items) while one thief steals one item at a
// time; ns/op is per element moved.
func BenchmarkChaseLevContended(b *testing.B) {
	items := benchItems()
	b.Run("wsqueue", func(b *testing.B) {
		o, s := NewDeque[int](benchCap)
		b.ReportAllocs()
		runPair(b, func(n int) {
			for i, room := 0, 0; i < n; {
				if room == 0 {
					if room = benchCap - o.Len(); room == 0 {
						runtime.Gosched()
						continue
					}
				}
				o.Push(items[i&1023])
				i, room = i+1, room-1
			}
		}, func(n int) {
			for got, misses := 0, 0; got < n; {
				if s.StealLoop() == nil {
					misses = idle(misses)
					continue
				}
				got, misses = got+1, 0
			}
		})
	})
	b.Run("chan", func(b *testing.B) {
		ch := make(chan *int, benchCap)
		b.ReportAllocs()
		runPair(b, func(n int) {
			for i := range n {
				ch <- items[i&1023]
			}
		}, func(n int) {
			for range n {
				<-ch
			}
		})
	})
	b.Run("mutexdeque", func(b *testing.B) {
		m := NewMutexDeque[int](benchCap)
		b.ReportAllocs()
		runPair(b, func(n int) {
			for i, room := 0, 0; i < n; {
				if room == 0 {
					if room = benchCap - m.Len(); room == 0 {
						runtime.Gosched()
						continue
					}
				}
				m.PushBack(items[i&1023])
				i, room = i+1, room-1
			}
		}, func(n int) {
			for got, misses := 0, 0; got < n; {
				if m.PopFront() == nil {
					misses = idle(misses)
					continue
				}
				got, misses = got+1, 0
			}
		})
	})
}
