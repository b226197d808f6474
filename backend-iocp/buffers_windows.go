//go:build windows

package iocp

import (
	"errors"
	"fmt"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// group is a registered buffer group: a backend.BufferStack, whose memory
// follows the most buffers in use at once (a recv takes its buffer only
// once its zero-byte WSARecv has seen data) and whose idle buffers give
// their pages back (TrimIdle; releasePages).
type group = backend.BufferStack

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
	b.groups[id] = backend.NewBufferStack(count, size, &b.trimPending, releasePages)
	return nil
}

// group returns group gid, nil if it is not registered.
func (b *Backend) group(gid uint16) *group {
	b.bufMu.Lock()
	defer b.bufMu.Unlock()
	return b.groups[gid]
}

// Buffer returns buffer id of group gid (nil if there is none).
func (b *Backend) Buffer(gid, id uint16) []byte {
	g := b.group(gid)
	if g == nil {
		return nil
	}
	return g.Buffer(id)
}

// ReleaseBuffer gives buffer id back to group gid.
func (b *Backend) ReleaseBuffer(gid, id uint16) error {
	g := b.group(gid)
	if g == nil || !g.Put(id) {
		return backend.NewError("release buffer", backend.ErrInvalid, errNotHeld)
	}
	return nil
}

var errNotHeld = errors.New("buffer not held by the caller")

// takeBuffer takes a free buffer of group gid for a recv.
func (b *Backend) takeBuffer(gid uint16) (uint16, []byte, bool) {
	g := b.group(gid)
	if g == nil {
		return 0, nil, false
	}
	id, ok := g.Take()
	if !ok {
		return 0, nil, false
	}
	return id, g.Buffer(id), true
}

// putBuffer returns a buffer a recv took but did not fill.
func (b *Backend) putBuffer(gid, id uint16) { b.group(gid).Put(id) }

var _ backend.Trimmer = (*Backend)(nil)

// TrimIdle gives back the pages of free buffers that have stayed untaken
// for backend.BufferTrimAfter, in every group, and returns how long until
// it should be called again (0 when no group has buffers to release); see
// backend.BufferStack and backend.Trimmer. Any goroutine may call it.
func (b *Backend) TrimIdle() time.Duration {
	if !b.trimPending.Load() {
		return 0
	}
	// Cleared before the groups are looked at: a Put after this sets it
	// again, and one before it is seen below, under the group's lock.
	b.trimPending.Store(false)
	b.bufMu.Lock()
	gs := make([]*group, 0, len(b.groups))
	for _, g := range b.groups {
		gs = append(gs, g)
	}
	b.bufMu.Unlock()
	now := time.Now()
	wait := time.Duration(0)
	for _, g := range gs {
		if d := g.TrimIdle(now); d > 0 && (wait == 0 || d < wait) {
			wait = d
		}
	}
	if wait > 0 {
		b.trimPending.Store(true)
	}
	return wait
}
