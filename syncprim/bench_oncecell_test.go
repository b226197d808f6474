package syncprim

import (
	"context"
	"sync"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

var benchOnceSink int

func benchOnceInit(context.Context) (int, error) { return 42, nil }

func benchOnceInitFuture() future.Future[future.Result[int]] { panic("not called") }

// BenchmarkOnceCell: op = one get of an initialized cell (and, for the
// init pair, a fresh cell's first initialization).
func BenchmarkOnceCell(b *testing.B) {
	b.Run("blitz", func(b *testing.B) {
		b.ReportAllocs()
		var c OnceCell[int]
		_ = c.Set(42)
		for range b.N {
			v, _ := c.Get()
			benchOnceSink += v
		}
	})
	b.Run("blitzFuture", func(b *testing.B) {
		b.ReportAllocs()
		var c OnceCell[int]
		_ = c.Set(42)
		cx := future.NewContext(waker.Noop())
		f := new(InitFuture[int])
		for range b.N {
			*f = *c.GetOrInit(benchOnceInitFuture)
			r, _ := f.Poll(cx)
			benchOnceSink += r.Value
		}
	})
	b.Run("blitzBlocking", func(b *testing.B) {
		b.ReportAllocs()
		var c OnceCell[int]
		_ = c.Set(42)
		ctx := context.Background()
		for range b.N {
			v, _ := c.GetOrInitBlocking(ctx, benchOnceInit)
			benchOnceSink += v
		}
	})
	b.Run("syncOnce", func(b *testing.B) {
		b.ReportAllocs()
		get := sync.OnceValue(func() int { return 42 })
		get()
		for range b.N {
			benchOnceSink += get()
		}
	})
	b.Run("initBlitz", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		var c OnceCell[int]
		for range b.N {
			c = OnceCell[int]{}
			v, _ := c.GetOrInitBlocking(ctx, benchOnceInit)
			benchOnceSink += v
		}
	})
	b.Run("initSyncOnce", func(b *testing.B) {
		b.ReportAllocs()
		var once sync.Once
		v := 0
		set := func() { v = 42 }
		for range b.N {
			once = sync.Once{}
			once.Do(set)
			benchOnceSink += v
		}
	})
}
