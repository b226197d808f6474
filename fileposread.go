package blitz

import (
	"sync"
	"sync/atomic"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/future"
)

// Reads at the file position keep what a cancelled one took. A Read that is
// cancelled while its read is in the kernel (an io_uring op) or running on
// the blocking pool cannot be recalled: on a pipe, a FIFO or a terminal it
// may still take bytes from the file, and on any file it may still advance
// the position. Such a read lingers in its File's posReads instead of being
// dropped, and the next Read at the position first waits for it and
// delivers what it got, then what is left over in the stash, before it reads
// anything new. So a Read cancelled by a Timeout or a Select loses nothing,
// as the AsyncReader contract promises, and the reads stay in file order.
//
// ReadAt and ReadvAt need none of this: they name their offset, and a
// cancelled one leaves the file as it was.

// posReads is a File's record of cancelled reads at the file position.
type posReads struct {
	// busy is set while lingering or stash is non-empty, so that a Read
	// without a cancelled predecessor (nearly all of them) takes no lock.
	// Written under mu; read without it by each Read's first poll. A Read
	// that races a concurrent Cancel on another task has no order with it
	// anyway; a task's own Cancel happens before its next Read.
	busy atomic.Bool

	// mu guards lingering and stash, shared by the tasks reading the file.
	mu sync.Mutex
	// lingering are the cancelled Reads still in flight or whose result
	// nobody has taken, oldest first. Each keeps its buffer, which the
	// kernel or the pool may still write into until its result is in.
	lingering []*FileIOFuture
	// stash holds bytes the lingering reads got that no Read has taken yet
	// (the next Read's buffer was smaller).
	stash []byte
}

// linger records a cancelled Read whose read is still in flight.
func (p *posReads) linger(f *FileIOFuture) {
	p.mu.Lock()
	p.lingering = append(p.lingering, f)
	p.busy.Store(true)
	p.mu.Unlock()
}

// takeOver takes in the results of the lingering reads that are done and
// copies into buf what they and the stash hold; n is 0 when there was
// nothing. If nothing is held and some read is still in flight, ready is
// false and cx's waker is registered with each: a new read must not
// overtake them. The results are taken in the order the reads were
// cancelled; one still in flight does not hold back a later one that is
// done (reads cancelled by concurrent tasks have no order to keep).
func (p *posReads) takeOver(cx *future.Context, buf []byte) (n int, ready bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	inFlight := p.lingering[:0]
	for _, lf := range p.lingering {
		got, ok := lf.lingeringResult(cx)
		if !ok {
			inFlight = append(inFlight, lf)
			continue
		}
		p.stash = append(p.stash, lf.buf[:got]...)
	}
	clear(p.lingering[len(inFlight):])
	p.lingering = inFlight
	if len(p.stash) == 0 && len(p.lingering) > 0 {
		return 0, false
	}
	n = copy(buf, p.stash)
	p.stash = p.stash[n:]
	if len(p.stash) == 0 {
		p.stash = nil
	}
	p.busy.Store(len(p.lingering) > 0 || len(p.stash) > 0)
	return n, true
}

// atPosition reports whether f reads at the file position: File.Read.
func (f *FileIOFuture) atPosition() bool {
	return f.kind == backend.KindRead && f.off < 0
}

// lingers hands a cancelled Read whose read may still take bytes to its
// File and reports whether it did; one that never started, or whose result
// is already gone, is not kept.
func (f *FileIOFuture) lingers() bool {
	if !f.atPosition() {
		return false
	}
	switch {
	case f.blk != nil && !f.blk.started():
		return false
	case f.blk == nil && !(f.submitted && f.op.cancelKeeping()):
		return false
	}
	f.file.pos.linger(f)
	return true
}

// lingeringResult is how many bytes a lingering read got into f.buf, once
// its result is in (ready); an error or the end of the file counts as none:
// the next read meets them again.
func (f *FileIOFuture) lingeringResult(cx *future.Context) (n int, ready bool) {
	if f.blk != nil {
		r, ok := f.blk.Poll(cx)
		return max(r.Value, 0), ok
	}
	c, ok := f.op.poll(cx)
	if !ok {
		return 0, false
	}
	if c.Err != nil {
		return 0, true
	}
	return c.N, true
}
