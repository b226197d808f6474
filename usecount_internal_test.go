package blitz

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUseCountSequential: acquire and release count, markClosing refuses
// later uses and reports a second close, and the last release after it
// says so.
func TestUseCountSequential(t *testing.T) {
	var u useCount
	require.True(t, u.acquire())
	require.True(t, u.acquire())
	assert.False(t, u.release())
	already, busy := u.markClosing()
	assert.False(t, already)
	assert.True(t, busy)
	assert.False(t, u.acquire(), "no use after the close")
	assert.True(t, u.release(), "the last use learns it")
	already, busy = u.markClosing()
	assert.True(t, already)
	assert.False(t, busy)

	var idle useCount
	already, busy = idle.markClosing()
	assert.False(t, already)
	assert.False(t, busy, "nothing in flight: the closer finishes the close")
}

// TestUseCountCloseRace: goroutines use the count while one closes it;
// exactly one party finishes the close (the closer when no use was in
// flight, else the last release), never before the last use ended.
func TestUseCountCloseRace(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	for range rounds {
		var u useCount
		var inUse, finishers atomic.Int32
		var ended atomic.Bool
		finish := func() {
			finishers.Add(1)
			if inUse.Load() != 0 {
				t.Error("the close finished under a use")
			}
			ended.Store(true)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for u.acquire() {
					inUse.Add(1)
					if ended.Load() {
						t.Error("a use after the close finished")
					}
					inUse.Add(-1)
					if u.release() {
						finish()
					}
				}
			}()
		}
		if _, busy := u.markClosing(); !busy {
			finish()
		}
		wg.Wait()
		require.Equal(t, int32(1), finishers.Load())
	}
}
