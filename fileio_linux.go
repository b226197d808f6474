package blitz

import (
	"io/fs"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/blitz-go/blitz/backend"
)

// Reads of cached data without the ring: a read of a file whose pages are
// in the page cache is a copy the kernel makes on the calling thread
// whether it goes through io_uring (which tries it inline at submission)
// or not, so Read and ReadAt first try preadv2 with RWF_NOWAIT, which
// copies what is cached and fails with EAGAIN instead of waiting for the
// disk. A hit saves the submission, the completion and the task's wake; a
// miss costs one system call, so after noWaitMaxMisses misses in a row a
// file is tried once every noWaitProbe reads only, until a hit. A file
// opened with O_DIRECT never tries (see forFD).
const (
	noWaitMaxMisses = 8
	noWaitProbe     = 16
)

// noWaitState is a fileRing's record of its RWF_NOWAIT attempts, written
// and read by the tasks reading the file. The fields are independent
// counters behind a heuristic: no atomic orders anything else, and a lost
// race costs at most one extra or one skipped attempt. A hit only loads
// them: readers on several workers share the cache line, and a store per
// read would bounce it between their cores.
type noWaitState struct {
	misses      atomic.Int32  // consecutive misses
	tick        atomic.Uint32 // reads since the misses passed the bound
	unsupported atomic.Bool
}

// forFD turns RWF_NOWAIT off for a descriptor opened with O_DIRECT: a
// direct read has no page cache to find its data in, so preadv2 with
// RWF_NOWAIT does not fail with EAGAIN but reads the disk and waits for it,
// which would block the worker for the disk's latency and hold the read
// off the ring. Called once, before the File is handed out, for a file the
// blocking pool opened (the ring never opens with O_DIRECT).
func (s *noWaitState) forFD(fd backend.FD) {
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_DIRECT != 0 {
		s.unsupported.Store(true)
	}
}

// worth reports whether the next read should try RWF_NOWAIT.
func (s *noWaitState) worth() bool {
	if s.unsupported.Load() {
		return false
	}
	if s.misses.Load() < noWaitMaxMisses {
		return true
	}
	return s.tick.Add(1)%noWaitProbe == 0
}

// tryNoWait makes the read now if its data is cached: ok reports that c is
// its result (data, end of file or an error); otherwise the read goes to
// the ring. Reads only, one buffer; called by the polling task.
func (f *FileIOFuture) tryNoWait() (c backend.Completion, ok bool) {
	fr := f.file.ring
	if f.kind != backend.KindRead || fr.sim != nil || !fr.noWait.worth() {
		return c, false
	}
	if !fr.begin() { // holds Close off while the descriptor is used
		return backend.Completion{Err: fs.ErrClosed}, true
	}
	defer fr.end()
	// At most backend.MaxRW bytes, as a ring read would ask for.
	buf := backend.LimitRW(f.buf[f.n:])
	off := int64(-1) // the file position, advanced
	if f.off >= 0 {
		off = f.off + int64(f.n)
	}
	iov := unix.Iovec{Base: unsafe.SliceData(buf)}
	iov.SetLen(len(buf))
	n, _, errno := unix.Syscall6(unix.SYS_PREADV2, uintptr(fr.fd), uintptr(unsafe.Pointer(&iov)), 1,
		uintptr(off), uintptr(off>>32), unix.RWF_NOWAIT)
	switch {
	case errno == 0:
		if fr.noWait.misses.Load() != 0 {
			fr.noWait.misses.Store(0)
		}
		return backend.Completion{N: int(n)}, true
	case errno == unix.EAGAIN:
		fr.noWait.misses.Add(1)
		return c, false
	case errno == unix.EOPNOTSUPP || errno == unix.ENOSYS || errno == unix.EINVAL:
		fr.noWait.unsupported.Store(true) // this file (or kernel) has no RWF_NOWAIT: the ring does it all
		return c, false
	}
	return backend.Completion{Err: errno}, true
}

// The calls below serve a File that owns its descriptor (the ring opened
// it) when an operation must run off the ring: SeekTo always, and Sync,
// Stat and Truncate when the ring refuses them. Each is os.File's system
// call, made on the raw descriptor; the errors are bare errnos, which the
// callers wrap in *fs.PathError as os does.

// closeRawFD closes fd: the GC cleanup of an unclosed File, a Close after
// the ring shut down, a cancelled Close.
func closeRawFD(fd backend.FD) error {
	if err := unix.Close(int(fd)); err != nil {
		return err
	}
	return nil
}

// seekRawFD is lseek(2).
func seekRawFD(fd backend.FD, offset int64, whence int) (int64, error) {
	return unix.Seek(int(fd), offset, whence)
}

// syncRawFD is fsync(2), retried on EINTR as os.File.Sync does.
func syncRawFD(fd backend.FD) error {
	for {
		if err := unix.Fsync(int(fd)); err != unix.EINTR {
			return err
		}
	}
}

// truncateRawFD is ftruncate(2), retried on EINTR.
func truncateRawFD(fd backend.FD, size int64) error {
	for {
		if err := unix.Ftruncate(int(fd), size); err != unix.EINTR {
			return err
		}
	}
}

// statRawFD is fstat(2), as the FileInfo a ring statx would give.
func statRawFD(fd backend.FD, name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(fd), &st); err != nil {
		return nil, err
	}
	ts := func(t unix.Timespec) time.Time { return time.Unix(int64(t.Sec), int64(t.Nsec)) }
	return newStatxInfo(name, &backend.FileStat{
		Mode: st.Mode, Nlink: uint32(st.Nlink), UID: st.Uid, GID: st.Gid, Blksize: uint32(st.Blksize),
		Ino: st.Ino, Dev: st.Dev, Rdev: st.Rdev, Size: st.Size, Blocks: st.Blocks,
		Atime: ts(st.Atim), Mtime: ts(st.Mtim), Ctime: ts(st.Ctim),
	}), nil
}
