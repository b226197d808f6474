package main

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
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

// lookupFunc looks up the addresses of host.
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// lookupAll runs workers goroutines that take jobs until jobs is closed;
// at most limit of them look a host up at a time (a semaphore shared by
// the workers). It returns every job's result, in job order.
func lookupAll(ctx context.Context, jobs <-chan job, workers, limit int, lookup lookupFunc) []result {
	sem := make(chan struct{}, limit)
	results := make(chan result)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				sem <- struct{}{}
				addrs, err := lookup(ctx, j.host)
				<-sem
				results <- result{j, addrs, err}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	var all []result
	for r := range results {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b result) int { return a.n - b.n })
	return all
}

// lookupHost looks host up with the system's resolver.
func lookupHost(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for i, a := range addrs {
		addrs[i] = a.Unmap() // LookupNetIP gives IPv4 addresses in their IPv6 form
	}
	return addrs, err
}
