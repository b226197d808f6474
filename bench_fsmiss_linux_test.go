package blitz_test

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// BenchmarkFileRandomRead: rounds of 10^4 concurrent readers (tasks or
// goroutines), each making missReadsPerTask 4 KiB reads, one after the
// other, at random page-aligned offsets of a large file; one op is one
// round (40,000 reads), "reads/s" and MB/s the reads' throughput,
// "cpu-us/read" the process's CPU time per read.
//
// miss/...: the offsets of a round are distinct pages of the whole file
// (BLITZ_FSMISS_MB MiB, 1 GiB by default), whose pages are evicted from the
// page cache (POSIX_FADV_DONTNEED, checked with mincore) before each round:
// every read waits for the disk. direct/...: the same offsets, the file
// opened with O_DIRECT (page-aligned buffers), so no page cache at all.
// cached/...: the offsets lie in the first 256 MiB of the same file, read
// through beforehand and resident.
//
// uring: the readers are tasks awaiting File.ReadAt on an io_uring runtime;
// epollPool: the same tasks on an epoll runtime, where ReadAt runs on the
// blocking pool (512 threads at most by default); goroutines: a goroutine
// per reader calling os.File.ReadAt. Each side opens the file itself.
// "peak-threads" is the most OS threads the process had while the case ran
// (sampled from /proc/self/status every 2 ms; threads an earlier case of
// the same process made are counted too, so run one case per process to
// compare them), "new-threads" how many it created (the threadcreate
// profile).
//
// The file lives in BLITZ_FSMISS_DIR, else the temporary directory, else
// /var/tmp or the working directory when those are in memory (tmpfs, whose
// pages cannot be evicted); it is written once per process with 4 MiB
// writes, unlinked at once (the readers open /proc/self/fd/N) and vanishes
// with the process. The disk rows are skipped with -short (a 64 MiB file
// then serves the cached rows), when no directory has room for the file,
// or, for miss, when the filesystem keeps the pages (the skip says so). Run
// it with few rounds, e.g. -bench FileRandomRead -benchtime 5x.
func BenchmarkFileRandomRead(b *testing.B) {
	for _, kind := range []readKind{readMiss, readDirect, readCached} {
		b.Run(kind.String(), func(b *testing.B) {
			mf := missBenchFile(b)
			if kind != readCached && testing.Short() {
				b.Skip("-short: no disk reads (the file is too small to miss in)")
			}
			if kind == readMiss && mf.evictIgnored != "" {
				b.Skip(mf.evictIgnored)
			}
			if kind == readCached {
				mf.warm(b)
			}
			b.Run("uring", func(b *testing.B) {
				rt, err := blitz.New(blitz.Config{Backend: blitz.BackendURing})
				if err != nil {
					b.Skip("no io_uring here")
				}
				_ = rt.Shutdown(context.Background())
				benchRandomReads(b, mf, kind, &blitz.Config{Backend: blitz.BackendURing})
			})
			b.Run("epollPool", func(b *testing.B) {
				benchRandomReads(b, mf, kind, &blitz.Config{Backend: blitz.BackendEpoll})
			})
			b.Run("goroutines", func(b *testing.B) { benchRandomReads(b, mf, kind, nil) })
		})
	}
}

// readKind is what the reads of BenchmarkFileRandomRead find.
type readKind int

const (
	readMiss   readKind = iota // pages evicted before each round
	readDirect                 // O_DIRECT: no page cache
	readCached                 // pages resident
)

func (k readKind) String() string { return [...]string{"miss", "direct", "cached"}[k] }

const (
	// missReaders is how many readers run at once.
	missReaders = 10_000
	// missReadsPerTask is how many reads each reader makes in a round.
	missReadsPerTask = 4
	// missCachedSpan is the part of the file the cached rows read (all of
	// it when it is smaller, with -short).
	missCachedSpan = 256 << 20
)

// missFile is the file of BenchmarkFileRandomRead, made once per process.
type missFile struct {
	f    *os.File // unlinked; open until the process exits
	size int64
	// mapped is the file mapped read-only, for mincore.
	mapped []byte
	// evictIgnored says why the miss rows cannot run, "" when they can.
	evictIgnored string
}

var (
	missFileOnce sync.Once
	missFileVal  *missFile
	missFileSkip string
)

// missFileSize is BLITZ_FSMISS_MB MiB (1 GiB by default), 64 MiB with
// -short.
func missFileSize() int64 {
	if testing.Short() {
		return 64 << 20
	}
	if s := os.Getenv("BLITZ_FSMISS_MB"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 256 {
			return n << 20
		}
	}
	return 1 << 30
}

// missBenchFile makes the file the first time and skips b if it cannot.
func missBenchFile(b *testing.B) *missFile {
	missFileOnce.Do(func() { missFileVal, missFileSkip = makeMissFile(missFileSize()) })
	if missFileVal == nil {
		b.Skip(missFileSkip)
	}
	return missFileVal
}

