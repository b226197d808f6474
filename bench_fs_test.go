package blitz_test

import (
	"context"
	crand "crypto/rand"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// BenchmarkSpawnBlocking is the cost of one call of an empty function on
// the runtime's blocking pool (SpawnBlocking and JoinHandle.Wait from a
// goroutine) against a goroutine per call with a channel for the result.
// Calls run 64 at a time, so that the pool's threads are reused.
func BenchmarkSpawnBlocking(b *testing.B) {
	const batch = 64
	b.Run("blitz", func(b *testing.B) {
		rt := newBenchRuntime(b, blitz.Config{Backend: blitz.BackendNone})
		h := rt.Handle()
		hs := make([]blitz.JoinHandle[int], 0, batch)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += batch {
			hs = hs[:0]
			for j := 0; j < batch && i+j < b.N; j++ {
				hs = append(hs, blitz.SpawnBlocking(h, func() int { return j }))
			}
			for _, jh := range hs {
				if _, err := jh.Wait(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("goroutine", func(b *testing.B) {
		chs := make([]chan int, batch)
		for i := range chs {
			chs[i] = make(chan int, 1)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += batch {
			k := min(batch, b.N-i)
			for j := range k {
				go func() { chs[j] <- j }()
			}
			for j := range k {
				<-chs[j]
			}
		}
	})
}

// fileReadSize is the file BenchmarkFileRead reads: 256 MiB, or 16 MiB
// with -short.
func fileReadSize() int64 {
	if testing.Short() {
		return 16 << 20
	}
	return 256 << 20
}

// benchFile makes the file once per benchmark and reads it through, so that
// it is in the page cache.
func benchFile(b *testing.B) *os.File {
	b.Helper()
	name := filepath.Join(b.TempDir(), "data")
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	chunk := make([]byte, 1<<20)
	_, _ = crand.Read(chunk)
	for off := int64(0); off < fileReadSize(); off += int64(len(chunk)) {
		if _, err := f.WriteAt(chunk, off); err != nil {
			b.Fatal(err)
		}
	}
	for off := int64(0); off < fileReadSize(); off += int64(len(chunk)) {
		if _, err := f.ReadAt(chunk, off); err != nil {
			b.Fatal(err)
		}
	}
	return f
}

// fileReaders is how many reads are in flight in BenchmarkFileRead.
const fileReaders = 10_000

// BenchmarkFileRead: 10^4 concurrent readers, each reading 4 KiB at random
// offsets of a 256 MiB file in the page cache; ns/op is the time of one
// read over all of them, "reads/s" the reads per second. uring: each reader
// is a task awaiting File.ReadAt, an io_uring read on its worker's ring;
// blockingPool: the same tasks on a runtime without io_uring, where
// File.ReadAt runs on the blocking pool (default cap of 512 threads);
// osFileGoroutines: a goroutine per reader calling os.File.ReadAt.
// "cpu-ns/read" is the process's CPU time per read (Linux only).
func BenchmarkFileRead(b *testing.B) {
	b.Run("uring", func(b *testing.B) {
		rt, err := blitz.New(blitz.Config{Backend: blitz.BackendURing})
		if err != nil {
			b.Skip("no io_uring here")
		}
		_ = rt.Shutdown(context.Background())
		benchFileRead(b, blitz.Config{Backend: blitz.BackendURing}, true)
	})
	b.Run("blockingPool", func(b *testing.B) { benchFileRead(b, blitz.Config{Backend: blitz.BackendNone}, false) })
	b.Run("osFileGoroutines", func(b *testing.B) {
		f := benchFile(b)
		b.ResetTimer()
		start, cpu := time.Now(), processCPU()
		var wg sync.WaitGroup
		for i := range fileReaders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				buf := make([]byte, 4096)
				for range share(b.N, fileReaders, i) {
					if _, err := f.ReadAt(buf, rng.Int64N(fileReadSize()/4096)*4096); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reads/s")
		reportCPUPerRead(b, processCPU()-cpu)
	})
}

// benchFileRead runs the readers as tasks of a runtime made with cfg.
func benchFileRead(b *testing.B, cfg blitz.Config, ring bool) {
	osf := benchFile(b)
	rt := newBenchRuntime(b, cfg)
	h := rt.Handle()
	f, err := blitz.BlockOn(context.Background(), h, future.Future[future.Result[*blitz.File]](blitz.Open(osf.Name())))
	if err != nil || f.Err != nil {
		b.Fatal(err, f.Err)
	}
	if blitz.FileOnRing(f.Value) != ring {
		b.Fatalf("file on the ring: %v, want %v", !ring, ring)
	}
	_ = osf.Close() // the readers' file is f: one regular file open, as in osFileGoroutines
	defer blitz.BlockOn(context.Background(), h, future.Future[future.Result[struct{}]](f.Value.Close()))
	b.ResetTimer()
	start, cpu := time.Now(), processCPU()
	hs := make([]blitz.JoinHandle[error], fileReaders)
	for i := range hs {
		hs[i] = blitz.SpawnOn(h, future.Future[error](&fileReader{f: f.Value, left: share(b.N, fileReaders, i), buf: make([]byte, 4096), rng: rand.New(rand.NewPCG(uint64(i), 1))}))
	}
	for _, jh := range hs {
		if err, werr := jh.Wait(context.Background()); err != nil || werr != nil {
			b.Fatal(err, werr)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reads/s")
	reportCPUPerRead(b, processCPU()-cpu)
}

// reportCPUPerRead reports the CPU time the process spent per read
// ("cpu-ns/read", user and system, all threads), where the system can
// tell: a figure that a loaded machine disturbs less than the time.
func reportCPUPerRead(b *testing.B, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/read")
	}
}

// fileReader is a task reading 4 KiB at random offsets, left times. Its
// buffer is an object of its own, as the goroutine's is on its stack: held
// inline, it would make the reader a 4.2 KiB object with pointers, whose
// allocation sets a GC bitmap word by word and made spawning the 10^4
// readers cost more than their first reads.
type fileReader struct {
	f    *blitz.File
	left int
	rng  *rand.Rand
	buf  []byte
	cur  *blitz.FileIOFuture
}

func (r *fileReader) Poll(cx *future.Context) (error, bool) {
	for {
		if r.cur == nil {
			if r.left == 0 {
				return nil, true
			}
			r.left--
			r.cur = r.f.ReadAt(r.buf, r.rng.Int64N(fileReadSize()/4096)*4096)
		}
		res, ok := r.cur.Poll(cx)
		if !ok {
			return nil, false
		}
		r.cur = nil
		if res.Err != nil {
			return res.Err, true
		}
	}
}

// fileMetaTasks is how many tasks (or goroutines) run the metadata
// benchmarks at once.
const fileMetaTasks = 64

// metaCase is one side of BenchmarkFileStat and BenchmarkFileOpenClose: a
// runtime with io_uring (every op on the ring), one without a backend (every
// op on the blocking pool), or goroutines calling package os.
var metaCases = []struct {
	name string
	cfg  blitz.Config
	ring bool
}{
	{"uring", blitz.Config{Backend: blitz.BackendURing}, true},
	{"pool", blitz.Config{Backend: blitz.BackendNone}, false},
}

// BenchmarkFileStat: 64 tasks each calling File.Stat on one open file in
// turn; ns/op is the time of one stat over all of them. uring: a statx on
// the worker's ring; pool: os.File.Stat on the blocking pool; os: 64
// goroutines calling os.File.Stat.
func BenchmarkFileStat(b *testing.B) {
	for _, c := range metaCases {
		b.Run(c.name, func(b *testing.B) {
			rt := newMetaRuntime(b, c.cfg)
			h := rt.Handle()
			name := filepath.Join(b.TempDir(), "f")
			if err := os.WriteFile(name, []byte("stat me"), 0o600); err != nil {
				b.Fatal(err)
			}
			r, err := blitz.BlockOn(context.Background(), h, future.Future[future.Result[*blitz.File]](blitz.Open(name)))
			if err != nil || r.Err != nil {
				b.Fatal(err, r.Err)
			}
			defer blitz.BlockOn(context.Background(), h, future.Future[future.Result[struct{}]](r.Value.Close()))
			before := blitz.RingFileOps(backend.KindStatx)
			runMetaTasks(b, h, func(n int) future.Future[error] { return &statTask{f: r.Value, left: n} })
			if got := blitz.RingFileOps(backend.KindStatx) > before; got != c.ring {
				b.Fatalf("stat on the ring: %v, want %v", got, c.ring)
			}
		})
	}
	b.Run("os", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "f"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		runMetaGoroutines(b, func() error { _, err := f.Stat(); return err })
	})
}

// BenchmarkFileOpenClose: 64 tasks each opening a file read-only and
// closing it, in turn; ns/op is the time of one open and close over all of
// them. uring: an openat on the ring, the close on the pool; pool: both on
// the pool; os: 64 goroutines calling os.Open and Close.
func BenchmarkFileOpenClose(b *testing.B) {
	for _, c := range metaCases {
		b.Run(c.name, func(b *testing.B) {
			rt := newMetaRuntime(b, c.cfg)
			name := filepath.Join(b.TempDir(), "f")
			if err := os.WriteFile(name, []byte("open me"), 0o600); err != nil {
				b.Fatal(err)
			}
			before := blitz.RingFileOps(backend.KindOpenAt)
			runMetaTasks(b, rt.Handle(), func(n int) future.Future[error] { return &openCloseTask{name: name, left: n} })
			if got := blitz.RingFileOps(backend.KindOpenAt) > before; got != c.ring {
				b.Fatalf("open on the ring: %v, want %v", got, c.ring)
			}
		})
	}
	b.Run("os", func(b *testing.B) {
		name := filepath.Join(b.TempDir(), "f")
		if err := os.WriteFile(name, []byte("open me"), 0o600); err != nil {
			b.Fatal(err)
		}
		runMetaGoroutines(b, func() error {
			f, err := os.Open(name)
			if err != nil {
				return err
			}
			return f.Close()
		})
	})
}

// newMetaRuntime makes the runtime of a metadata benchmark, skipping the
// io_uring case where the kernel refuses it.
func newMetaRuntime(b *testing.B, cfg blitz.Config) *blitz.Runtime {
	if cfg.Backend == blitz.BackendURing {
		rt, err := blitz.New(cfg)
		if err != nil {
			b.Skip("no io_uring here")
		}
		_ = rt.Shutdown(context.Background())
	}
	return newBenchRuntime(b, cfg)
}

// runMetaTasks runs b.N operations as fileMetaTasks tasks made by task(n)
// (n operations each) and reports ops/s.
func runMetaTasks(b *testing.B, h blitz.Handle, task func(n int) future.Future[error]) {
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	hs := make([]blitz.JoinHandle[error], fileMetaTasks)
	for i := range hs {
		hs[i] = blitz.SpawnOn(h, task(share(b.N, fileMetaTasks, i)))
	}
	for _, jh := range hs {
		if err, werr := jh.Wait(context.Background()); err != nil || werr != nil {
			b.Fatal(err, werr)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// runMetaGoroutines runs b.N calls of op on fileMetaTasks goroutines and
// reports ops/s.
func runMetaGoroutines(b *testing.B, op func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range fileMetaTasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range share(b.N, fileMetaTasks, i) {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// statTask stats f, left times.
type statTask struct {
	f    *blitz.File
	left int
	cur  *blitz.FileOpFuture[fs.FileInfo]
}

func (t *statTask) Poll(cx *future.Context) (error, bool) {
	for {
		if t.cur == nil {
			if t.left == 0 {
				return nil, true
			}
			t.left--
			t.cur = t.f.Stat()
		}
		r, ok := t.cur.Poll(cx)
		if !ok {
			return nil, false
		}
		t.cur = nil
		if r.Err != nil {
			return r.Err, true
		}
	}
}

// openCloseTask opens name and closes it, left times.
type openCloseTask struct {
	name  string
	left  int
	open  *blitz.OpenFuture
	close *blitz.CloseFuture
}

func (t *openCloseTask) Poll(cx *future.Context) (error, bool) {
	for {
		switch {
		case t.close != nil:
			r, ok := t.close.Poll(cx)
			if !ok {
				return nil, false
			}
			if t.close = nil; r.Err != nil {
				return r.Err, true
			}
		case t.open != nil:
			r, ok := t.open.Poll(cx)
			if !ok {
				return nil, false
			}
			if t.open = nil; r.Err != nil {
				return r.Err, true
			}
			t.close = r.Value.Close()
		case t.left == 0:
			return nil, true
		default:
			t.left--
			t.open = blitz.OpenFile(t.name, os.O_RDONLY, 0)
		}
	}
}
