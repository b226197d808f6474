// Package deadlock is the two-mutex deadlock written as async functions:
// one task locks a then b, the other b then a. Its test checks that the
// task dump proves the deadlock as Go's goroutine dump would: the cycle,
// each lock's holder, and the line each task waits at.
package deadlock

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// lockBoth locks first, waits for both tasks to hold their first lock,
// then locks second: with another task doing the same in the other order,
// neither gets its second lock.
//
//blitz:async
func lockBoth(first, second *syncprim.Mutex, both *syncprim.Barrier) int {
	g1 := future.Await(first.Lock())
	defer g1.Unlock()
	future.Await(both.Wait())
	g2 := future.Await(second.Lock())
	defer g2.Unlock()
	return 1
}
