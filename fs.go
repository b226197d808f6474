package blitz

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/iodriver"
)

// File is an open file whose operations are futures, resolving to the same
// values and errors the os.File method would return (*fs.PathError values
// that errors.Is(err, fs.ErrNotExist) and the like understand). Open one
// with Open, Create or OpenFile.
//
// On Linux with io_uring the open and the operations Read, Write, ReadAt,
// WriteAt, ReadvAt, WritevAt, Sync, Stat, Truncate and Close are io_uring
// operations (openat, read, write, readv, writev, fsync, statx, ftruncate,
// close), submitted to the ring of the worker that polls them; Truncate
// falls back to the blocking pool on kernels before 6.9, as any of them
// does when the ring refuses it. SeekTo, and every operation on the other
// backends, run on the blocking pool, off the workers. A file the ring
// opened is owned by the File until OS hands its descriptor to an *os.File;
// a file opened on the pool (flags the ring has no word for, like
// os.O_SYNC) is owned by its *os.File, and Close is then os.File.Close on
// the pool. Either way an unreachable File that was never closed has its
// descriptor closed by the garbage collector, as an os.File has.
//
// As with os.File, the operations that use the file position (Read, Write)
// should not overlap one another; ReadAt and WriteAt may run concurrently.
// Close waits until the io_uring operations in flight have completed (a
// cancelled one included), and refuses later ones with fs.ErrClosed. Once
// the runtime that opened the file has begun its Shutdown, the operations
// fail too, with an error matching both fs.ErrClosed and ErrShutdown; Close
// still closes the file.
type File struct {
	name string
	// osMu guards f, made on demand by OS for a file whose descriptor the
	// File owns, and orders OS with Close's first poll (which sets closed
	// under it): a descriptor is owned by exactly one of the two.
	osMu sync.Mutex
	// f is the *os.File that owns the descriptor: set by a pool open, or by
	// OS for a ring-owned file; nil while the File owns it (ownsFD).
	f *os.File
	// ring is the io_uring side of the operations, nil when they run on
	// the blocking pool. Set by the open, before the File is handed out.
	ring *fileRing
	// cleanup closes a ring-owned descriptor if the File becomes
	// unreachable unclosed; stopped by Close and by OS. Set by the open.
	cleanup goruntime.Cleanup
	// rt is the runtime that opened the file, whose blocking pool serves
	// its calls when a goroutine polls them (AsIOReader). Set by the open.
	rt *Runtime
	// poll is the state of PollRead and PollWrite (see AsyncReader).
	poll filePoll
	// pos holds the cancelled Reads at the file position whose data the
	// next Read delivers.
	pos posReads
	// closed is set by Close's first poll (under osMu), so that a later
	// call on the pool fails with fs.ErrClosed on every system (Windows'
	// os.File.Stat would report an invalid handle instead), and a second
	// Close of a ring-owned file too.
	closed atomic.Bool
	// spareIO and spareOp are the futures that Read, Write, ReadAt,
	// WriteAt, ReadvAt and WritevAt (spareIO), and Sync and Truncate
	// (spareOp), hand out again once done with (see Read). Taken by the
	// calls and put back by the futures, from any task; see fileSpares.
	spareIO fileSpares[FileIOFuture]
	spareOp fileSpares[FileOpFuture[struct{}]]
}

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

// OS returns an *os.File for the file, for code that needs one (the caller
// then must not use it from a task: its methods block). For a file the
// ring opened, the first call hands the descriptor over to the *os.File,
// which owns it from then on: Close then closes it through os.File.Close,
// on the blocking pool. After Close it returns nil.
func (f *File) OS() *os.File {
	f.osMu.Lock()
	defer f.osMu.Unlock()
	if f.closed.Load() {
		return nil // f.f stays: the Close in progress closes it
	}
	if f.f == nil && f.ring != nil {
		f.cleanup.Stop()
		f.f = os.NewFile(uintptr(f.ring.fd), f.name)
	}
	return f.f
}

// errFileRuntimeDown is the error (inside an *fs.PathError) of an operation
// on a File whose runtime shut down: the file is as good as closed, so it
// matches fs.ErrClosed, as the errors of a closed os.File do, and says why
// with ErrShutdown. Close still closes the file.
var errFileRuntimeDown = fmt.Errorf("%w (%w)", fs.ErrClosed, ErrShutdown)

