package blocking_test

import (
	"context"
	"sync"
	"testing"

	. "github.com/blitz-go/blitz/blocking"
)

// The benchmarks run the pool side by side with a plain go statement. The
// sub-benchmark names are parsed by the repository's side-by-side benchmark
// tool: keep them, and keep "pool" first.

// benchBatch is how many empty functions each benchmark starts before it
// waits for them all; ns/op is per function, start to completion, the wait
// included.
const benchBatch = 64

// BenchmarkSubmit measures the cost of running an empty function on the pool
// (Submit of a preallocated Task, reused once its Run has been called)
// against starting a goroutine for it.
func BenchmarkSubmit(b *testing.B) {
	b.Run("pool", func(b *testing.B) {
		p, err := New(Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Shutdown(context.Background(), RunQueued)
		var wg sync.WaitGroup
		tasks := make([]Task, benchBatch)
		for i := range tasks {
			tasks[i].Run = wg.Done
		}
		b.ReportAllocs()
		b.ResetTimer()
		for n := 0; n < b.N; n += benchBatch {
			k := min(benchBatch, b.N-n)
			wg.Add(k)
			for i := range k {
				if err := p.Submit(&tasks[i]); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		var wg sync.WaitGroup
		fn := wg.Done
		b.ReportAllocs()
		b.ResetTimer()
		for n := 0; n < b.N; n += benchBatch {
			k := min(benchBatch, b.N-n)
			wg.Add(k)
			for range k {
				go fn()
			}
			wg.Wait()
		}
	})
}
