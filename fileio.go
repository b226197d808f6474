package blitz

import (
	"errors"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/contain"
	"github.com/blitz-go/blitz/internal/iodriver"
	"github.com/blitz-go/blitz/waker"
)

// fileRing is the io_uring side of a File: its descriptor, and the count of
// operations the kernel holds on it (or that are being started), which
// Close waits for. A File without one does its data I/O on the blocking
// pool.
type fileRing struct {
	io *iodriver.Driver
	fd backend.FD
	// caps are the backend's: whether Sync, Stat and Truncate may take the
	// ring too. Immutable after newFileRing (tests clear bits before use).
	caps backend.Caps

	// users counts the operations between begin and end; Close's drained
	// marks it closing, after which begin fails. The last end after that
	// wakes closeWk and runs closeFn. begin and end are atomic (the
	// readers of one File run on every worker); only the closing handshake
	// takes mu.
	users useCount
	// mu guards closeWk and closeFn. They are written before users is
	// marked closing (drained, closeWhenDrained) and read by the last end,
	// whose release pairs with that markClosing.
	mu      sync.Mutex
	closeWk waker.Waker
	closeFn func()

	// noWait decides whether reads try the page cache first (Linux; see
	// tryNoWait).
	noWait noWaitState
	// sim is the simulated backend that made fd, nil for a real one: its
	// descriptors are not the kernel's, so nothing may close or read them
	// with a system call (see closeRaw). Immutable after newRingFile.
	sim backend.Backend
}

// newFileRing makes the ring side of fd on d's rings.
func newFileRing(d *iodriver.Driver, fd backend.FD) *fileRing {
	return &fileRing{io: d, fd: fd, caps: d.Rings()[0].Backend().Caps()}
}

// closeRaw closes the descriptor outside the ring: close(2), or the
// simulated backend's CloseFD.
func (r *fileRing) closeRaw() error {
	if r.sim != nil {
		return r.sim.CloseFD(r.fd)
	}
	return closeRawFD(r.fd)
}

// begin counts an op about to be submitted; it fails once Close began.
// Any goroutine may call it; every true is paired with an end.
func (r *fileRing) begin() bool { return r.users.acquire() }

// end uncounts an op whose final completion arrived (or whose submission
// failed); the last one after Close began wakes the Close, or closes the
// file for a Close that was cancelled.
func (r *fileRing) end() {
	if !r.users.release() {
		return
	}
	r.mu.Lock()
	wk, fn := r.closeWk, r.closeFn
	r.closeWk, r.closeFn = waker.Waker{}, nil
	r.mu.Unlock()
	contain.WakeReported(r.io.Scheduler(), wk, contain.OfFileClose)
	switch {
	case fn == nil:
	case r.sim != nil:
		fn() // the simulated close does not block, and must stay on the driving goroutine
	default:
		go fn() // close(2) may block: not on the worker that collected the completion
	}
}

// drained marks the file closing and reports whether no op is in flight;
// if one is, the last one's end wakes cx's task. Called by Close's task,
// again at each poll until it reports true.
func (r *fileRing) drained(cx *future.Context) bool {
	r.mu.Lock()
	r.closeWk = cx.Waker()
	r.mu.Unlock()
	_, busy := r.users.markClosing()
	return !busy
}

// closeWhenDrained marks the file closing and, if ops are in flight, has
// the last one's end run fn and reports true; with none it reports false
// and the caller closes. For a cancelled Close.
func (r *fileRing) closeWhenDrained(fn func()) bool {
	r.mu.Lock()
	r.closeFn = fn
	r.mu.Unlock()
	if _, busy := r.users.markClosing(); busy {
		return true
	}
	r.mu.Lock()
	r.closeFn = nil
	r.mu.Unlock()
	return false
}

// fileSpareSlots is how many spare futures of each kind a File keeps: one
// per task that runs the kind in a loop at once, for a few such tasks.
const fileSpareSlots = 4

