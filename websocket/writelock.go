package websocket

// The connection's write lock: a word and the wakers of the writers that
// wait, kept under the connection's mu. It replaces an async mutex of the
// runtime (56 bytes) by 12 bytes per connection.
//
// The protocol: a writer takes the lock by a CAS of state from 0 to
// wHeld. One that finds it held registers its waker under Conn.mu and
// sets wWaiters in the same critical section, by a CAS that fails if the
// lock was released meanwhile (the writer then tries again). Unlock swaps
// state to 0 and, if wWaiters was set, wakes every registered writer
// (under mu); each tries again, one wins, the others register again. A
// release cannot be missed: a waiter's registration and wWaiters are set
// while the lock is held, so the release that follows sees wWaiters and
// wakes it. The lock is not fair: a writer that comes while the woken
// ones are on their way may take it first. A connection has few writers
// (its application's, the reader's pongs and close replies, a
// Broadcaster's sender), so waking them all costs little.

import (
	"context"
	"fmt"

	"github.com/blitz-go/blitz/future"
)

// The bits of Conn.wstate.
const (
	wHeld    = 1 // a writer holds the lock
	wWaiters = 2 // writers registered in Conn.waiters
)

// tryLockWrite takes the write lock if it is free, else registers cx's
// waker (if cx is not nil) to be woken at its release. Called by a
// writer.
func (c *Conn) tryLockWrite(cx *future.Context) bool {
	for {
		if c.wstate.CompareAndSwap(0, wHeld) { // acquire: pairs with the Swap in unlockWrite
			return true
		}
		if cx == nil {
			return false
		}
		c.mu.Lock()
		s := c.wstate.Load()
		if s == 0 || (s&wWaiters == 0 && !c.wstate.CompareAndSwap(s, s|wWaiters)) { // pairs with the Swap in unlockWrite
			c.mu.Unlock()
			continue // released meanwhile
		}
		c.addWaiterLocked(false, cx.Waker())
		c.mu.Unlock()
		return false
	}
}

// unlockWrite releases the write lock and wakes the writers that wait.
// Called by the holder.
func (c *Conn) unlockWrite() {
	if c.wstate.Swap(0)&wWaiters == 0 { // release: pairs with the CASes of tryLockWrite
		return
	}
	c.mu.Lock()
	ws := c.takeWaitersLocked(false)
	c.mu.Unlock()
	wakeAll(ws)
}

// lockWriteFuture is a wait for the write lock.
type lockWriteFuture struct{ c *Conn }

func (f lockWriteFuture) Poll(cx *future.Context) (struct{}, bool) {
	return struct{}{}, f.c.tryLockWrite(cx)
}

func (f lockWriteFuture) Cancel() {}

// lockWriteBlocking takes the write lock on the calling goroutine, until
// ctx ends.
func (c *Conn) lockWriteBlocking(ctx context.Context) error {
	if c.tryLockWrite(nil) {
		return nil
	}
	if _, err := future.Block(ctx, future.Future[struct{}](lockWriteFuture{c})); err != nil {
		return fmt.Errorf("websocket: %w", err)
	}
	return nil
}
