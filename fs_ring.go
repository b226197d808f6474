package blitz

import (
	"errors"
	"io/fs"
	"os"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// This file holds the io_uring side of the file-system operations: the open
// (backend.KindOpenAt) and a File's Sync, Stat and Truncate (KindFsync,
// KindStatx, KindFtruncate). Each is tried on the ring of the polling
// worker when the runtime runs io_uring and the backend's Caps have the
// kind; otherwise, or when the ring refuses the submission, the same
// operation runs on the blocking pool, as os.File's method.

// ringFileOps counts the file-system ops handed to a ring, by kind
// (KindOpenAt ... KindFtruncate): how tests see that the ring path was
// taken. Incremented by any task after a successful Submit.
var ringFileOps [4]atomic.Uint64

// ringFileCloses counts the Closes handed to a ring, like ringFileOps.
var ringFileCloses atomic.Uint64

// countRingFileOp counts one submitted op of kind k.
func countRingFileOp(k backend.Kind) {
	if i := int(k) - int(backend.KindOpenAt); i >= 0 && i < len(ringFileOps) {
		ringFileOps[i].Add(1) // a statistic; no ordering needed
	}
}

// errNoRing says an op has no ring to run on: the pool serves it.
var errNoRing = errors.New("blitz: no ring for this file operation")

// fsPathError converts err, an op's failure, to what os returns: a
// *fs.PathError carrying the errno (so errors.Is(err, fs.ErrNotExist) and
// errors.Is(err, syscall.ENOENT) hold) rather than the backend's sentinel.
func fsPathError(op, path string, err error) error {
	var be *backend.Error
	if errors.As(err, &be) && be.Sys != nil {
		err = be.Sys
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// ringOpenFlags converts os.OpenFile's flag to the backend's, and reports
// false for flags the backend has no word for (os.O_SYNC, a raw
// syscall.O_NOFOLLOW, O_WRONLY|O_RDWR): those opens run on the pool, where
// os.OpenFile passes them to the kernel untouched.
func ringOpenFlags(flag int) (backend.OpenFlags, bool) {
	const known = os.O_RDONLY | os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_EXCL | os.O_TRUNC | os.O_APPEND
	if flag&^known != 0 {
		return 0, false
	}
	var of backend.OpenFlags
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		of = backend.OpenRead
	case os.O_WRONLY:
		of = backend.OpenWrite
	case os.O_RDWR:
		of = backend.OpenRead | backend.OpenWrite
	default:
		return 0, false
	}
	for _, m := range [...]struct {
		os int
		be backend.OpenFlags
	}{{os.O_CREATE, backend.OpenCreate}, {os.O_EXCL, backend.OpenExclusive}, {os.O_TRUNC, backend.OpenTruncate}, {os.O_APPEND, backend.OpenAppend}} {
		if flag&m.os != 0 {
			of |= m.be
		}
	}
	return of, true
}

// ringPerm converts perm as os.OpenFile does: the permission bits and the
// setuid, setgid and sticky bits, in their Unix places.
func ringPerm(perm fs.FileMode) uint32 {
	p := uint32(perm.Perm())
	if perm&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if perm&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if perm&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// openOp is the io_uring openat of an OpenFuture. Its completion carries a
// descriptor, which nobody must lose: if the open was abandoned,
// ioRing.dispose closes it.
type openOp struct {
	ioOp
	// args are the op's path, flags and permissions, referenced by
	// op.File while it is in flight. Written by the submitting task before
	// Submit only.
	args backend.FileArgs
}

// fileRingCaps are the capabilities of rt's rings, 0 when they are not
// io_uring (whose data and file-system ops the runtime
// puts on the rings; epoll serves files on the pool).
func fileRingCaps(rt *Runtime) backend.Caps {
	if rt.io == nil || rt.backendName != BackendURing && rt.sim == nil {
		return 0
	}
	return rt.io.Rings()[0].Backend().Caps()
}

// FileOpFuture is the future of a File's Sync, Stat and Truncate: its
// pointer is a future.Future[future.Result[T]] and a future.Canceler. On
// io_uring it is one io_uring operation (fsync, statx, ftruncate) on the
// ring of the worker that polls it, counted by the File so that Close waits
// for it; elsewhere, and when the kernel lacks the operation (ftruncate
// before Linux 6.9), os.File's method on the blocking pool. Either way the
// results and errors are os.File's.
//
// The futures of Sync and Truncate are their File's: once one has
// completed (or been cancelled before its operation started), the File's
// next Sync or Truncate may hand it out again; see File.Read.
type FileOpFuture[T any] struct {
	_    noCopy
	file *File
	kind backend.Kind
	// size is Truncate's.
	size int64
	// args receive the statx result; op.op.File points here while it is in
	// flight.
	args backend.FileArgs

	// The fields below belong to the task polling the future.
	submitted bool
	finished  bool
	op        fileOp
	// blk is the call on the blocking pool, when the ring does not serve.
	blk *BlockingFuture[T]

	// spare is set for the futures of Sync and Truncate, which their File
	// reuses once done with (see File.Read and fileSpares). runFn is
	// runOnPool as a func value, made once and kept across reuses.
	spare bool
	runFn func() (T, error)
}

// release hands a spare future back to its File; the polling task calls
// it after its last access to f. A future that is not a spare is left to
// the collector.
func (f *FileOpFuture[T]) release() {
	if !f.spare {
		return
	}
	sp, ok := any(f).(*FileOpFuture[struct{}])
	if !ok {
		return
	}
	file := f.file
	f.blk = nil
	file.spareOp.put(sp)
}

// poolCall is the operation's call on the blocking pool.
func (f *FileOpFuture[T]) poolCall() *BlockingFuture[T] {
	if f.runFn == nil {
		f.runFn = f.runOnPool
	}
	return blockingOn(f.file.rt, f.runFn)
}

// newFileOp makes the future of a File's kind op.
func newFileOp[T any](f *File, kind backend.Kind, size int64) *FileOpFuture[T] {
	return &FileOpFuture[T]{file: f, kind: kind, size: size}
}

// opName names the operation in errors, as os.File does.
func (f *FileOpFuture[T]) opName() string {
	switch f.kind {
	case backend.KindFsync:
		return "sync"
	case backend.KindStatx:
		return "stat"
	}
	return "truncate"
}

// runOnPool is the operation as os.File's method, for the blocking pool:
// on the *os.File, or for a File that owns its descriptor the same system
// call on it.
func (f *FileOpFuture[T]) runOnPool() (T, error) {
	var v T
	file := f.file
	if file.closed.Load() {
		return v, &fs.PathError{Op: f.opName(), Path: file.name, Err: fs.ErrClosed}
	}
	if file.ownsFD() {
		return f.runOnRawFD()
	}
	osf := file.f
	var err error
	switch f.kind {
	case backend.KindFsync:
		err = osf.Sync()
	case backend.KindStatx:
		var fi fs.FileInfo
		fi, err = osf.Stat()
		v, _ = any(fi).(T)
	default:
		err = osf.Truncate(f.size)
	}
	return v, err
}

// runOnRawFD is runOnPool for a File that owns its descriptor, counted as
// an op of the ring side so that Close waits for it.
func (f *FileOpFuture[T]) runOnRawFD() (T, error) {
	var v T
	fr, name := f.file.ring, f.file.name
	if !fr.begin() {
		return v, &fs.PathError{Op: f.opName(), Path: name, Err: fs.ErrClosed}
	}
	defer fr.end()
	fd := fr.fd
	var err error
	switch f.kind {
	case backend.KindFsync:
		err = syncRawFD(fd)
	case backend.KindStatx:
		var fi fs.FileInfo
		fi, err = statRawFD(fd, name)
		v, _ = any(fi).(T)
	default:
		err = truncateRawFD(fd, f.size)
	}
	if err != nil {
		return v, &fs.PathError{Op: f.opName(), Path: name, Err: err}
	}
	return v, nil
}

// Poll runs the operation: on the ring if it takes it, else on the pool.
// Completing consumes a unit of the task's budget; with none left, Poll
// yields instead (see the future package, "The cooperative budget").
func (f *FileOpFuture[T]) Poll(cx *future.Context) (future.Result[T], bool) {
	if f.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	if !cx.Proceed() {
		return future.Result[T]{}, false
	}
	v, ok := f.poll(cx)
	if ok {
		cx.Spend()
		f.release() // the last access: the File's next Sync or Truncate may reuse f
	}
	return v, ok
}

// poll is Poll past the budget check.
func (f *FileOpFuture[T]) poll(cx *future.Context) (future.Result[T], bool) {
	if f.finished {
		panic(future.ErrPolledAfterCompletion)
	}
	if f.blk == nil && !f.submitted {
		if f.file.runtimeDown() {
			f.finished = true
			return future.Fail[T](f.file.opError(f.opName(), errFileRuntimeDown)), true
		}
		switch err := f.submit(cx); {
		case errors.Is(err, fs.ErrClosed):
			f.finished = true
			return future.Fail[T](f.file.opError(f.opName(), err)), true
		case err != nil:
			f.blk = f.poolCall()
		}
	}
	if f.blk != nil {
		r, ok := f.blk.Poll(cx)
		f.finished = ok
		if ok && errors.Is(r.Err, ErrShutdown) {
			r.Err = f.file.opError(f.opName(), r.Err) // the pool refused it: the runtime is shutting down
		}
		return r, ok
	}
	c, ok := f.op.poll(cx)
	if !ok {
		return future.Result[T]{}, false
	}
	f.finished = true
	if c.Err != nil {
		return future.Fail[T](f.file.opError(f.opName(), c.Err)), true
	}
	var v T
	if f.kind == backend.KindStatx {
		v, _ = any(newStatxInfo(f.file.Name(), &f.args.Stat)).(T)
	}
	return future.Result[T]{Value: v}, true
}

// submit hands the op to the ring of cx's worker. It fails with errNoRing
// when the file has no ring or the ring lacks the kind, fs.ErrClosed once
// Close began, or the backend's refusal; all but fs.ErrClosed send the
// operation to the pool.
func (f *FileOpFuture[T]) submit(cx *future.Context) error {
	fr := f.file.ring
	if fr == nil || !fr.caps.Has(f.kind.Needs()) {
		return errNoRing
	}
	if !fr.begin() {
		return fs.ErrClosed
	}
	f.op.fr = fr
	f.op.op = backend.Op{Kind: f.kind, FD: fr.fd, Offset: f.size}
	if f.kind == backend.KindStatx {
		f.op.op.File = &f.args
	}
	if err := f.op.submitAs(cx, fr.io.RingOf(cx.Worker()), &f.op); err != nil {
		fr.end()
		return err
	}
	countRingFileOp(f.kind)
	f.submitted = true
	return nil
}

// Cancel abandons the operation. One in the kernel is cancelled (an
// fsync may still complete: the data is then on disk) and Close waits for
// its completion; a call on the blocking pool runs to its end.
func (f *FileOpFuture[T]) Cancel() {
	if f.finished {
		return
	}
	f.finished = true
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