// fileSpares is a File's small free list of futures of one type, which its
// calls hand out again, so that a task reading, writing or syncing in a loop
// allocates nothing per operation (see File.Read). A call takes a future
// out of a slot (take), after which the future is its task's alone; the
// future puts itself back (put) once it is done with: at its completion,
// after its last access, or at a Cancel that leaves nothing of it in flight
// (one whose op the kernel or the blocking pool still holds, or a Read that
// lingers, is never put back: the collector takes it). The slots' atomics
// order everything the task that put a future back did before everything
// the task that takes it does. Any goroutine may call take and put.
type fileSpares[T any] struct {
	slots [fileSpareSlots]atomic.Pointer[T]
}

// take returns a spare future, or nil when there is none.
func (s *fileSpares[T]) take() *T {
	for i := range s.slots {
		if s.slots[i].Load() == nil { // load: skips an empty slot without a write
			continue
		}
		if p := s.slots[i].Swap(nil); p != nil { // acquire: pairs with put's CAS
			return p
		}
	}
	return nil
}

// put keeps p as a spare, unless every slot is full (the collector then
// takes it). The caller must not touch p afterwards.
func (s *fileSpares[T]) put(p *T) {
	for i := range s.slots {
		if s.slots[i].Load() != nil { // load: skips a full slot without a write
			continue
		}
		if s.slots[i].CompareAndSwap(nil, p) { // release: pairs with take's Swap
			return
		}
	}
}

// fileOp is one file operation in flight: the ioOp, and the File whose
// count its final completion decrements.
type fileOp struct {
	ioOp
	fr *fileRing
}

// complete delivers the completion, then uncounts the op. fr is read
// first: once woken, the task may submit the op again, rewriting it.
func (o *fileOp) Complete(cx *future.Context, c *backend.Completion) {
	fr := o.fr
	o.ioOp.Complete(cx, c)
	fr.end()
}

// FileIOFuture is the future of a File's data operation (Read, Write,
// ReadAt, WriteAt, ReadvAt, WritevAt): its pointer is a
// future.Future[future.Result[int]] and a future.Canceler. On io_uring it is
// one or more io_uring operations submitted to the ring of the worker that
// polls it; elsewhere a call on the blocking pool.
//
// The results follow os.File's: ReadAt and ReadvAt fill the buffers or
// return io.EOF with what there was; Read returns what one read gave, and
// 0 with io.EOF at the end; writes write everything or fail.
//
// The future is its File's: once it has completed (or been cancelled
// before its operation started), the File's next data operation may hand
// it out again; see File.Read.
type FileIOFuture struct {
	_    noCopy
	file *File
	kind backend.Kind
	buf  []byte
	// bufs are the vectored ops' buffers: on the ring a copy of the
	// caller's slice, which advance trims as bytes are transferred.
	bufs [][]byte
	// off is the file offset of the next op, -1 for the file position.
	off int64
	// whole makes a short transfer continue (ReadAt and the writes).
	whole bool

	// The fields below belong to the task polling the future; the op's
	// shared state is the ioOp's, behind its mutex.
	n         int  // bytes transferred so far
	polled    bool // the first poll checked the runtime
	submitted bool
	finished  bool
	usedRing  bool // an op was submitted (tests tell RWF_NOWAIT reads apart)
	// op is the ring op, submitted again for the next parts of a whole
	// transfer; held by value, so that the future is one allocation, and
	// reused with it (see fileSpares).
	op fileOp
	// blk is the call on the blocking pool, for a File without a ring.
	blk *BlockingFuture[int]

	// The fields below survive the future's reuse by its File's next
	// data operation (see File.dataOp): runFn is runOnPool as a func
	// value, made once; vecs is the backing array of the copies of bufs.
	runFn func() (int, error)
	vecs  [][]byte
}

// reset makes f, a new future or a spare of file's, the future of a data
// operation. Called by dataOp, which owns f.
func (f *FileIOFuture) reset(file *File, kind backend.Kind, buf []byte, bufs [][]byte, off int64, whole bool) {
	runFn, vecs := f.runFn, f.vecs
	*f = FileIOFuture{file: file, kind: kind, buf: buf, off: off, whole: whole, runFn: runFn, vecs: vecs}
	if file.ring == nil {
		if f.runFn == nil {
			f.runFn = f.runOnPool
		}
		f.blk = blockingOn(file.rt, f.runFn)
		f.bufs = bufs // the pool's calls do not trim them
		return
	}
	if bufs != nil {
		f.bufs = append(f.vecs[:0], bufs...) // advance trims the copy, not the caller's
		f.vecs = f.bufs[:0]
	}
}