// missFileDir picks a directory on a disk with room for size bytes.
func missFileDir(size int64) (string, string) {
	cands := []string{os.TempDir(), "/var/tmp", "."}
	if d := os.Getenv("BLITZ_FSMISS_DIR"); d != "" {
		cands = []string{d}
	}
	why := ""
	for _, d := range cands {
		var st unix.Statfs_t
		if err := unix.Statfs(d, &st); err != nil {
			why += fmt.Sprintf("%s: %v; ", d, err)
			continue
		}
		if t := uint32(st.Type); t == unix.TMPFS_MAGIC || t == unix.RAMFS_MAGIC { // Type is int32 on 386
			why += d + " is in memory; "
			continue
		}
		if free := int64(st.Bavail) * int64(st.Bsize); free < size+size/4 {
			why += fmt.Sprintf("%s has %d MiB free; ", d, free>>20)
			continue
		}
		return d, ""
	}
	return "", "no directory for a " + strconv.FormatInt(size>>20, 10) + " MiB file on a disk: " + why
}

// makeMissFile writes the file with large writes, syncs it (dirty pages
// cannot be evicted) and checks that its pages can be evicted.
func makeMissFile(size int64) (*missFile, string) {
	dir, why := missFileDir(size)
	if dir == "" {
		return nil, why
	}
	f, err := os.CreateTemp(dir, "blitz-fsmiss-*")
	if err != nil {
		return nil, err.Error()
	}
	_ = os.Remove(f.Name()) // the open descriptor keeps the data; readers open /proc/self/fd/N
	chunk := make([]byte, 4<<20)
	_, _ = crand.Read(chunk)
	for off := int64(0); off < size; off += int64(len(chunk)) {
		for p := 0; p < len(chunk); p += 4096 { // every page differs
			binary.LittleEndian.PutUint64(chunk[p:], uint64(off)+uint64(p))
		}
		if _, err := f.WriteAt(chunk[:min(int64(len(chunk)), size-off)], off); err != nil {
			f.Close()
			return nil, "writing the file: " + err.Error()
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err.Error()
	}
	mapped, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, "mmap: " + err.Error()
	}
	mf := &missFile{f: f, size: size, mapped: mapped}
	if err := mf.evict(); err != nil {
		mf.evictIgnored = "posix_fadvise(DONTNEED): " + err.Error()
	} else if n, total := mf.resident(0, size); n > total/100 {
		mf.evictIgnored = fmt.Sprintf("the filesystem of %s keeps the pages: %d of %d resident after POSIX_FADV_DONTNEED", dir, n, total)
	}
	return mf, ""
}

// path is a name that opens the (unlinked) file.
func (m *missFile) path() string { return "/proc/self/fd/" + strconv.Itoa(int(m.f.Fd())) }

// evict drops the file's pages from the page cache.
func (m *missFile) evict() error { return unix.Fadvise(int(m.f.Fd()), 0, 0, unix.FADV_DONTNEED) }

// resident counts the pages of [off, off+n) in the page cache.
func (m *missFile) resident(off, n int64) (in, total int) {
	vec := make([]byte, (n+4095)/4096)
	// x/sys has no mincore wrapper for Linux.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m.mapped[off])), uintptr(n), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return -1, len(vec)
	}
	for _, v := range vec {
		in += int(v & 1)
	}
	return in, len(vec)
}

// cachedSpan is how much of the file the cached rows read.
func (m *missFile) cachedSpan() int64 { return min(missCachedSpan, m.size) }

// warm reads the cached span through and checks that it is resident.
func (m *missFile) warm(b *testing.B) {
	buf := make([]byte, 4<<20)
	for off := int64(0); off < m.cachedSpan(); off += int64(len(buf)) {
		if _, err := m.f.ReadAt(buf, off); err != nil {
			b.Fatal(err)
		}
	}
	if in, total := m.resident(0, m.cachedSpan()); in != total {
		b.Logf("cached span: %d of %d pages resident", in, total)
	}
}

// missOffsets fills offs with page-aligned offsets: distinct pages of the
// whole file for misses, any pages of the cached span otherwise.
func missOffsets(rng *rand.Rand, offs []int64, m *missFile, kind readKind) {
	if kind == readCached {
		for i := range offs {
			offs[i] = rng.Int64N(m.cachedSpan()/4096) * 4096
		}
		return
	}
	pages := m.size / 4096
	seen := make([]uint64, (pages+63)/64)
	for i := range offs {
		for {
			p := rng.Int64N(pages)
			if seen[p/64]&(1<<(p%64)) == 0 {
				seen[p/64] |= 1 << (p % 64)
				offs[i] = p * 4096
				break
			}
		}
	}
}

