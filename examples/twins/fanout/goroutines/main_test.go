package main

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/blitz-go/blitz/examples/twins/internal/twintest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is a fetch that does what behave says.
func fake(behave func(int) twintest.Behavior, rec *twintest.Recorder) fetchFunc {
	return func(ctx context.Context, key string) (string, error) {
		id, _ := strconv.Atoi(key)
		rec.Start(id)
		b := behave(id)
		if b.Block {
			b.Delay = time.Minute
		}
		select {
		case <-time.After(b.Delay):
			rec.End(id, false)
			if b.Err != nil {
				return "", b.Err
			}
			return twintest.Item(id), nil
		case <-ctx.Done():
			rec.End(id, true)
			return "", ctx.Err()
		}
	}
}

func ids(n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}

func TestFanout(t *testing.T) {
	twintest.RunFanout(t, twintest.Fanout{
		Run: func(t *testing.T, n, limit int, behave func(int) twintest.Behavior, rec *twintest.Recorder) ([]string, error) {
			return fetchAll(context.Background(), ids(n), limit, fake(behave, rec))
		},
		Abandon: func(t *testing.T, n, limit int, behave func(int) twintest.Behavior, rec *twintest.Recorder, d time.Duration) {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			if _, err := fetchAll(ctx, ids(n), limit, fake(behave, rec)); err == nil {
				t.Error("an abandoned fetch succeeded")
			}
		},
		Keys: func(t *testing.T, addr string, limit int, keys []string) ([]string, error) {
			return fetchAll(context.Background(), keys, limit, func(ctx context.Context, key string) (string, error) {
				return fetchKey(ctx, addr, key)
			})
		},
	})
}
