package netsim

import (
	"fmt"
	"path"
	"slices"
	"time"
)

// Default latency of a disk operation.
const (
	DefaultDiskMinLatency = 10 * time.Microsecond
	DefaultDiskMaxLatency = 100 * time.Microsecond
)

// DiskFaults are a disk's fault probabilities and latency. The zero value
// is a perfect disk with the default latency.
type DiskFaults struct {
	// ReadError and WriteError are the probabilities that a read or a
	// write (or a truncate) fails with EIO, changing nothing.
	ReadError, WriteError float64
	// BitFlip is the probability that a read returns its data with one
	// bit flipped (the stored data stays intact).
	BitFlip float64
	// TornWrite is the probability, for each file with unsynced changes
	// at a crash, that a seeded prefix of those changes survives (the last
	// one in it cut at a seeded byte) instead of none of them.
	TornWrite float64
	// MinLatency and MaxLatency bound a file op's latency, uniform; both
	// zero means the defaults.
	MinLatency, MaxLatency time.Duration
}

// Disk is a host's storage: files by path (cleaned; there are no
// directories). Each file has its content as of its last fsync (durable)
// and its current content; a crash keeps the durable content, or loses
// the file if it was never synced (see DiskFaults.TornWrite for the
// exception). Guarded by World.mu.
type Disk struct {
	h      *Host
	files  map[string]*file
	faults DiskFaults
	// nextIno numbers the files.
	nextIno uint64
}

// file is a file's content and metadata.
type file struct {
	ino  uint64
	perm uint32
	// data is the current content; synced the content as of the last
	// fsync, which a crash keeps if durable (synced at least once).
	data, synced []byte
	durable      bool
	// log are the changes since the last fsync, in order, for torn
	// writes.
	log                 []change
	mtime, ctime, btime time.Time
}

// change is a write (data at off) or a truncate (to size, data nil).
type change struct {
	off  int64
	data []byte
	size int64
}

// apply makes the change to content and returns it.
func (c change) apply(content []byte) []byte {
	if c.data == nil {
		return resize(content, c.size)
	}
	if c.off == int64(len(content)) {
		return append(content, c.data...) // an append, a log's usual write
	}
	end := c.off + int64(len(c.data))
	if end > int64(len(content)) {
		content = resize(content, end)
	}
	copy(content[c.off:], c.data)
	return content
}

// resize returns content cut or zero-extended to size.
func resize(content []byte, size int64) []byte {
	if size <= int64(len(content)) {
		return content[:size]
	}
	return append(content, make([]byte, size-int64(len(content)))...)
}

// newDisk makes h's empty disk.
func newDisk(h *Host) *Disk {
	return &Disk{h: h, files: make(map[string]*file), nextIno: 1}
}

// SetFaults sets the disk's faults from now on.
func (d *Disk) SetFaults(f DiskFaults) {
	if f.MinLatency < 0 || f.MaxLatency < f.MinLatency {
		panic(fmt.Sprintf("netsim: bad disk latency [%v, %v]", f.MinLatency, f.MaxLatency))
	}
	d.h.w.locked(func() { d.faults = f })
}

// ReadFile returns the current content of the file at name (a copy), and
// false if there is none. For tests and checkers.
func (d *Disk) ReadFile(name string) ([]byte, bool) {
	var out []byte
	ok := false
	d.h.w.locked(func() {
		if f := d.files[cleanPath(name)]; f != nil {
			out, ok = slices.Clone(f.data), true
			if out == nil {
				out = []byte{}
			}
		}
	})
	return out, ok
}

// WriteFile makes the file at name hold data, durably, as a disk image
// prepared before the run would.
func (d *Disk) WriteFile(name string, data []byte) {
	d.h.w.locked(func() {
		f := d.create(cleanPath(name), 0o644)
		f.data = slices.Clone(data)
		d.syncAll(f)
	})
}

// Files returns the paths of the files, sorted.
func (d *Disk) Files() []string {
	var names []string
	d.h.w.locked(func() {
		for name := range d.files {
			names = append(names, name)
		}
	})
	slices.Sort(names)
	return names
}

// cleanPath is the key of a path.
func cleanPath(name string) string { return path.Clean(name) }

// create makes an empty, not yet durable file at name.
func (d *Disk) create(name string, perm uint32) *file {
	now := d.h.w.clock
	f := &file{ino: d.nextIno, perm: perm & 0o7777, mtime: now, ctime: now, btime: now}
	d.nextIno++
	d.files[name] = f
	return f
}

// change applies c to f's current content, logged for a crash.
func (d *Disk) change(f *file, c change) {
	f.data = c.apply(f.data)
	f.log = append(f.log, c)
	f.mtime, f.ctime = d.h.w.clock, d.h.w.clock
}

// sync makes f's current content and existence durable. The changes
// since the last sync are applied to the synced content (an fsync of an
// appended log copies what was appended, not the whole file); f.log must
// hold every change since then (d.change).
func (d *Disk) sync(f *file) {
	for _, c := range f.log {
		f.synced = c.apply(f.synced)
	}
	f.durable = true
	f.clearLog()
}

// clearLog empties f's log of changes, keeping its array for the next.
func (f *file) clearLog() {
	clear(f.log)
	f.log = f.log[:0]
}

// syncAll makes f's current content durable by copying it: for content
// set without d.change (WriteFile, a crash's outcome).
func (d *Disk) syncAll(f *file) {
	f.synced = slices.Clone(f.data)
	f.durable = true
	f.clearLog()
}

// latency draws a file op's latency.
func (d *Disk) latency() time.Duration {
	lo, hi := d.faults.MinLatency, d.faults.MaxLatency
	if lo == 0 && hi == 0 {
		lo, hi = DefaultDiskMinLatency, DefaultDiskMaxLatency
	}
	if hi == lo {
		return lo
	}
	return lo + time.Duration(d.h.w.rng.Int64N(int64(hi-lo)+1))
}

// crash loses what was not synced: files never synced vanish, the others
// go back to their synced content, or with probability TornWrite keep a
// seeded prefix of their unsynced changes.
func (d *Disk) crash() {
	w := d.h.w
	names := make([]string, 0, len(d.files))
	for name := range d.files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := d.files[name]
		if !f.durable {
			delete(d.files, name)
			w.emit(d.h, "disk", "lost ", name)
			continue
		}
		content := slices.Clone(f.synced)
		if len(f.log) > 0 && w.chance(d.faults.TornWrite) {
			k := w.rng.IntN(len(f.log))
			for _, c := range f.log[:k] {
				content = c.apply(content)
			}
			if last := f.log[k]; last.data != nil {
				last.data = last.data[:w.rng.IntN(len(last.data)+1)]
				content = last.apply(content)
			}
			w.emitf(d.h, "disk", "torn %s %d of %d changes", name, k, len(f.log))
		} else if len(f.log) > 0 {
			w.emitf(d.h, "disk", "rollback %s %d changes", name, len(f.log))
		}
		f.data = content
		d.syncAll(f)
	}
}