// benchRandomReads runs b.N rounds of kind as tasks of a runtime made with
// cfg (its files on io_uring with BackendURing, on the blocking pool
// otherwise), or as goroutines when cfg is nil.
func benchRandomReads(b *testing.B, m *missFile, kind readKind, cfg *blitz.Config) {
	const reads = missReaders * missReadsPerTask
	offs := make([]int64, reads)
	rng := rand.New(rand.NewPCG(1, 2))
	// The buffers are page-aligned, as O_DIRECT needs.
	mem := make([]byte, (missReaders+1)*4096)
	mem = mem[4096-int(uintptr(unsafe.Pointer(&mem[0]))%4096):]
	bufs := make([][]byte, missReaders)
	for i := range bufs {
		bufs[i] = mem[i*4096 : (i+1)*4096 : (i+1)*4096]
	}
	flag := os.O_RDONLY
	if kind == readDirect {
		flag |= unix.O_DIRECT
	}
	var round func() error
	if cfg == nil {
		osf, err := os.OpenFile(m.path(), flag, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer osf.Close()
		round = func() error { return goroutineRound(osf, offs, bufs) }
	} else {
		rt := newBenchRuntime(b, *cfg)
		h := rt.Handle()
		r, err := blitz.BlockOn(context.Background(), h, future.Future[future.Result[*blitz.File]](blitz.OpenFile(m.path(), flag, 0)))
		if err != nil || r.Err != nil {
			b.Fatal(err, r.Err)
		}
		if ring := cfg.Backend == blitz.BackendURing; blitz.FileOnRing(r.Value) != ring {
			b.Fatalf("file on the ring: %v, want %v", !ring, ring)
		}
		defer blitz.BlockOn(context.Background(), h, future.Future[future.Result[struct{}]](r.Value.Close()))
		round = func() error { return taskRound(h, r.Value, offs, bufs) }
	}
	threads := startThreadSampler()
	b.Cleanup(func() { threads() }) // stops the sampler after a Fatal too
	created := pprof.Lookup("threadcreate").Count()
	b.SetBytes(reads * 4096)
	var cpu time.Duration // the process's CPU time in the rounds
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		missOffsets(rng, offs, m, kind)
		if kind == readMiss {
			if err := m.evict(); err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				if in, total := m.resident(0, m.size); in > total/100 {
					b.Fatalf("%d of %d pages resident after POSIX_FADV_DONTNEED", in, total)
				}
			}
		}
		cpu0 := processCPU()
		b.StartTimer()
		if err := round(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += processCPU() - cpu0
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)*reads/b.Elapsed().Seconds(), "reads/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*reads), "cpu-us/read")
	b.ReportMetric(float64(threads()), "peak-threads")
	b.ReportMetric(float64(pprof.Lookup("threadcreate").Count()-created), "new-threads")
}

// goroutineRound reads offs with a goroutine per reader.
func goroutineRound(f *os.File, offs []int64, bufs [][]byte) error {
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for i := range missReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, off := range offs[i*missReadsPerTask : (i+1)*missReadsPerTask] {
				if _, err := f.ReadAt(bufs[i], off); err != nil {
					failed.Store(&err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if p := failed.Load(); p != nil {
		return *p
	}
	return nil
}

// taskRound reads offs with a task per reader.
func taskRound(h blitz.Handle, f *blitz.File, offs []int64, bufs [][]byte) error {
	hs := make([]blitz.JoinHandle[error], missReaders)
	for i := range hs {
		hs[i] = blitz.SpawnOn(h, future.Future[error](&offsetReader{f: f, offs: offs[i*missReadsPerTask : (i+1)*missReadsPerTask], buf: bufs[i]}))
	}
	for _, jh := range hs {
		if err, werr := jh.Wait(context.Background()); err != nil || werr != nil {
			return fmt.Errorf("%v %v", err, werr)
		}
	}
	return nil
}

// offsetReader is a task reading len(buf) bytes at each of offs in turn.
type offsetReader struct {
	f    *blitz.File
	offs []int64
	buf  []byte
	cur  *blitz.FileIOFuture
}

func (r *offsetReader) Poll(cx *future.Context) (error, bool) {
	for {
		if r.cur == nil {
			if len(r.offs) == 0 {
				return nil, true
			}
			r.cur = r.f.ReadAt(r.buf, r.offs[0])
			r.offs = r.offs[1:]
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

// startThreadSampler samples the process's thread count every 2 ms until
// the returned function is called, which returns the peak.
func startThreadSampler() func() int {
	var peak atomic.Int64
	peak.Store(int64(procThreads()))
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if n := int64(procThreads()); n > peak.Load() {
					peak.Store(n)
				}
			}
		}
	}()
	var once sync.Once
	return func() int {
		once.Do(func() { close(stop); <-done })
		return int(peak.Load())
	}
}

// processCPU is the CPU time the process used so far, user and system
// (all its threads).
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procThreads is the Threads line of /proc/self/status.
func procThreads() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("Threads:")); ok {
			n, _ := strconv.Atoi(string(bytes.TrimSpace(v)))
			return n
		}
	}
	return 0
}