// runtimeDown reports whether the Shutdown of f's runtime began: its rings
// and its blocking pool refuse work from then on. Any goroutine may call
// it.
func (f *File) runtimeDown() bool { return f.rt != nil && f.rt.down.Load() }

// opError is the error of f's operation op that failed with err, as os.File
// reports it (see fsPathError). Once f's runtime is down, a refusal by its
// closed ring or pool, or a cancellation by the shutdown, is reported as
// errFileRuntimeDown.
func (f *File) opError(op string, err error) error {
	if f.runtimeDown() && (errors.Is(err, backend.ErrClosed) || errors.Is(err, backend.ErrCanceled) || errors.Is(err, ErrShutdown)) {
		err = errFileRuntimeDown
	}
	return fsPathError(op, f.name, err)
}

// ownsFD reports whether the File owns its descriptor (a ring open that OS
// has not handed out). Any goroutine may call it.
func (f *File) ownsFD() bool {
	f.osMu.Lock()
	defer f.osMu.Unlock()
	return f.f == nil
}

// Open opens name for reading.
func Open(name string) *OpenFuture {
	return OpenFile(name, os.O_RDONLY, 0)
}

// Create creates or truncates name, opened for reading and writing, with
// mode 0666 before the umask.
func Create(name string) *OpenFuture {
	return OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens name with os.OpenFile's flags (os.O_RDONLY, os.O_RDWR,
// os.O_CREATE, os.O_EXCL, os.O_APPEND, os.O_TRUNC, ...) and permissions,
// close-on-exec. On io_uring the open is an openat on the polling worker's
// ring (flags beyond those listed, like os.O_SYNC or syscall.O_DIRECT, take
// the blocking pool for the open, and the data operations still go to the
// ring; O_DIRECT's reads and writes need the buffers, offsets and lengths
// aligned as the kernel requires); the descriptor is then wrapped with
// os.NewFile. One difference with
// os.OpenFile follows from io_uring trying the open without blocking first:
// a FIFO opened read-only does not wait for a writer (reads see the end of
// the file until one comes). A FIFO opened write-only without a reader, which
// the ring refuses (ENXIO), is opened again on the pool, which waits. On a
// runtime that was shut down the open fails with an error matching
// ErrShutdown, and opens (or creates) nothing.
func OpenFile(name string, flag int, perm fs.FileMode) *OpenFuture {
	return &OpenFuture{name: name, flag: flag, perm: perm}
}

// OpenFuture is the future of Open, Create and OpenFile: its pointer is a
// future.Future[future.Result[*File]] and a future.Canceler. Cancelled, it
// closes the file it opened anyway.
type OpenFuture struct {
	_    noCopy
	name string
	flag int
	perm fs.FileMode

	// The fields below belong to the task polling the future. The first
	// poll picks the path: the ring (onRing, op) or the pool (blk).
	onRing   bool
	finished bool
	op       openOp
	blk      *BlockingFuture[*File]
}

// Poll opens the file and gives it, on io_uring, its ring side.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the future package, "The cooperative budget").
func (o *OpenFuture) Poll(cx *future.Context) (future.Result[*File], bool) {
	if o.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	if !cx.Proceed() {
		return future.Result[*File]{}, false
	}
	v, ok := o.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (o *OpenFuture) poll(cx *future.Context) (future.Result[*File], bool) {
	if o.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	h, in := Current(cx)
	if !o.onRing && o.blk == nil && !(in && o.submit(cx, h.rt)) {
		o.blk = o.onPool()
	}
	if o.blk != nil {
		r, ok := o.blk.Poll(cx)
		if ok && r.Err == nil && in {
			r.Value.adopt(h.rt)
		}
		o.finished = ok
		return r, ok
	}
	c, ok := o.op.poll(cx)
	if !ok {
		return future.Result[*File]{}, false
	}
	if c.Err != nil && openRetryOnPool(c.Err) {
		o.onRing, o.blk = false, o.onPool()
		return o.Poll(cx)
	}
	o.finished = true
	if c.Err != nil {
		return future.Fail[*File](fsPathError("open", o.name, c.Err)), true
	}
	return future.Result[*File]{Value: newRingFile(h.rt, o.name, c.FD)}, true
}

// submit starts the openat on the ring of cx's worker, and reports false
// when the runtime has no ring for it, the flags need the pool, or the ring
// refused it.
func (o *OpenFuture) submit(cx *future.Context, rt *Runtime) bool {
	flags, ok := ringOpenFlags(o.flag)
	if !ok || !fileRingCaps(rt).Has(backend.CapFileOps) {
		return false
	}
	o.op.args = backend.FileArgs{Path: o.name, OpenFlags: flags, Perm: ringPerm(o.perm)}
	o.op.op = backend.Op{Kind: backend.KindOpenAt, File: &o.op.args}
	if err := o.op.submitAs(cx, rt.io.RingOf(cx.Worker()), &o.op); err != nil {
		return false // a path with a NUL byte, a ring closing: os.OpenFile says what it says
	}
	countRingFileOp(backend.KindOpenAt)
	o.onRing = true
	return true
}

// onPool is the open as os.OpenFile, on the blocking pool.
func (o *OpenFuture) onPool() *BlockingFuture[*File] {
	name := o.name
	blk := Blocking(func() (*File, error) {
		f, err := os.OpenFile(name, o.flag, o.perm)
		if err != nil {
			return nil, err
		}
		return &File{name: name, f: f}, nil
	})
	// A file opened for a caller that gave up is closed, not leaked.
	blk.dispose = func(f *File) { _ = f.f.Close() }
	return blk
}

// Cancel abandons the open; a file it opened anyway is closed.
func (o *OpenFuture) Cancel() {
	if o.finished {
		return
	}
	o.finished = true
	if o.blk != nil {
		o.blk.Cancel()
		return
	}
	if o.onRing {
		o.op.abandon()
	}
}

// newRingFile makes the File of fd, opened by the ring of rt (an io_uring
// runtime), which owns it until OS hands it out.
func newRingFile(rt *Runtime, name string, fd backend.FD) *File {
	f := &File{name: name, rt: rt, ring: newFileRing(rt.io, fd)}
	if rt.sim != nil {
		// The simulated backend's descriptor: no system call may touch
		// it, and no cleanup may change the simulation from the GC's
		// goroutine (an unclosed File stays open in the simulation).
		f.ring.sim = rt.io.Rings()[0].Backend()
		return f
	}
	f.cleanup = goruntime.AddCleanup(f, func(fd backend.FD) { _ = closeRawFD(fd) }, fd)
	return f
}

// adopt makes f a file of rt: rt's pool serves its calls from goroutines,
// and on io_uring it gets its ring side.
func (f *File) adopt(rt *Runtime) {
	f.rt = rt
	if rt.backendName == BackendURing && rt.io != nil {
		f.attachRing(rt.io)
	}
}

// attachRing gives f an io_uring side over its descriptor, which the
// os.File keeps owning (it closes it).
func (f *File) attachRing(d *iodriver.Driver) {
	sc, err := f.f.SyscallConn()
	if err != nil {
		return // no descriptor to share: the blocking pool does the I/O
	}
	_ = sc.Control(func(fd uintptr) {
		fr := newFileRing(d, backend.FD(fd))
		fr.noWait.forFD(fr.fd) // os.OpenFile may have passed O_DIRECT
		f.ring = fr
	})
}

// dataOp makes the future of a data operation, on the ring or, without
// one, on the blocking pool: a spare of f's that a finished operation gave
// back, or a new one. Any goroutine may call it.
func (f *File) dataOp(kind backend.Kind, buf []byte, bufs [][]byte, off int64, whole bool) *FileIOFuture {
	op := f.spareIO.take()
	if op == nil {
		op = new(FileIOFuture)
	}
	op.reset(f, kind, buf, bufs, off, whole)
	return op
}

// Read reads up to len(buf) bytes at the file position; at the end of the
// file it returns 0 and io.EOF.
//
// The future is the File's: once it has completed, or been cancelled
// before its operation started, the File's next data operation (Read,
// Write, ReadAt, WriteAt, ReadvAt or WritevAt) may reuse it, so that a task
// reading and writing in a loop allocates nothing per operation. Do not
// keep it, poll it or cancel it past its completion (polling then panics
// with future.ErrPolledAfterCompletion until another call takes it over).
// The same holds for the futures of Sync and Truncate, among themselves.
// Concurrent operations (ReadAt and WriteAt from several tasks) each get a
// future of their own: a future is reused only once its task is done with
// it.
func (f *File) Read(buf []byte) *FileIOFuture {
	return f.dataOp(backend.KindRead, buf, nil, -1, false)
}

// Write writes buf at the file position (at the end with O_APPEND).
func (f *File) Write(buf []byte) *FileIOFuture {
	return f.dataOp(backend.KindWrite, buf, nil, -1, true)
}

// ReadAt reads len(buf) bytes at offset off, or fewer and io.EOF at the end
// of the file.
func (f *File) ReadAt(buf []byte, off int64) *FileIOFuture {
	return f.dataOp(backend.KindRead, buf, nil, off, true)
}

// WriteAt writes buf at offset off.
func (f *File) WriteAt(buf []byte, off int64) *FileIOFuture {
	return f.dataOp(backend.KindWrite, buf, nil, off, true)
}

// ReadvAt fills bufs in order from offset off: it returns the total read,
// and io.EOF if the file ended before bufs were full.
func (f *File) ReadvAt(bufs [][]byte, off int64) *FileIOFuture {
	return f.dataOp(backend.KindReadv, nil, bufs, off, true)
}

// WritevAt writes bufs in order at offset off.
func (f *File) WritevAt(bufs [][]byte, off int64) *FileIOFuture {
	return f.dataOp(backend.KindWritev, nil, bufs, off, true)
}

// SeekTo sets the file position for the next Read or Write (io.SeekStart,
// io.SeekCurrent, io.SeekEnd) and returns the new position.
func (f *File) SeekTo(offset int64, whence int) *BlockingFuture[int64] {
	if f.runtimeDown() {
		return &BlockingFuture[int64]{state: blockingDone, err: &fs.PathError{Op: "seek", Path: f.name, Err: errFileRuntimeDown}}
	}
	if f.ownsFD() {
		fr := f.ring
		return blockingOn(f.rt, func() (int64, error) {
			if !fr.begin() { // holds Close off while the descriptor is used
				return 0, &fs.PathError{Op: "seek", Path: f.name, Err: fs.ErrClosed}
			}
			n, err := seekRawFD(fr.fd, offset, whence)
			fr.end()
			if err != nil {
				return 0, &fs.PathError{Op: "seek", Path: f.name, Err: err}
			}
			return n, nil
		})
	}
	return blockingOn(f.rt, func() (int64, error) { return f.f.Seek(offset, whence) })
}

// Sync commits the file's contents to stable storage (fsync). Its future is
// the File's, reused by a later Sync or Truncate once done with (see Read).
func (f *File) Sync() *FileOpFuture[struct{}] {
	return f.syncOp(backend.KindFsync, 0)
}

// Stat returns the file's metadata, as os.File.Stat does: on io_uring from
// a statx, with Sys() a *syscall.Stat_t filled from it.
func (f *File) Stat() *FileOpFuture[fs.FileInfo] {
	return newFileOp[fs.FileInfo](f, backend.KindStatx, 0)
}

// Truncate changes the file's size (a negative size is refused by the ring
// and fails on the pool, with os.File's error). Its future is the File's,
// reused by a later Sync or Truncate once done with (see Read).
func (f *File) Truncate(size int64) *FileOpFuture[struct{}] {
	return f.syncOp(backend.KindFtruncate, size)
}

// syncOp makes the future of Sync or Truncate: a spare of f's, or a new
// one. Any goroutine may call it.
func (f *File) syncOp(kind backend.Kind, size int64) *FileOpFuture[struct{}] {
	op := f.spareOp.take()
	if op == nil {
		op = new(FileOpFuture[struct{}])
	}
	runFn := op.runFn
	*op = FileOpFuture[struct{}]{file: f, kind: kind, size: size, runFn: runFn, spare: true}
	return op
}

// Close closes the file, once the io_uring operations in flight on it have
// completed; a second Close fails with fs.ErrClosed. A file the ring opened
// (and OS did not hand out) is closed by an io_uring close; any other by
// os.File.Close on the blocking pool.
func (f *File) Close() *CloseFuture {
	return &CloseFuture{f: f}
}

// CloseFuture is the future of File.Close: its pointer is a
// future.Future[future.Result[struct{}]] and a future.Canceler.
//
// Its fields belong to the task polling it.
type CloseFuture struct {
	f *File
	// started is set by the first poll, which decides how the file closes:
	// osf is the *os.File to close on the pool (blk), nil for a ring
	// close (op), or a second close (failed).
	started bool
	osf     *os.File
	failed  bool
	drained bool
	blk     *BlockingFuture[struct{}]
	op      *ioOp
	done    bool
}

// Poll waits for the ring's operations, then closes.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the future package, "The cooperative budget").
func (c *CloseFuture) Poll(cx *future.Context) (future.Result[struct{}], bool) {
	if c.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if !cx.Proceed() {
		return future.Result[struct{}]{}, false
	}
	v, ok := c.poll(cx)
	if ok {
		cx.Spend()
	}
	return v, ok
}

// poll is Poll past the budget check.
func (c *CloseFuture) poll(cx *future.Context) (future.Result[struct{}], bool) {
	if c.done {
		panic(future.ErrPolledAfterCompletion)
	}
	f := c.f
	if !c.started {
		c.start()
	}
	if c.failed {
		c.done = true
		return future.Fail[struct{}](&fs.PathError{Op: "close", Path: f.name, Err: fs.ErrClosed}), true
	}
	if !c.drained {
		if r := f.ring; r != nil && !r.drained(cx) {
			return future.Result[struct{}]{}, false
		}
		c.drained = true
	}
	if c.osf != nil {
		if c.blk == nil {
			if f.runtimeDown() {
				return c.closeNow()
			}
			osf := c.osf
			c.blk = blockingOn(f.rt, func() (struct{}, error) { return struct{}{}, osf.Close() })
		}
		r, ok := c.blk.Poll(cx)
		if ok && errors.Is(r.Err, ErrShutdown) {
			return c.closeNow() // the pool refused the close: the runtime is shutting down
		}
		c.done = ok
		return r, ok
	}
	return c.pollRingClose(cx)
}

// closeNow closes the *os.File on the polling goroutine, for a runtime
// whose blocking pool no longer takes calls: the file is closed all the
// same, as its ring-owned counterpart is by close(2) (pollRingClose).
func (c *CloseFuture) closeNow() (future.Result[struct{}], bool) {
	c.done = true
	return future.Result[struct{}]{Err: c.osf.Close()}, true
}

// start is the first poll's decision, made under osMu so that OS cannot
// hand the descriptor out from under a ring close.
func (c *CloseFuture) start() {
	f := c.f
	c.started = true
	f.osMu.Lock()
	first := !f.closed.Swap(true) // read by the pool calls of FileOpFuture and by OS
	c.osf = f.f
	f.osMu.Unlock()
	if c.osf == nil {
		// A ring-owned file: a second Close fails here (os.File.Close
		// reports its own second close).
		c.failed = !first
		if first {
			f.cleanup.Stop()
		}
	}
}

// pollRingClose closes a ring-owned descriptor with an io_uring close on
// the polling worker's ring; once the ring is closed (the runtime shut
// down), with close(2) at once.
func (c *CloseFuture) pollRingClose(cx *future.Context) (future.Result[struct{}], bool) {
	fr := c.f.ring
	if c.op == nil {
		c.op = &ioOp{op: backend.Op{Kind: backend.KindClose, FD: fr.fd}}
		if err := c.op.submit(cx, fr.io.RingOf(cx.Worker())); err != nil {
			c.done = true
			return c.closeResult(fr.closeRaw())
		}
		ringFileCloses.Add(1) // a statistic for tests; no ordering
	}
	comp, ok := c.op.poll(cx)
	if !ok {
		return future.Result[struct{}]{}, false
	}
	c.done = true
	return c.closeResult(comp.Err)
}

// closeResult is the close's outcome as os.File.Close reports it.
func (c *CloseFuture) closeResult(err error) (future.Result[struct{}], bool) {
	if err != nil {
		return future.Fail[struct{}](fsPathError("close", c.f.name, err)), true
	}
	return future.Result[struct{}]{}, true
}

// Cancel stops waiting; the file is closed anyway: by the close already
// started, or, when the ring's operations were still draining, by the
// last of them to complete.
func (c *CloseFuture) Cancel() {
	if c.done {
		return
	}
	c.done = true
	switch {
	case !c.started:
		c.start()
		if c.failed {
			return
		}
	case c.blk != nil:
		c.blk.Cancel() // a queued or running close runs to its end
		return
	case c.op != nil:
		c.op.abandon() // the kernel closes the descriptor whatever happens to the op
		return
	}
	f, osf := c.f, c.osf
	closeNow := func() {
		if osf != nil {
			_ = osf.Close()
			return
		}
		_ = f.ring.closeRaw()
	}
	switch {
	case f.ring != nil && f.ring.closeWhenDrained(closeNow):
	case f.ring != nil && f.ring.sim != nil:
		closeNow() // simulated: does not block, stays on the driving goroutine
	default:
		go closeNow() // close(2) may block (a network file system's flush): off the worker
	}
}

// ReadFile reads the whole file name.
func ReadFile(name string) *BlockingFuture[[]byte] {
	return Blocking(func() ([]byte, error) { return os.ReadFile(name) })
}

// WriteFile writes data to name, creating it with perm (before the umask)
// or truncating it.
func WriteFile(name string, data []byte, perm fs.FileMode) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.WriteFile(name, data, perm) })
}

