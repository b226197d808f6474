// Package dumpwarn checks the task dump's warnings against programs that
// have the bugs they name, and against healthy programs waiting on every
// kind of leaf future, which must draw none.
package dumpwarn

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// waitAll waits on each kind of leaf future in turn, as healthy tasks do:
// a sleep, a channel, a mutex, a semaphore, a notify, a select over an
// interval and a channel.
//
//blitz:async
func waitAll(in *channels.Bounded[int], mu *syncprim.Mutex, sem *syncprim.Semaphore, n *syncprim.Notify, stop future.Future[int]) int {
	future.Await(blitz.Sleep(time.Millisecond))
	v, _ := future.Try(in.Recv())
	g := future.Await(mu.Lock())
	g.Unlock()
	future.Await(sem.Acquire(1))
	sem.Release(1)
	future.Await(n.Notified())
	iv := blitz.NewTicker(time.Hour)
	defer iv.Cancel()
	select {
	case <-future.OnKeep(iv):
	case r := <-future.On(in.Recv()):
		v += r.Value
	}
	return v + future.Await(stop)
}
