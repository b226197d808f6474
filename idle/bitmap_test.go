package idle_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/idle"
)

var bitmapSizes = []int{1, 63, 64, 65, 130, 1000}

// TestEveryWorkerCanParkAndBeFound announces every worker, then lets the
// chain of "last searcher must notify" wake them one by one: each woken
// worker finds work and, being the last searcher, claims the next. Every id,
// in every word of the bitmap, is found exactly once.
func TestEveryWorkerCanParkAndBeFound(t *testing.T) {
	for _, n := range bitmapSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := idle.New(n)
			for id := range n {
				s.PrepareToPark(id, false)
				require.True(t, s.IsParked(id))
			}
			require.Equal(t, n, s.Parked())
			require.True(t, s.NotifyOne())
			seen := make([]bool, n)
			for woken := 1; ; woken++ {
				id := claimedWorker(t, s, seen)
				require.Equal(t, idle.Notified, s.Park(id, 0), "worker %d", id)
				require.Equal(t, 1, s.Searching())
				require.Equal(t, n-woken, s.Parked())
				require.True(t, s.TransitionFromSearching(), "the woken worker is the only searcher")
				if woken == n {
					break
				}
			}
			assert.Equal(t, 0, s.Searching(), "the last transition found nobody to wake")
			assert.Equal(t, 0, s.Parked())
		})
	}
}

// claimedWorker returns the one worker that is not parked and not yet seen,
// and marks it seen.
func claimedWorker(t *testing.T, s *idle.State, seen []bool) int {
	t.Helper()
	found := -1
	for id := range seen {
		if !seen[id] && !s.IsParked(id) {
			require.Equal(t, -1, found, "two workers claimed by one notify: %d and %d", found, id)
			found = id
		}
	}
	require.NotEqual(t, -1, found, "no worker claimed")
	seen[found] = true
	return found
}

// TestConcurrentClaimsNeverShareAWorker announces every worker and lets
// several goroutines claim from the bitmap at once, counting the claims of
// each id: each is claimed exactly once, whatever the word.
func TestConcurrentClaimsNeverShareAWorker(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 5
	}
	for _, n := range bitmapSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			for range rounds {
				s := idle.New(n)
				for id := range n {
					s.PrepareToPark(id, false)
				}
				claims := make([]atomic.Int32, n)
				var total atomic.Int64
				var wg sync.WaitGroup
				for range 4 {
					wg.Go(func() {
						for {
							id, ok := s.Claim()
							if !ok {
								return
							}
							claims[id].Add(1)
							total.Add(1)
						}
					})
				}
				wg.Wait()
				require.Equal(t, int64(n), total.Load())
				for id := range n {
					require.Equal(t, int32(1), claims[id].Load(), "worker %d", id)
				}
			}
		})
	}
}
