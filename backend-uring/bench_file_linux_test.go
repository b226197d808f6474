//go:build linux

package uring

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// BenchmarkFileReadRaw is the floor under the runtime's BenchmarkFileRead:
// 4 KiB reads at random offsets of a file in the page cache, with no
// runtime on top. uring: one ring per thread (GOMAXPROCS threads, each a
// goroutine locked to its thread), each keeping depth reads in flight and
// resubmitting each as it completes, so that one io_uring_enter carries a
// batch; pread: the same threads each calling pread(2) in a loop. ns/op is
// the time of one read over all threads.
func BenchmarkFileReadRaw(b *testing.B) {
	size := int64(256 << 20)
	if testing.Short() {
		size = 16 << 20
	}
	name := filepath.Join(b.TempDir(), "data")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(chunk)) {
		if _, err := f.WriteAt(chunk, off); err != nil {
			b.Fatal(err)
		}
	}
	fd := int(f.Fd())
	for _, depth := range []int{1, 32, 128} {
		b.Run("uring/depth"+strconv.Itoa(depth), func(b *testing.B) { benchFileReadRing(b, fd, size, depth) })
	}
	b.Run("pread", func(b *testing.B) { benchFileReadPread(b, fd, size) })
}

// threads runs body on GOMAXPROCS locked goroutines and times them.
func threads(b *testing.B, body func(id int, left *atomic.Int64)) {
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for id := range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			body(id, &left)
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reads/s")
}

func benchFileReadRing(b *testing.B, fd int, size int64, depth int) {
	threads(b, func(id int, left *atomic.Int64) {
		be, err := New(Options{})
		if err != nil {
			b.Error(err)
			return
		}
		defer be.Close()
		rng := rand.New(rand.NewPCG(uint64(id), 7))
		ops := make([]backend.Op, depth)
		bufs := make([]byte, depth*4096)
		inflight := 0
		submit := func(op *backend.Op) bool {
			if left.Add(-1) < 0 {
				return false
			}
			op.Offset = rng.Int64N(size/4096) * 4096
			if err := be.Submit(op); err != nil {
				b.Error(err)
				return false
			}
			inflight++
			return true
		}
		for i := range ops {
			ops[i] = backend.Op{Kind: backend.KindRead, FD: backend.FD(fd), Buf: bufs[i*4096 : (i+1)*4096]}
			if !submit(&ops[i]) {
				break
			}
		}
		out := make([]Completion, depth)
		for inflight > 0 {
			n, err := be.Wait(out, -1)
			if err != nil {
				b.Error(err)
				return
			}
			for _, c := range out[:n] {
				inflight--
				if c.Err != nil || c.N != 4096 {
					b.Error(c.Err, c.N)
					return
				}
				submit(c.Op)
			}
		}
	})
}

func benchFileReadPread(b *testing.B, fd int, size int64) {
	threads(b, func(id int, left *atomic.Int64) {
		rng := rand.New(rand.NewPCG(uint64(id), 7))
		buf := make([]byte, 4096)
		for left.Add(-1) >= 0 {
			if n, err := unix.Pread(fd, buf, rng.Int64N(size/4096)*4096); err != nil || n != 4096 {
				b.Error(n, err)
				return
			}
		}
	})
}
