package scheduler

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/header"
	"github.com/blitz-go/blitz/waker"
)

// sizeFut is a 16-byte future, for the size of a valueTask: a countdown,
// so that its fields are used.
type sizeFut struct{ left, step uintptr }

func (f *sizeFut) Poll(*future.Context) (struct{}, bool) {
	f.left -= min(f.left, f.step)
	return struct{}{}, f.left == 0
}

// idleSizeFut has the shape of BenchmarkIdleTaskMemory's idle future: a
// Waker and a pointer, 24 bytes.
type idleSizeFut struct {
	_ waker.Waker
	n *int
}

func (f *idleSizeFut) Poll(*future.Context) (struct{}, bool) { return struct{}{}, f.n == nil }

// TestTaskSizes pins the size of the task types: a task of struct{} holding
// a 16-byte future by value is one 160-byte allocation with a JoinHandle
// (SpawnValue) and 128 bytes without (SpawnValueDetached), a task of error
// holding its future in an interface (Spawn) 176 bytes, and 144 when it
// reports to a Notifier (SpawnNotifying, a server's connection handler);
// an idle task of BenchmarkIdleTaskMemory's shape at most 192 bytes with a
// handle, 144 without. Of taskBase's 112 bytes, 48 are the task's identity
// (id, parent, birth, polls and last poll, wait, side record: a word
// each); the header is 32 (the state word, the global queue's link, the
// task), its scheduler a pointer in taskBase, and the lock of its
// JoinHandle is shared with other tasks (joinStripe).
func TestTaskSizes(t *testing.T) {
	require.Equal(t, uintptr(32), unsafe.Sizeof(header.Header{}), "header.Header")
	require.Equal(t, uintptr(112), unsafe.Sizeof(taskBase{}), "taskBase")
	var b taskBase
	require.Less(t, unsafe.Offsetof(b.hasMore), uintptr(64), "the fields a poll touches fit in the task's first 64 bytes")
	require.Equal(t, uintptr(144), unsafe.Sizeof(core[struct{}]{}), "core[struct{}]")
	require.Equal(t, uintptr(160), unsafe.Sizeof(task[struct{}]{}), "task[struct{}]")
	require.Equal(t, uintptr(176), unsafe.Sizeof(task[error]{}), "task[error]")
	require.Equal(t, uintptr(160), unsafe.Sizeof(valueTask[struct{}, sizeFut, *sizeFut]{}), "valueTask of 16 bytes")
	require.LessOrEqual(t, unsafe.Sizeof(valueTask[struct{}, idleSizeFut, *idleSizeFut]{}), uintptr(192), "idle valueTask")
	require.Equal(t, uintptr(144), unsafe.Sizeof(notifyTask[error, *sizeNotifier]{}), "notifyTask[error] with a pointer notifier")
	require.Equal(t, uintptr(128), unsafe.Sizeof(detachedTask[struct{}, sizeFut, *sizeFut]{}), "detachedTask of 16 bytes")
	require.LessOrEqual(t, unsafe.Sizeof(detachedTask[struct{}, idleSizeFut, *idleSizeFut]{}), uintptr(144), "idle detachedTask")
}

// sizeNotifier is a Notifier of a pointer type, as a server's set of
// handlers is.
type sizeNotifier struct{}

func (*sizeNotifier) TaskEnded(TaskRef, future.Result[error]) {}

// TestMoreAwaitersOneAllocation: the Wakers of awaiters beyond the first
// take one allocation for up to four of them (three allocations for two
// before: the slice header, then the array twice as append grew it), kept
// in the task's join stripe only while there are some.
func TestMoreAwaitersOneAllocation(t *testing.T) {
	sigs := make([]waker.Signal, 4)
	wks := make([]waker.Waker, len(sigs))
	for i := range sigs {
		wks[i] = waker.New(&sigs[i])
	}
	var c core[int]
	var st joinStripe
	allocs := testing.AllocsPerRun(100, func() {
		c.takeAwaiters(&st)
		for _, wk := range wks {
			c.addJoin(&st, wk)
		}
	})
	require.Equal(t, 1.0, allocs, "allocations for %d awaiters", len(wks))
	require.True(t, c.awaiter.WillWake(wks[0]))
	n := 0
	for _, w := range c.moreWakers(&st) {
		require.True(t, w.WillWake(wks[n+1]))
		n++
	}
	require.Equal(t, 3, n)
	c.removeJoin(&st, wks[2])
	require.Len(t, c.moreWakers(&st), 2)
	c.removeJoin(&st, wks[1])
	c.removeJoin(&st, wks[3])
	require.False(t, c.hasMore, "no awaiter beyond the first")
	require.Empty(t, st.more, "the stripe keeps nothing for the task")
	w, more := c.takeAwaiters(&st)
	require.True(t, w.WillWake(wks[0]))
	require.Nil(t, more)
}

// moreWakers returns the Wakers of t's awaiters beyond the first, for the
// tests. Called with st, the task's join stripe, locked.
func (t *core[T]) moreWakers(st *joinStripe) []waker.Waker {
	if !t.hasMore {
		return nil
	}
	return st.more[&t.taskBase].ws
}
