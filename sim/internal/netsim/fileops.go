package netsim

import (
	"slices"

	"github.com/blitz-go/blitz/backend"
)

// ofile is an open file description: the file, how it was opened, and its
// position (advanced by reads and writes without an offset). Guarded by
// World.mu.
type ofile struct {
	f     *file
	name  string
	flags backend.OpenFlags
	pos   int64
}

// OpenFile opens a file of the host's disk at once (the synchronous form
// of KindOpenAt).
func (b *simBackend) OpenFile(name string, flags backend.OpenFlags, perm uint32) (fd backend.FD, err error) {
	b.w.locked(func() {
		if b.closed {
			fd, err = backend.InvalidFD, backend.ErrClosed
			return
		}
		var o *ofile
		if o, err = b.h.disk.open(name, flags, perm); err != nil {
			fd = backend.InvalidFD
			return
		}
		fd = b.newFD(o)
	})
	return fd, err
}

// open opens name with flags, as open(2) would.
func (d *Disk) open(name string, flags backend.OpenFlags, perm uint32) (*ofile, error) {
	if flags&(backend.OpenRead|backend.OpenWrite) == 0 || name == "" {
		return nil, oserr("open", backend.ErrInvalid)
	}
	key := cleanPath(name)
	f := d.files[key]
	switch {
	case f != nil && flags&backend.OpenCreate != 0 && flags&backend.OpenExclusive != 0:
		return nil, oserr("open", backend.ErrFileExists)
	case f == nil && flags&backend.OpenCreate == 0:
		return nil, oserr("open", backend.ErrNotExist)
	case f == nil:
		f = d.create(key, perm)
		d.h.w.emit(d.h, "disk", "create ", key)
	}
	if flags&backend.OpenTruncate != 0 && flags&backend.OpenWrite != 0 && len(f.data) > 0 {
		d.change(f, change{size: 0})
	}
	return &ofile{f: f, name: key, flags: flags}, nil
}

// startFileOp schedules a file op on o (nil for KindOpenAt and a Statx by
// path) to run after the disk's latency (completeFileOp).
func (b *simBackend) startFileOp(p *pending, o *ofile) {
	e := b.w.newEvent(evFileOp)
	e.b, e.p, e.o = b, p, o
	p.ev = b.w.schedule(b.h, b.w.clock.Add(b.h.disk.latency()), e).ref()
}

// completeFileOp performs the file op p on o, due now, and posts its
// completion.
func (b *simBackend) completeFileOp(p *pending, o *ofile) {
	c := b.finish(p, 0, nil)
	c.N, c.FD, c.Err = b.runFileOp(c.Op, o)
	if c.Err != nil && c.Op.Kind == backend.KindOpenAt {
		c.FD = backend.InvalidFD
	}
	b.post(c)
}

// runFileOp performs a file op now and returns its result.
func (b *simBackend) runFileOp(op *backend.Op, o *ofile) (int, backend.FD, error) {
	d := b.h.disk
	w := b.w
	kind := op.Kind.String()
	switch op.Kind {
	case backend.KindOpenAt:
		no, err := d.open(op.File.Path, op.File.OpenFlags, op.File.Perm)
		if err != nil {
			return 0, backend.InvalidFD, err
		}
		return 0, b.newFD(no), nil
	case backend.KindStatx:
		return 0, 0, b.statx(op, o)
	case backend.KindFsync:
		d.sync(o.f)
		w.emit(b.h, "disk", "sync ", o.name)
		return 0, 0, nil
	case backend.KindFtruncate:
		if o.flags&backend.OpenWrite == 0 {
			return 0, 0, oserr(kind, backend.ErrInvalid)
		}
		if w.chance(d.faults.WriteError) {
			return 0, 0, oserr(kind, backend.ErrIO)
		}
		d.change(o.f, change{size: op.Offset})
		return 0, 0, nil
	case backend.KindRead, backend.KindReadv:
		n, err := b.readFile(op, o)
		return n, 0, err
	case backend.KindWrite, backend.KindWritev:
		n, err := b.writeFile(op, o)
		return n, 0, err
	}
	return 0, 0, oserr(kind, backend.ErrInvalid) // poll, send... on a file
}

// readFile reads at the op's offset or the position.
func (b *simBackend) readFile(op *backend.Op, o *ofile) (int, error) {
	d, w := b.h.disk, b.w
	if o.flags&backend.OpenRead == 0 {
		return 0, oserr("read", backend.ErrClosed) // EBADF
	}
	if w.chance(d.faults.ReadError) {
		w.emit(b.h, "disk", "read error ", o.name)
		return 0, oserr("read", backend.ErrIO)
	}
	off := op.Offset
	if off < 0 {
		off = o.pos
	}
	n := 0
	if off < int64(len(o.f.data)) {
		n = scatter(w.opBufs(op), o.f.data[off:])
	}
	if op.Offset < 0 {
		o.pos += int64(n)
	}
	if n > 0 && w.chance(d.faults.BitFlip) {
		bit := w.rng.IntN(n * 8)
		flipBit(w.opBufs(op), bit)
		w.emitf(b.h, "disk", "bitflip %s at %d", o.name, off+int64(bit/8))
	}
	return n, nil
}

// flipBit flips bit number bit of the concatenation of bufs.
func flipBit(bufs [][]byte, bit int) {
	i := bit / 8
	for _, buf := range bufs {
		if i < len(buf) {
			buf[i] ^= 1 << (bit % 8)
			return
		}
		i -= len(buf)
	}
}

// writeFile writes at the op's offset, the position, or the end.
func (b *simBackend) writeFile(op *backend.Op, o *ofile) (int, error) {
	d, w := b.h.disk, b.w
	if o.flags&backend.OpenWrite == 0 {
		return 0, oserr("write", backend.ErrClosed) // EBADF
	}
	if w.chance(d.faults.WriteError) {
		w.emit(b.h, "disk", "write error ", o.name)
		return 0, oserr("write", backend.ErrIO)
	}
	off := op.Offset
	switch {
	case o.flags&backend.OpenAppend != 0:
		off = int64(len(o.f.data)) // O_APPEND writes at the end, as Linux's pwrite does
	case off < 0:
		off = o.pos
	}
	data := slices.Concat(w.opBufs(op)...)
	d.change(o.f, change{off: off, data: data})
	if op.Offset < 0 {
		o.pos = off + int64(len(data))
	}
	return len(data), nil
}

// statx fills op.File.Stat for the path or the descriptor.
func (b *simBackend) statx(op *backend.Op, o *ofile) error {
	st := &op.File.Stat
	if op.File.Path != "" {
		f := b.h.disk.files[cleanPath(op.File.Path)]
		if f == nil {
			return oserr("statx", backend.ErrNotExist)
		}
		*st = f.stat()
		return nil
	}
	if o == nil {
		if _, ok := b.fds[op.FD].(*socket); ok {
			*st = backend.FileStat{Mode: 0o140000 | 0o777, Nlink: 1, Blksize: 4096}
			return nil
		}
		return oserr("statx", backend.ErrClosed)
	}
	*st = o.f.stat()
	return nil
}

// stat returns f's metadata.
func (f *file) stat() backend.FileStat {
	size := int64(len(f.data))
	return backend.FileStat{
		Mode: 0o100000 | f.perm, Nlink: 1, Blksize: 4096, Ino: f.ino, Dev: 1,
		Size: size, Blocks: (size + 511) / 512,
		Atime: f.mtime, Mtime: f.mtime, Ctime: f.ctime, Btime: f.btime,
	}
}
