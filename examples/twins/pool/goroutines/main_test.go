package main

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func run(hosts []string, queueLen, workers, limit int, lookup lookupFunc, sent func()) []twintest.Res {
	jobs := make(chan job, queueLen)
	go func() {
		defer close(jobs)
		for n, h := range hosts {
			jobs <- job{n, h}
			sent()
		}
	}()
	var res []twintest.Res
	for _, r := range lookupAll(context.Background(), jobs, workers, limit, lookup) {
		res = append(res, twintest.Res{N: r.n, Host: r.host, Addrs: r.addrs, Err: r.err})
	}
	return res
}

func TestPool(t *testing.T) {
	twintest.RunPool(t, twintest.Pool{
		Run: func(t *testing.T, hosts []string, queueLen, workers, limit int, l *twintest.Lookups) []twintest.Res {
			fake := func(ctx context.Context, host string) ([]netip.Addr, error) {
				l.Begin()
				defer l.End()
				time.Sleep(l.Delay(host))
				return l.Result(host)
			}
			return run(hosts, queueLen, workers, limit, fake, func() { l.Sent.Add(1) })
		},
		Real: func(t *testing.T, hosts []string) []twintest.Res {
			return run(hosts, 1, 2, 1, lookupHost, func() {})
		},
	})
}
