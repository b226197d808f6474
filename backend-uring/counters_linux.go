//go:build linux

package uring

import "github.com/blitz-go/blitz/backend"

var _ backend.EnterCounter = (*Backend)(nil)

// EnterCalls returns how many io_uring_enter calls the backend has made,
// to submit and to wait (see backend.EnterCounter). Any goroutine.
func (b *Backend) EnterCalls() uint64 { return b.r.enters.Load() }
