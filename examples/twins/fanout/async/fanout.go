package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"fmt"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// dialTimeout bounds the connection to the server.
const dialTimeout = 5 * time.Second

// fetchFunc returns a future of the item of id; cancelling it cancels the
// fetch.
type fetchFunc = func(id string) future.Future[future.Result[string]]

// fetchAll returns a future that fetches every id, at most limit at a time,
// and completes with the items in the order of ids. The first error cancels
// the fetches in flight and those still waiting for their turn, and is its
// result. Cancelling it cancels every fetch.
func fetchAll(ids []string, limit int, fetch fetchFunc) future.Future[future.Result[[]string]] {
	sem := syncprim.NewSemaphore(limit)
	fs := make([]future.Future[future.Result[string]], len(ids))
	for i, id := range ids {
		fs[i] = limitedAsync(sem, fetch, id)
	}
	return future.TryJoinAll(fs...)
}

// limited fetches id once it holds one of sem's permits.
//
//blitz:async
func limited(sem *syncprim.Semaphore, fetch fetchFunc, id string) (string, error) {
	p, err := future.Try(sem.AcquirePermit(1))
	if err != nil {
		return "", err
	}
	defer p.Release()
	return future.Try(fetch(id))
}

// fetchKey asks the kv server at addr (examples/twins/kv) for the value of
// key, over a connection of its own.
//
//blitz:async
func fetchKey(addr, key string) (string, error) {
	h, _ := blitz.Current(future.Cx())
	c, err := future.Try(blitz.DialTCP(h, addr, dialTimeout))
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := future.Try(c.WriteAll([]byte("GET " + key + "\n"))); err != nil {
		return "", err
	}
	reply, err := future.Try(blitz.NewBufReader(c, 0).ReadLine())
	if err != nil {
		return "", err
	}
	v, ok := strings.CutPrefix(reply, "VALUE ")
	if !ok {
		return "", fmt.Errorf("%s: %s", key, reply)
	}
	return v, nil
}