// AppendFile appends data to name, creating it with perm if it does not
// exist.
func AppendFile(name string, data []byte, perm fs.FileMode) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, perm)
		if err != nil {
			return struct{}{}, err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		return struct{}{}, werr
	})
}

// ReadDir reads the directory name, its entries sorted by file name.
func ReadDir(name string) *BlockingFuture[[]fs.DirEntry] {
	return Blocking(func() ([]fs.DirEntry, error) { return os.ReadDir(name) })
}

// Mkdir makes the directory name.
func Mkdir(name string, perm fs.FileMode) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.Mkdir(name, perm) })
}

// MkdirAll makes the directory path and any parents it lacks.
func MkdirAll(path string, perm fs.FileMode) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.MkdirAll(path, perm) })
}

// Remove removes the file or empty directory name.
func Remove(name string) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.Remove(name) })
}

// RemoveAll removes path and everything it contains; a path that does not
// exist is not an error.
func RemoveAll(path string) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.RemoveAll(path) })
}

// Rename renames (moves) oldpath to newpath.
func Rename(oldpath, newpath string) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.Rename(oldpath, newpath) })
}

// Link makes newname a hard link to oldname.
func Link(oldname, newname string) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.Link(oldname, newname) })
}

// Symlink makes newname a symbolic link to oldname.
func Symlink(oldname, newname string) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.Symlink(oldname, newname) })
}

