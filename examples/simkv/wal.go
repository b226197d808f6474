package simkv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// wal is a replica's append-only log file: one record per entry (see
// appendRecord). It is owned by the replica and used under its writeMu,
// so that appends, syncs and repairs never overlap.
//
// It uses only the file operations that run on the runtime's I/O backend
// (open, ReadAt, Write, Sync, Truncate), not the blocking pool: they work
// on a real runtime and under simulation alike.
type wal struct {
	f *blitz.File
	// size is the length of the good records: where the next one goes.
	size int64
	// recovered are the entries found when the log was opened.
	recovered []Entry
}

// Reading the log at start.
const (
	readChunk = 4096
	// readTries bounds the reads of the whole file made until two agree.
	readTries = 8
)

// errUnreadable is returned when the log could not be read the same way
// twice in readTries tries.
var errUnreadable = errors.New("simkv: the log file reads differently each time")

// openWAL opens (or creates) the log at path and recovers its entries. A
// read can fail or, on a bad disk, return flipped bits, so the file is
// read until two whole reads agree; a torn record at its end (a crash in
// the middle of an unsynced append) is cut off; then the file is synced,
// so that every entry recovered is durable.
//
//blitz:async
func openWAL(path string) (*wal, error) {
	f, err := future.Try(blitz.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644))
	if err != nil {
		return nil, err
	}
	data, err := future.Try(readStableAsync(f))
	if err != nil {
		f.Close()
		return nil, err
	}
	entries, good := parseLog(data)
	if good < len(data) {
		if _, err := future.Try(f.Truncate(int64(good))); err != nil {
			f.Close()
			return nil, err
		}
	}
	// Sync even a log left whole: after a kill (the process died, the
	// machine did not) it may hold records written but never synced, which
	// a later power loss would take back after the replica had served
	// them.
	if _, err := future.Try(f.Sync()); err != nil {
		f.Close()
		return nil, err
	}
	return &wal{f: f, size: int64(good), recovered: entries}, nil
}

// readStable reads f whole until two reads give the same bytes.
//
//blitz:async
func readStable(f *blitz.File) ([]byte, error) {
	var last []byte
	have := false
	for range readTries {
		data, err := future.Try(readAllAtAsync(f))
		if err != nil {
			continue // EIO: try again
		}
		if have && bytes.Equal(data, last) {
			return data, nil
		}
		last, have = data, true
	}
	return nil, errUnreadable
}

// readAllAt reads f from offset 0 to its end with ReadAt (the file
// position is left alone, and SeekTo is not available under simulation).
//
//blitz:async
func readAllAt(f *blitz.File) ([]byte, error) {
	var data []byte
	buf := make([]byte, readChunk)
	for {
		n, err := future.Try(f.ReadAt(buf, int64(len(data))))
		data = append(data, buf[:n]...)
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// append writes e's record at the end of the log, without syncing. If the
// write fails, the file is cut back to its last good record, so that a
// later append does not follow a partial one; if that fails too, the log
// is broken (errBroken) and the replica stops writing until it restarts.
//
//blitz:async
func (w *wal) append(e Entry) error {
	rec := appendRecord(nil, e)
	n, err := future.Try(w.f.Write(rec))
	if err == nil && n == len(rec) {
		w.size += int64(n)
		return nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	if _, terr := future.Try(w.f.Truncate(w.size)); terr != nil {
		return fmt.Errorf("%w: %w (and the repair: %w)", errBroken, err, terr)
	}
	return err
}

// sync makes every record appended so far durable.
//
//blitz:async
func (w *wal) sync() error {
	_, err := future.Try(w.f.Sync())
	return err
}

// errBroken marks a log that could not be repaired after a failed write.
var errBroken = errors.New("simkv: log broken")
