package blitz_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// A task waiting for a read of a file on the ring (a FIFO with nothing in
// it) shows in the task dump as waiting on its read, with its descriptor.
func TestDumpShowsFileReadWait(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1, Backend: blitz.BackendURing})
	if err != nil {
		t.Skipf("io_uring: %v (on epoll, file reads run on the blocking pool)", err)
	}
	defer func() { require.NoError(t, rt.Shutdown(context.Background())) }()
	p, w := fifo(t, rt)
	buf := make([]byte, 16)
	h := blitz.SpawnOn(rt.Handle(), blitz.Named("fifo reader", future.Future[future.Result[int]](p.Read(buf))))
	require.Eventually(t, func() bool {
		tasks, _ := rt.Tasks()
		for _, task := range tasks {
			if task.Name == "fifo reader" && strings.HasPrefix(task.Wait.String(), "I/O read fd ") {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "no fifo reader waiting on its read in the dump")
	_, err = w.Write([]byte("x"))
	require.NoError(t, err)
	r, err := h.Wait(testCtx(t))
	require.NoError(t, err)
	require.NoError(t, r.Err)
	_, err = awaitClose(t, rt, p.Close())
	require.NoError(t, err)
}
