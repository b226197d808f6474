//go:build windows

package iocp

import (
	"errors"
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// group is a registered buffer group (guarded by Backend.bufMu). The
// buffers are slices of one allocation; free is a stack of the ids not held
// by the caller.
type group struct {
	bufs [][]byte
	free []uint16
	held []bool
}

// RegisterBufferGroup makes group id with count buffers of size bytes.
func (b *Backend) RegisterBufferGroup(id uint16, count, size int) error {
	if count < 1 || count > 32768 || count&(count-1) != 0 || size < 1 || size > 1<<20 {
		return backend.NewError("register buffers", backend.ErrInvalid, fmt.Errorf("count %d size %d", count, size))
	}
	b.bufMu.Lock()
	defer b.bufMu.Unlock()
	if _, ok := b.groups[id]; ok {
		return backend.NewError("register buffers", backend.ErrExists, fmt.Errorf("group %d", id))
	}
	mem := make([]byte, count*size)
	g := &group{bufs: make([][]byte, count), free: make([]uint16, count), held: make([]bool, count)}
	for i := range count {
		g.bufs[i] = mem[i*size : (i+1)*size : (i+1)*size]
		g.free[i] = uint16(count - 1 - i)
	}
	b.groups[id] = g
	return nil
}

// Buffer returns buffer id of group gid (nil if there is none).
func (b *Backend) Buffer(gid, id uint16) []byte {
	b.bufMu.Lock()
	defer b.bufMu.Unlock()
	g := b.groups[gid]
	if g == nil || int(id) >= len(g.bufs) {
		return nil
	}
	return g.bufs[id]
}

// ReleaseBuffer gives buffer id back to group gid.
func (b *Backend) ReleaseBuffer(gid, id uint16) error {
	b.bufMu.Lock()
	defer b.bufMu.Unlock()
	g := b.groups[gid]
	if g == nil || int(id) >= len(g.bufs) || !g.held[id] {
		return backend.NewError("release buffer", backend.ErrInvalid, errNotHeld)
	}
	g.held[id] = false
	g.free = append(g.free, id)
	return nil
}

var errNotHeld = errors.New("buffer not held by the caller")

// takeBuffer takes a free buffer of group gid for a recv.
func (b *Backend) takeBuffer(gid uint16) (uint16, []byte, bool) {
	b.bufMu.Lock()
	defer b.bufMu.Unlock()
	g := b.groups[gid]
	if g == nil || len(g.free) == 0 {
		return 0, nil, false
	}
	id := g.free[len(g.free)-1]
	g.free = g.free[:len(g.free)-1]
	g.held[id] = true
	return id, g.bufs[id], true
}

// putBuffer returns a buffer a recv took but did not fill.
func (b *Backend) putBuffer(gid, id uint16) {
	b.bufMu.Lock()
	defer b.bufMu.Unlock()
	g := b.groups[gid]
	g.held[id] = false
	g.free = append(g.free, id)
}