// release hands f back to its File as a spare, dropping its references to
// the caller's buffers; f's polling task calls it after its last access.
func (f *FileIOFuture) release() {
	file := f.file
	f.buf, f.bufs, f.blk = nil, nil, nil
	f.op.op = backend.Op{} // its Buf or Bufs too; the ring is done with it (the final completion arrived)
	clear(f.vecs[:cap(f.vecs)])
	file.spareIO.put(f)
}

// runOnPool is the operation as os.File calls, for the blocking pool.
func (f *FileIOFuture) runOnPool() (int, error) {
	osf := f.file.f
	switch {
	case f.kind == backend.KindRead && f.off < 0:
		return osf.Read(f.buf)
	case f.kind == backend.KindRead:
		return osf.ReadAt(f.buf, f.off)
	case f.kind == backend.KindWrite && f.off < 0:
		return osf.Write(f.buf)
	case f.kind == backend.KindWrite:
		return osf.WriteAt(f.buf, f.off)
	case f.kind == backend.KindReadv:
		return vectorAt(f.bufs, f.off, osf.ReadAt)
	default:
		return vectorAt(f.bufs, f.off, osf.WriteAt)
	}
}

// vectorAt transfers bufs in order from offset off with at (os.File's
// ReadAt or WriteAt), stopping at the first error.
func vectorAt(bufs [][]byte, off int64, at func([]byte, int64) (int, error)) (int, error) {
	total := 0
	for _, b := range bufs {
		n, err := at(b, off+int64(total))
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// opName is the name of the operation in errors.
func (f *FileIOFuture) opName() string {
	if f.kind == backend.KindRead || f.kind == backend.KindReadv {
		return "read"
	}
	return "write"
}

// vectored reports whether the op transfers bufs rather than buf.
func (f *FileIOFuture) vectored() bool {
	return f.kind == backend.KindReadv || f.kind == backend.KindWritev
}

// left is how many bytes the op still has to transfer.
func (f *FileIOFuture) left() int {
	if !f.vectored() {
		return len(f.buf) - f.n
	}
	t := 0
	for _, b := range f.bufs {
		t += len(b)
	}
	return t
}

// Poll runs the operation. Completing consumes a unit of the task's budget; with
// none left, Poll yields instead (see the future package, "The
// cooperative budget").
func (f *FileIOFuture) Poll(cx *future.Context) (future.Result[int], bool) {
	if f.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	if !cx.Proceed() {
		return future.Result[int]{}, false
	}
	v, ok := f.poll(cx)
	if ok {
		cx.Spend()
		f.release() // the last access: the File's next data operation may reuse f
	}
	return v, ok
}

// poll is Poll past the budget check.
func (f *FileIOFuture) poll(cx *future.Context) (future.Result[int], bool) {
	if f.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	if !f.polled {
		f.polled = true
		if f.file.runtimeDown() {
			return f.finish(errFileRuntimeDown)
		}
	}
	if f.atPosition() && f.file.pos.busy.Load() && !f.started() {
		n, ready := f.file.pos.takeOver(cx, f.buf)
		if !ready {
			return future.Result[int]{}, false // a cancelled Read before this one is still in flight
		}
		if n > 0 {
			f.n = n
			return f.finish(nil)
		}
	}
	if f.file.ring == nil {
		r, ok := f.blk.Poll(cx)
		f.finished = ok
		if ok && errors.Is(r.Err, ErrShutdown) {
			r.Err = f.file.opError(f.opName(), r.Err) // the pool refused it: the runtime is shutting down
		}
		return r, ok
	}
	for {
		var c backend.Completion
		if !f.submitted {
			if f.left() == 0 {
				return f.finish(nil)
			}
			var now bool
			if c, now = f.tryNoWait(); !now {
				if err := f.submit(cx); err != nil {
					return f.finish(err)
				}
			}
		}
		if f.submitted {
			var ok bool
			if c, ok = f.op.poll(cx); !ok {
				return future.Result[int]{}, false
			}
			f.submitted = false
		}
		if r, done := f.transferred(c); done {
			return r, true
		}
	}
}

// transferred takes in the result of one read or write (from the ring or
// from tryNoWait) and reports whether the future is done, with its result;
// if not, the next part of a whole transfer is to be made.
func (f *FileIOFuture) transferred(c backend.Completion) (future.Result[int], bool) {
	if c.Err != nil {
		return f.finish(c.Err)
	}
	f.advance(c.N)
	switch {
	case c.N == 0 && f.opName() == "read":
		if f.n == 0 || f.whole {
			return f.finish(io.EOF)
		}
		return f.finish(nil)
	case c.N == 0:
		return f.finish(io.ErrShortWrite)
	case !f.whole:
		return f.finish(nil)
	}
	return future.Result[int]{}, false
}

// submit starts the next op on the ring of the polling worker.
func (f *FileIOFuture) submit(cx *future.Context) error {
	fr := f.file.ring
	if !fr.begin() {
		return fs.ErrClosed
	}
	f.op.fr = fr // Complete reads it before waking the task
	f.op.op = backend.Op{Kind: f.kind, FD: fr.fd, Offset: -1}
	if f.vectored() {
		f.op.op.Bufs = f.bufs
	} else {
		f.op.op.Buf = f.buf[f.n:]
	}
	if f.off >= 0 {
		f.op.op.Offset = f.off + int64(f.n)
	}
	if err := f.op.submitAs(cx, fr.io.RingOf(cx.Worker()), &f.op); err != nil {
		fr.end()
		return err
	}
	f.submitted, f.usedRing = true, true
	return nil
}

// advance counts n bytes transferred, dropping what vectored buffers are
// done with.
func (f *FileIOFuture) advance(n int) {
	f.n += n
	if !f.vectored() {
		return
	}
	for n > 0 && len(f.bufs) > 0 {
		if n < len(f.bufs[0]) {
			f.bufs[0] = f.bufs[0][n:]
			return
		}
		n -= len(f.bufs[0])
		f.bufs = f.bufs[1:]
	}
	for len(f.bufs) > 0 && len(f.bufs[0]) == 0 {
		f.bufs = f.bufs[1:]
	}
}

// finish ends the future with what was transferred and err, an os-style
// *fs.PathError (io.EOF and io.ErrShortWrite stay bare, as os.File's; see
// File.opError).
func (f *FileIOFuture) finish(err error) (future.Result[int], bool) {
	f.finished = true
	if err == nil || err == io.EOF || err == io.ErrShortWrite {
		return future.Result[int]{Value: f.n, Err: err}, true
	}
	return future.Result[int]{Value: f.n, Err: f.file.opError(f.opName(), err)}, true
}

// started reports whether the operation was handed to the ring or the pool.
func (f *FileIOFuture) started() bool {
	if f.blk != nil {
		return f.blk.started()
	}
	return f.submitted
}

// Cancel abandons the operation. An io_uring op in flight is cancelled and
// its buffer stays the kernel's until the cancel is acknowledged, so the
// buffer must not be reused before a later operation on the File completes
// or Close returns; a call on the blocking pool runs to its end.
//
// A Read (at the file position) loses nothing to a cancel: what its read
// still takes from the file is delivered by the next Read, which first
// waits for it. Until that Read completes, buf stays the File's.
func (f *FileIOFuture) Cancel() {
	if f.finished {
		return
	}
	f.finished = true
	if f.lingers() {
		return // the File's Reads hold f now
	}
	if f.blk != nil {
		f.blk.Cancel() // the pool may still run f.runFn: f is not reused
		return
	}
	if f.submitted {
		f.op.abandon() // the kernel holds f.op until the cancel's completion: f is not reused
		return
	}
	f.release()
}
