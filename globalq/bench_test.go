package globalq_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/globalq"
)

// The benchmarks run the mutex queue ("globalq", first), the sharded queue
// ("sharded", DefaultShards shards) and, where it applies, a buffered channel
// ("chan") side by side. The sub-benchmark names are parsed by the
// repository's side-by-side benchmark tool: keep them, and keep "globalq"
// first. One op is one element pushed and popped.

// item is the benchmark element.
type item struct {
	next *item
	_    [6]uint64 // a task header is bigger than a link
}

// QueueNext makes *item a globalq.Node[item].
func (i *item) QueueNext() **item { return &i.next }

// injector is what the benchmarks need of both variants.
type injector interface {
	Push(*item) bool
	PushSlice([]*item) bool
	Pop() *item
	PopBatch([]*item, int) int
}

// benchQueues returns the queue variants by sub-benchmark name, in order.
func benchQueues() []struct {
	name string
	mk   func() injector
} {
	return []struct {
		name string
		mk   func() injector
	}{
		{"globalq", func() injector { return globalq.New[item]() }},
		{"sharded", func() injector { return globalq.NewSharded[item](0) }},
	}
}

// BenchmarkPushPop measures one push followed by one pop on one goroutine.
func BenchmarkPushPop(b *testing.B) {
	items := make([]item, 1024)
	for _, v := range benchQueues() {
		b.Run(v.name, func(b *testing.B) {
			q := v.mk()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				q.Push(&items[i&1023])
				if q.Pop() == nil {
					b.Fatal("empty")
				}
			}
		})
	}
	b.Run("chan", func(b *testing.B) {
		ch := make(chan *item, 1024)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ch <- &items[i&1023]
			if <-ch == nil {
				b.Fatal("empty")
			}
		}
	})
}

// contenders is the number of goroutines of BenchmarkContended, each pushing
// and popping, more than the cores of a small machine on purpose.
const contenders = 4

// prefill is how many elements the contended queue holds at the start, so
// that pops rarely find it empty.
const prefill = 64

// BenchmarkContended has contenders goroutines each push an element and pop
// one (any one), b.N elements in all: ns/op is per element pushed and popped.
func BenchmarkContended(b *testing.B) {
	for _, v := range benchQueues() {
		b.Run(v.name, func(b *testing.B) {
			q := v.mk()
			items := make([]item, prefill+contenders)
			for i := range prefill {
				q.Push(&items[i])
			}
			runContended(b, func(g, n int) {
				hand := &items[prefill+g]
				for range n {
					q.Push(hand)
					for hand = q.Pop(); hand == nil; hand = q.Pop() {
						runtime.Gosched()
					}
				}
			})
		})
	}
	b.Run("chan", func(b *testing.B) {
		ch := make(chan *item, 2*(prefill+contenders))
		items := make([]item, prefill+contenders)
		for i := range prefill {
			ch <- &items[i]
		}
		runContended(b, func(g, n int) {
			hand := &items[prefill+g]
			for range n {
				ch <- hand
				hand = <-ch
			}
		})
	})
}

// runContended runs body(g, n) on contenders goroutines, splitting b.N.
func runContended(b *testing.B, body func(g, n int)) {
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for g := range contenders {
		n := b.N / contenders
		if g == 0 {
			n += b.N % contenders
		}
		wg.Go(func() { body(g, n) })
	}
	wg.Wait()
}

// batchLen is the size of the PushSlice in BenchmarkBatch, half a local queue
// as in wsqueue's overflow.
const batchLen = 128

// BenchmarkBatch pushes batchLen elements with one PushSlice, then pops them
// back with PopBatch for 2 workers into a 64-slot buffer. ns/op is per
// element.
func BenchmarkBatch(b *testing.B) {
	items := make([]item, batchLen)
	batch := make([]*item, batchLen)
	for i := range items {
		batch[i] = &items[i]
	}
	dst := make([]*item, globalq.MaxBatch)
	for _, v := range benchQueues() {
		b.Run(v.name, func(b *testing.B) {
			q := v.mk()
			b.ReportAllocs()
			for i := 0; i < b.N; i += batchLen {
				q.PushSlice(batch)
				for got := 0; got < batchLen; {
					got += q.PopBatch(dst, 2)
				}
			}
		})
	}
}
