package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// dialTimeout bounds the connection to the server.
const dialTimeout = 5 * time.Second

// policy is how retry spaces and bounds its attempts.
type policy struct {
	attempts int           // at most this many attempts
	base     time.Duration // the wait after the first failure
	max      time.Duration // the longest wait
	timeout  time.Duration // bounds each attempt
}

// backoff returns the wait after failed attempt n (from 0): base·2^n, at
// most max, of which half is fixed and half random ("equal jitter").
func (p policy) backoff(n int) time.Duration {
	d := p.max
	if n < 32 {
		d = min(p.max, p.base<<n)
	}
	return d/2 + rand.N(d/2+1)
}

// retry runs the future attempt makes until one succeeds, at most
// p.attempts times, waiting p.backoff between attempts. Each attempt runs
// as a task of its own, so that one that panics has failed, with the panic
// (a *blitz.PanicError) as its error. Cancelling retry cancels the attempt
// in flight.
//
//blitz:async
func retry[T any](p policy, attempt func() future.Future[future.Result[T]]) (T, error) {
	var zero T
	for n := 0; ; n++ {
		v, err := future.Try(blitz.TryTimeout(p.timeout, blitz.SpawnFallible(future.Cx(), attempt())))
		if err == nil {
			return v, nil
		}
		if n+1 >= p.attempts {
			return zero, fmt.Errorf("after %d attempts: %w", n+1, err)
		}
		future.Await(blitz.Sleep(p.backoff(n)))
	}
}

// fetchKey asks the kv server at addr (examples/twins/kv) for the value of
// key.
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