// Readlink returns the destination of the symbolic link name.
func Readlink(name string) *BlockingFuture[string] {
	return Blocking(func() (string, error) { return os.Readlink(name) })
}

// Stat returns the metadata of name, following symbolic links.
func Stat(name string) *BlockingFuture[fs.FileInfo] {
	return Blocking(func() (fs.FileInfo, error) { return os.Stat(name) })
}

// Lstat returns the metadata of name; a symbolic link is described, not
// followed.
func Lstat(name string) *BlockingFuture[fs.FileInfo] {
	return Blocking(func() (fs.FileInfo, error) { return os.Lstat(name) })
}

// Chmod changes the mode of name.
func Chmod(name string, mode fs.FileMode) *BlockingFuture[struct{}] {
	return Blocking(func() (struct{}, error) { return struct{}{}, os.Chmod(name, mode) })
}

// Canonicalize returns the absolute path of name with every symbolic link
// resolved; name must exist. As with filepath.Abs and EvalSymlinks, whose
// work it does off the workers, ".." is applied to the path as written
// before the links are resolved ("link/.." is "."), unlike realpath(3).
func Canonicalize(name string) *BlockingFuture[string] {
	return Blocking(func() (string, error) {
		abs, err := filepath.Abs(name)
		if err != nil {
			return "", &fs.PathError{Op: "canonicalize", Path: name, Err: err}
		}
		return filepath.EvalSymlinks(abs)
	})
}
