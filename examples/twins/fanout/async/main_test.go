package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"github.com/blitz-go/blitz/future"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a fetch that does what behave says; its deferred call sees
// whether it returned or was cancelled.
//
//blitz:async
func fake(behave func(int) twintest.Behavior, rec *twintest.Recorder, key string) (string, error) {
	id, _ := strconv.Atoi(key)
	rec.Start(id)
	returned := false
	defer func() { rec.End(id, !returned) }()
	b := behave(id)
	if b.Block {
		b.Delay = time.Minute
	}
	future.Await(blitz.Sleep(b.Delay))
	returned = true
	if b.Err != nil {
		return "", b.Err
	}
	return twintest.Item(id), nil
}

func ids(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}

func TestFanout(t *testing.T) {
	fetchFake := func(behave func(int) twintest.Behavior, rec *twintest.Recorder) fetchFunc {
		return func(key string) future.Future[future.Result[string]] { return fakeAsync(behave, rec, key) }
	}
	twintest.RunFanout(t, twintest.Fanout{
		Run: func(t *testing.T, n, limit int, behave func(int) twintest.Behavior, rec *twintest.Recorder) ([]string, error) {
			rt := twintest.Runtime(t)
			r, err := blitz.BlockOn(context.Background(), rt.Handle(), fetchAll(ids(n), limit, fetchFake(behave, rec)))
			if err != nil {
				t.Fatal(err)
			}
			return r.Get()
		},
		Abandon: func(t *testing.T, n, limit int, behave func(int) twintest.Behavior, rec *twintest.Recorder, d time.Duration) {
			rt := twintest.Runtime(t)
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			// BlockOn cancels the future when ctx ends.
			if _, err := blitz.BlockOn(ctx, rt.Handle(), fetchAll(ids(n), limit, fetchFake(behave, rec))); err == nil {
				t.Error("an abandoned fetch succeeded")
			}
		},
		Keys: func(t *testing.T, addr string, limit int, keys []string) ([]string, error) {
			rt := twintest.Runtime(t)
			r, err := blitz.BlockOn(context.Background(), rt.Handle(), fetchAll(keys, limit, func(key string) future.Future[future.Result[string]] {
				return fetchKeyAsync(addr, key)
			}))
			if err != nil {
				t.Fatal(err)
			}
			return r.Get()
		},
	})
}
