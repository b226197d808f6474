package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMainCountsEveryLineOnce runs the pipeline and checks that every line
// the producer sent was counted exactly once, by the tasks and the watcher.
func TestMainCountsEveryLineOnce(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	require.NoError(t, w.Close())
	var out bytes.Buffer
	_, err = io.Copy(&out, r)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Equal(t, "lines counted: 30000 by 8 tasks; progress watcher saw 30000", lines[0])
	want := map[string]string{"the": "30000", "dog": "30000", "fox": "20000", "sleeps": "10000"}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		require.Len(t, f, 2, l)
		if n, ok := want[f[0]]; ok {
			require.Equal(t, n, f[1], f[0])
			delete(want, f[0])
		}
	}
	require.Empty(t, want, "words missing from the output")
}

// TestCancelledWorkerLeavesNothingQueued cancels a worker while it waits for
// the counter's lock: its place in the mutex's queue is withdrawn, so the
// lock goes to the next waiter instead of to a task that will never release
// it.
func TestCancelledWorkerLeavesNothingQueued(t *testing.T) {
	rt, err := blitz.New(blitz.Config{})
	require.NoError(t, err)
	defer rt.Shutdown(context.Background())
	in := channels.NewBounded[string](4)
	c := &counter{counts: make(map[string]int), lines: channels.NewWatch(0)}
	held, err := c.mu.LockBlocking(context.Background())
	require.NoError(t, err)

	h := blitz.SpawnOn(rt.Handle(), workerAsync(in, c))
	require.NoError(t, in.TrySend("a line"))
	deadline := time.Now().Add(30 * time.Second)
	for in.Len() > 0 { // the worker took the line and goes on to the lock
		require.True(t, time.Now().Before(deadline), "the worker never received the line")
		time.Sleep(time.Millisecond)
	}
	h.Cancel()
	_, err = h.Wait(context.Background())
	require.ErrorIs(t, err, blitz.ErrCancelled)

	held.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := c.mu.LockBlocking(ctx)
	require.NoError(t, err, "the lock went to the cancelled worker")
	g.Unlock()
	require.Empty(t, c.counts, "the cancelled worker counted its line")
}
