package iodriver

import (
	"sync"

	"github.com/blitz-go/blitz/backend"
)

// PoolGroup is the backend buffer group of the runtime's read pool.
const PoolGroup = 1

// readPool is a ring's share of the runtime's pool of read buffers
// (Config.ReadBufferCount split over the rings, of ReadBufferSize bytes),
// registered with the ring's backend on first use. The armed receives that
// land in it are package blitz's (its armTable, per ring).
type readPool struct {
	once sync.Once
	err  error
}

// ReadPool registers r's pool once and returns its buffer size. Any
// goroutine (a pooled read, Runtime.PrepareReadPool).
func (r *Ring) ReadPool() (int, error) {
	p, d := &r.pool, r.d
	p.once.Do(func() { p.err = r.b.RegisterBufferGroup(PoolGroup, d.poolCount, d.poolSize) })
	return d.poolSize, p.err
}

// ReleaseArmed gives back the pool buffer of an armed receive's completion
// that nobody reads (its socket closed, or its key stale). Called by the
// delivery of armed receives (SetArmed), on the collecting worker.
func (r *Ring) ReleaseArmed(c *backend.Completion) {
	if c.Flags&backend.HasBuffer != 0 {
		_ = r.b.ReleaseBuffer(PoolGroup, c.BufferID)
	}
}
