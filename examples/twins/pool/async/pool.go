package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"net/netip"
	"slices"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// job is a host to look up, numbered in input order.
type job struct {
	n    int
	host string
}

// result is the outcome of a job.
type result struct {
	job
	addrs []netip.Addr
	err   error
}

// lookupFunc returns a future of the addresses of host.
type lookupFunc = func(host string) future.Future[future.Result[[]netip.Addr]]

// lookupAll runs workers tasks that take jobs until jobs is closed; at
// most limit of them look a host up at a time (a semaphore shared by the
// workers). It returns every job's result, in job order. Cancelling it
// cancels the workers.
//
//blitz:async
func lookupAll(jobs *channels.Bounded[job], workers, limit int, lookup lookupFunc) ([]result, error) {
	sem := syncprim.NewSemaphore(limit)
	var set blitz.JoinSet[[]result]
	defer set.Close()
	for range workers {
		set.Spawn(future.Cx(), future.Async(func() (done []result) {
			for j := range future.Each(jobs.Recv) { // until jobs is closed and drained
				future.Await(sem.Acquire(1))
				addrs, err := future.Try(lookup(j.host))
				sem.Release(1)
				done = append(done, result{j, addrs, err})
			}
			return done
		}))
	}
	each, err := future.Try(set.Values())
	if err != nil { // a worker panicked
		return nil, err
	}
	all := slices.Concat(each...)
	slices.SortFunc(all, func(a, b result) int { return a.n - b.n })
	return all, nil
}

// lookupHost looks host up with the system's resolver.
func lookupHost(host string) future.Future[future.Result[[]netip.Addr]] {
	return blitz.Resolve(host)
}
