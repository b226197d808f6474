package main

import (
	"context"
	"net/netip"
	"testing"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"github.com/blitz-go/blitz/future"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is the test's lookup.
//
//blitz:async
func fake(l *twintest.Lookups, host string) ([]netip.Addr, error) {
	l.Begin()
	defer l.End()
	future.Await(blitz.Sleep(l.Delay(host)))
	return l.Result(host)
}

func run(t *testing.T, hosts []string, queueLen, workers, limit int, lookup lookupFunc, sent func()) []twintest.Res {
	rt := twintest.Runtime(t)
	jobs := channels.NewBounded[job](queueLen)
	go func() {
		defer jobs.Close()
		for n, h := range hosts {
			if err := jobs.SendBlocking(context.Background(), job{n, h}); err != nil {
				t.Error(err)
			}
			sent()
		}
	}()
	all, err := blitz.BlockOn(context.Background(), rt.Handle(), lookupAllAsync(jobs, workers, limit, lookup))
	if err == nil {
		err = all.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	var res []twintest.Res
	for _, r := range all.Value {
		res = append(res, twintest.Res{N: r.n, Host: r.host, Addrs: r.addrs, Err: r.err})
	}
	return res
}

func TestPool(t *testing.T) {
	twintest.RunPool(t, twintest.Pool{
		Run: func(t *testing.T, hosts []string, queueLen, workers, limit int, l *twintest.Lookups) []twintest.Res {
			lookup := func(host string) future.Future[future.Result[[]netip.Addr]] { return fakeAsync(l, host) }
			return run(t, hosts, queueLen, workers, limit, lookup, func() { l.Sent.Add(1) })
		},
		Real: func(t *testing.T, hosts []string) []twintest.Res {
			return run(t, hosts, 1, 2, 1, lookupHost, func() {})
		},
	})
}
