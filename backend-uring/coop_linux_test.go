//go:build linux

package uring

import (
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestCoopTaskrunDetected: kernels from 5.19 run the ring with
// COOP_TASKRUN|TASKRUN_FLAG, and the option turns it off.
func TestCoopTaskrunDetected(t *testing.T) {
	require.Equal(t, kernelAtLeast(5, 19), newTest(t, Options{}).r.coop)
	require.False(t, newTest(t, Options{DisableCoopTaskrun: true}).r.coop)
}

// submitOnOwnThread submits a recv on fd from a goroutine locked to its own
// thread and pushes it to the kernel from there (Flush), so that the
// request's task work belongs to that thread; then it runs idle(stop) on
// the same thread until stop is closed.
func submitOnOwnThread(t *testing.T, b *Backend, fd backend.FD, idle func(stop <-chan struct{})) (*backend.Op, chan struct{}, chan struct{}) {
	op := &backend.Op{Kind: backend.KindRecv, FD: fd, Buf: make([]byte, 16)}
	stop := make(chan struct{})
	submitted, done := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := b.Submit(op)
		if err == nil {
			err = b.Flush()
		}
		submitted <- err
		idle(stop)
	}()
	require.NoError(t, <-submitted)
	return op, stop, done
}

// coopLiveness checks that the completion of a recv whose submitting
// thread is busy elsewhere (idle) still reaches a Wait on another thread,
// long before that thread would have entered the kernel by itself.
func coopLiveness(t *testing.T, idle func(stop <-chan struct{})) {
	for _, o := range []Options{{}, {DisableCoopTaskrun: true}} {
		b := newTest(t, o)
		a, peer := socketPair(t)
		op, stop, done := submitOnOwnThread(t, b, a, idle)
		time.Sleep(20 * time.Millisecond) // the recv is parked in the kernel, its thread idle
		sent := time.Now()
		_, err := unix.Write(int(peer), []byte("ping"))
		require.NoError(t, err)
		out := make([]Completion, 4)
		var got *Completion
		for got == nil && time.Since(sent) < 5*time.Second {
			n, err := b.Wait(out, time.Second)
			require.NoError(t, err)
			for i := range out[:n] {
				if out[i].Op == op {
					got = &out[i]
				}
			}
		}
		took := time.Since(sent)
		close(stop)
		<-done
		t.Logf("coop=%v: the completion came %v after the send", b.r.coop, took)
		require.NotNil(t, got, "coop=%v: the completion never came", b.r.coop)
		require.NoError(t, got.Err)
		require.Equal(t, 4, got.N)
		// The submitting thread idles for up to 5s; a kernel tick (at most
		// 10ms) or Go's preemption signal brings it into the kernel long
		// before.
		require.Less(t, took, time.Second, "coop=%v", b.r.coop)
	}
}

// TestCoopTaskrunBusySubmitter: the submitting thread spins in user space,
// making no system call. Without an interrupt (COOP_TASKRUN) its task
// work runs at its next kernel entry: the timer tick's, or the Go
// runtime's preemption signal.
func TestCoopTaskrunBusySubmitter(t *testing.T) {
	coopLiveness(t, func(stop <-chan struct{}) {
		deadline := time.Now().Add(5 * time.Second)
		for i := 0; ; i++ {
			select { // a non-blocking receive: no system call
			case <-stop:
				return
			default:
			}
			if i%(1<<20) == 0 && time.Now().After(deadline) { // time.Now is a vDSO call, not a kernel entry
				return
			}
		}
	})
}

// TestCoopTaskrunSleepingSubmitter: the submitting thread sleeps in the Go
// scheduler (a futex wait, interruptible): the task work wakes it.
func TestCoopTaskrunSleepingSubmitter(t *testing.T) {
	coopLiveness(t, func(stop <-chan struct{}) { <-stop })
}
