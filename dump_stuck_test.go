package blitz_test

import (
	"bytes"
	"fmt"

	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// TestDumpListsTheTasksBehindAStuckHandler: a handler that spawns its
// helpers and then blocks its worker before its first await, without
// PollTiming: the dump lists the handler, running its first poll, with a
// never-yielded warning naming it, and every helper queued behind it, by
// name: those in the worker's local queue, and those in its LIFO (read
// from what the worker publishes of them), in each LIFO mode.
func TestDumpListsTheTasksBehindAStuckHandler(t *testing.T) {
	for _, lifo := range []int{scheduler.LIFOSlot, scheduler.LIFOStack, scheduler.LIFOOff} {
		t.Run(fmt.Sprintf("lifo=%d", lifo), func(t *testing.T) { testDumpListsTheTasksBehindAStuckHandler(t, lifo) })
	}
}

func testDumpListsTheTasksBehindAStuckHandler(t *testing.T, lifo int) {
	const helpers = 20
	rt := newRuntime(t, blitz.Config{Workers: 1, LIFO: lifo})
	release := make(chan struct{})
	released := false
	t.Cleanup(func() {
		if !released {
			close(release) // a failed check: let the handler end, for the shutdown
		}
	})
	blocking := make(chan struct{})
	var hs []blitz.JoinHandle[int]
	handler := blitz.SpawnOn[int](rt.Handle(), blitz.Named("handler", future.Future[int](future.PollFn(func(cx *future.Context) (int, bool) {
		for i := range helpers {
			hs = append(hs, blitz.Spawn[int](cx, blitz.Named(fmt.Sprintf("helper-%d", i), future.Future[int](future.Ready(i)))))
		}
		close(blocking)
		<-release // the bug: blocking before the first await
		return 0, true
	}))))
	<-blocking
	require.Eventually(t, func() bool { return len(rt.Metrics().LongPolls) == 1 }, 10*time.Second, time.Millisecond)

	var b bytes.Buffer
	require.NoError(t, rt.Dump(&b))
	out := b.String()
	t.Logf("the dump:\n%s", out)
	require.Contains(t, out, fmt.Sprintf("blitz tasks: %d live, %d listed\n", helpers+1, helpers+1))
	require.Regexp(t, `WARNING \(never yielded\): task \d+ "handler"`, out)
	require.Regexp(t, `1 task: running, "handler"`, out)
	for i := range helpers {
		require.Contains(t, out, fmt.Sprintf("1 task: queued, %q\n", fmt.Sprintf("helper-%d", i)))
	}
	released = true
	close(release)
	_, err := handler.Wait(t.Context())
	require.NoError(t, err)
	for _, h := range hs {
		_, err := h.Wait(t.Context())
		require.NoError(t, err)
	}
}
