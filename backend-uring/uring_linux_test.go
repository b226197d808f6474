//go:build linux

package uring

import (
	"bytes"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// socketPair returns a connected non-blocking Unix stream pair, closed at
// the end of the test.
func socketPair(t testing.TB) (backend.FD, backend.FD) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return backend.FD(fds[0]), backend.FD(fds[1])
}

// collect waits until every op in want has its final completion, and
// returns all completions in arrival order.
func collect(t testing.TB, b *Backend, want ...*backend.Op) []Completion {
	t.Helper()
	left := map[*backend.Op]bool{}
	for _, op := range want {
		left[op] = true
	}
	var all []Completion
	out := make([]Completion, 16)
	deadline := time.Now().Add(10 * time.Second)
	for len(left) > 0 {
		require.True(t, time.Now().Before(deadline), "ops still in flight: %d", len(left))
		n, err := b.Wait(out, 100*time.Millisecond)
		require.NoError(t, err)
		for _, c := range out[:n] {
			all = append(all, c)
			if !c.More() {
				require.True(t, left[c.Op], "unexpected final completion of %v", c.Op.Kind)
				delete(left, c.Op)
			}
		}
	}
	return all
}

// TestSetupRefused runs itself in a child process under a seccomp filter
// that makes io_uring_setup fail with EPERM: New must then fail with an
// error wrapping backend.ErrUnsupported that keeps the errno.
func TestSetupRefused(t *testing.T) {
	if os.Getenv("URING_DENY_CHILD") == "1" {
		if err := DenySetupForTest(); err != nil {
			t.Fatalf("DenySetupForTest: %v", err)
		}
		_, err := New(Options{})
		var be *backend.Error
		if !errors.Is(err, backend.ErrUnsupported) || !errors.As(err, &be) || !errors.Is(err, unix.EPERM) {
			t.Fatalf("New under seccomp: %v", err)
		}
		return
	}
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("seccomp filter written for amd64 and arm64 only")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSetupRefused$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "URING_DENY_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestSetupRefused")
}

// TestGCSafety: the buffers of ops in flight are referenced only by the Op
// (which only the backend holds); repeated collections while the kernel
// holds them must not free them.
func TestGCSafety(t *testing.T) {
	b := newTest(t, Options{})
	const n = 32
	type pair struct{ a, z backend.FD }
	pairs := make([]pair, n)
	for i := range pairs {
		pairs[i].a, pairs[i].z = socketPair(t)
	}
	submit := func(i int) {
		// The Op and its buffer escape only into the backend.
		require.NoError(t, b.Submit(&backend.Op{Kind: backend.KindRecv, FD: pairs[i].a, Buf: make([]byte, 4096),
			UserData: uint64(i)}))
	}
	for i := range n {
		submit(i)
	}
	for range 5 {
		runtime.GC()
	}
	for range 1024 {
		gcSink = bytes.Repeat([]byte{0xee}, 4096) // reuse freed memory, if any was freed
	}
	gcSink = nil
	runtime.GC()
	for i := range n {
		msg := bytes.Repeat([]byte{byte(i)}, 100+i)
		_, err := unix.Write(int(pairs[i].z), msg)
		require.NoError(t, err)
		runtime.GC()
	}
	out := make([]Completion, n)
	got := 0
	for got < n {
		k, err := b.Wait(out, 5*time.Second)
		require.NoError(t, err)
		require.NotZero(t, k)
		for _, c := range out[:k] {
			i := int(c.UserData)
			require.NoError(t, c.Err)
			require.Equal(t, bytes.Repeat([]byte{byte(i)}, 100+i), c.Op.Buf[:c.N])
			got++
		}
		runtime.GC()
	}
}

// gcSink keeps the garbage of TestGCSafety from being optimized away.
var gcSink []byte

// TestCQOverflow completes more ops than the CQ holds before any Wait: the
// kernel keeps the rest (NODROP) and Wait gets every one.
func TestCQOverflow(t *testing.T) {
	b := newTest(t, Options{Entries: 8, CQEntries: 16})
	const n = 200
	ops := make([]backend.Op, n)
	for i := range ops {
		ops[i] = backend.Op{Kind: backend.KindNop, UserData: uint64(i)}
		require.NoError(t, b.Submit(&ops[i]))
	}
	require.NoError(t, b.Flush())
	require.True(t, b.r.overflowed(), "the CQ did not overflow")
	seen := make([]bool, n)
	out := make([]Completion, 7)
	for got := 0; got < n; {
		k, err := b.Wait(out, 5*time.Second)
		require.NoError(t, err)
		require.NotZero(t, k)
		for _, c := range out[:k] {
			require.False(t, seen[c.UserData])
			seen[c.UserData] = true
			got++
		}
	}
}

// TestCloseInFlight closes the backend with recvs, a multishot accept and
// timeouts in flight: every op completes exactly once through Wait, then
// ErrClosed.
func TestCloseInFlight(t *testing.T) {
	for _, f := range fallbacks {
		t.Run(f.name, func(t *testing.T) {
			b, err := New(f.o)
			require.NoError(t, err)
			var ops []*backend.Op
			for range 10 {
				a, _ := socketPair(t)
				ops = append(ops, &backend.Op{Kind: backend.KindRecv, FD: a, Buf: make([]byte, 8)},
					&backend.Op{Kind: backend.KindRecv, FD: a, Buf: make([]byte, 8), Timeout: time.Hour})
			}
			ops = append(ops, &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour})
			ln := listener(t, b)
			ops = append(ops, &backend.Op{Kind: backend.KindAccept, FD: ln, Flags: backend.Multishot})
			for _, op := range ops {
				require.NoError(t, b.Submit(op))
			}
			require.NoError(t, b.Flush())
			time.Sleep(10 * time.Millisecond)
			require.NoError(t, b.Close())
			require.ErrorIs(t, b.Close(), backend.ErrClosed)
			require.ErrorIs(t, b.Submit(&backend.Op{Kind: backend.KindNop}), backend.ErrClosed)
			seen := map[*backend.Op]int{}
			out := make([]Completion, 4)
			for {
				n, err := b.Wait(out, -1)
				if err != nil {
					require.ErrorIs(t, err, backend.ErrClosed)
					break
				}
				for _, c := range out[:n] {
					require.ErrorIs(t, c.Err, backend.ErrCanceled)
					seen[c.Op]++
				}
			}
			require.Len(t, seen, len(ops))
			for _, op := range ops {
				require.Equal(t, 1, seen[op])
			}
		})
	}
}

// listener returns a listening TCP socket on loopback.
func listener(t testing.TB, b *Backend) backend.FD {
	t.Helper()
	fd, err := b.Socket(backend.FamilyInet4, backend.Stream)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(int(fd)) })
	require.NoError(t, b.Bind(fd, backend.Addr{Family: backend.FamilyInet4, IP: loopback0}))
	require.NoError(t, b.Listen(fd, 128))
	return fd
}

// TestCloseOrder: a KindClose on a descriptor with a recv in flight
// delivers the recv's completion first, in both close modes.
func TestCloseOrder(t *testing.T) {
	for _, o := range []Options{{}, {DisableCancelFD: true}, {DisableProvideBuffers: true}} {
		b := newTest(t, o)
		for range 50 {
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			r1 := &backend.Op{Kind: backend.KindRecv, FD: backend.FD(fds[0]), Buf: make([]byte, 8)}
			r2 := &backend.Op{Kind: backend.KindRecv, FD: backend.FD(fds[0]), Buf: make([]byte, 8), Timeout: time.Hour}
			cl := &backend.Op{Kind: backend.KindClose, FD: backend.FD(fds[0])}
			require.NoError(t, b.Submit(r1))
			require.NoError(t, b.Submit(r2))
			require.NoError(t, b.Submit(cl))
			all := collect(t, b, r1, r2, cl)
			require.Len(t, all, 3)
			require.Equal(t, cl, all[2].Op, "close completed before the ops on its fd")
			require.NoError(t, all[2].Err)
			for _, c := range all[:2] {
				require.ErrorIs(t, c.Err, backend.ErrCanceled)
			}
			unix.Close(fds[1])
		}
	}
}

// TestLinkedTimeoutRace submits recvs whose linked timeouts fire while data
// arrives and cancels race them: every op completes exactly once, with data,
// ErrTimeout or ErrCanceled.
func TestLinkedTimeoutRace(t *testing.T) {
	for _, o := range []Options{{}, {DisableExtArg: true, DisableProvideBuffers: true}} {
		b := newTest(t, o)
		var wg sync.WaitGroup
		rounds := 300
		if testing.Short() {
			rounds = 50
		}
		for i := range rounds {
			a, z := socketPair(t)
			recv := &backend.Op{Kind: backend.KindRecv, FD: a, Buf: make([]byte, 8), Timeout: time.Duration(i%7) * 50 * time.Microsecond}
			cancel := &backend.Op{Kind: backend.KindCancel, Target: recv}
			require.NoError(t, b.Submit(recv))
			wg.Add(1)
			go func() {
				defer wg.Done()
				unix.Write(int(z), []byte("x"))
			}()
			if i%2 == 0 {
				require.NoError(t, b.Submit(cancel))
				for _, c := range collect(t, b, recv, cancel) {
					if c.Op == cancel {
						if c.Err != nil {
							require.ErrorIs(t, c.Err, backend.ErrNotFound)
						}
						continue
					}
					checkRecvResult(t, c)
				}
			} else {
				checkRecvResult(t, collect(t, b, recv)[0])
			}
			wg.Wait()
		}
	}
}

func checkRecvResult(t *testing.T, c Completion) {
	t.Helper()
	switch {
	case c.Err == nil:
		require.Equal(t, "x", string(c.Op.Buf[:c.N]))
	case errors.Is(c.Err, backend.ErrTimeout), errors.Is(c.Err, backend.ErrCanceled):
	default:
		t.Fatalf("recv: %v", c.Err)
	}
}

// TestQueuedTimeout: a recv queued behind another on its socket still
// times out at its own deadline.
func TestQueuedTimeout(t *testing.T) {
	b := newTest(t, Options{})
	a, _ := socketPair(t)
	r1 := &backend.Op{Kind: backend.KindRecv, FD: a, Buf: make([]byte, 8)}
	r2 := &backend.Op{Kind: backend.KindRecv, FD: a, Buf: make([]byte, 8), Timeout: 20 * time.Millisecond}
	require.NoError(t, b.Submit(r1))
	require.NoError(t, b.Submit(r2))
	start := time.Now()
	c := collect(t, b, r2)
	require.ErrorIs(t, c[0].Err, backend.ErrTimeout)
	require.Less(t, time.Since(start), 2*time.Second)
	cancel := &backend.Op{Kind: backend.KindCancel, Target: r1}
	require.NoError(t, b.Submit(cancel))
	collect(t, b, r1, cancel)
}

// TestMultishotTimeout: a multishot accept with a linked timeout ends with
// ErrTimeout, natively and emulated.
func TestMultishotTimeout(t *testing.T) {
	for _, o := range []Options{{}, {DisableMultishotAccept: true}} {
		b := newTest(t, o)
		ln := listener(t, b)
		acc := &backend.Op{Kind: backend.KindAccept, FD: ln, Flags: backend.Multishot, Timeout: 30 * time.Millisecond}
		require.NoError(t, b.Submit(acc))
		all := collect(t, b, acc)
		require.ErrorIs(t, all[len(all)-1].Err, backend.ErrTimeout)
	}
}

// TestWaitBusyAndWake: a second concurrent Wait gets ErrBusy; Wake ends a
// blocked Wait; many Wakes coalesce.
func TestWaitBusyAndWake(t *testing.T) {
	b := newTest(t, Options{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		n, err := b.Wait(make([]Completion, 1), -1)
		require.NoError(t, err)
		require.Zero(t, n)
	}()
	time.Sleep(20 * time.Millisecond)
	_, err := b.Wait(make([]Completion, 1), 0)
	require.ErrorIs(t, err, backend.ErrBusy)
	require.NoError(t, b.Wake())
	<-done
	for range 10 {
		require.NoError(t, b.Wake())
	}
	n, err := b.Wait(make([]Completion, 1), time.Second)
	require.NoError(t, err)
	require.Zero(t, n)
	start := time.Now()
	n, err = b.Wait(make([]Completion, 1), 30*time.Millisecond)
	require.NoError(t, err)
	require.Zero(t, n)
	require.GreaterOrEqual(t, time.Since(start), 25*time.Millisecond, "wakes did not coalesce")
}

// TestSubmitWhileWaiting: an op submitted while Wait blocks starts at once.
func TestSubmitWhileWaiting(t *testing.T) {
	for _, o := range []Options{{}, {DisableExtArg: true}} {
		b := newTest(t, o)
		got := make(chan Completion, 1)
		go func() {
			out := make([]Completion, 1)
			for {
				n, err := b.Wait(out, 5*time.Second)
				if err != nil || n == 1 {
					got <- out[0]
					return
				}
			}
		}()
		time.Sleep(20 * time.Millisecond)
		start := time.Now()
		require.NoError(t, b.Submit(&backend.Op{Kind: backend.KindTimeout, Timeout: time.Millisecond}))
		c := <-got
		require.ErrorIs(t, c.Err, backend.ErrTimeout)
		require.Less(t, time.Since(start), time.Second)
	}
}

// TestZeroAllocs: steady-state round trips allocate nothing.
func TestZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := newTest(t, Options{})
	out := make([]Completion, 4)
	nop := &backend.Op{Kind: backend.KindNop}
	a, z := socketPair(t)
	rbuf, sbuf := make([]byte, 64), make([]byte, 64)
	send := &backend.Op{Kind: backend.KindSend, FD: z, Buf: sbuf}
	recv := &backend.Op{Kind: backend.KindRecv, FD: a, Buf: rbuf, Timeout: time.Second}
	require.NoError(t, b.RegisterBufferGroup(1, 4, 64))
	sel := &backend.Op{Kind: backend.KindRecv, FD: a, Flags: backend.SelectBuffer, BufferGroup: 1}
	roundTrip := func(ops ...*backend.Op) {
		for _, op := range ops {
			if err := b.Submit(op); err != nil {
				t.Fatal(err)
			}
		}
		for left := len(ops); left > 0; {
			n, err := b.Wait(out, -1)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range out[:n] {
				if c.Err != nil {
					t.Fatal(c.Err)
				}
				if c.Flags&backend.HasBuffer != 0 {
					b.ReleaseBuffer(1, c.BufferID)
				}
			}
			left -= n
		}
	}
	roundTrip(nop)
	roundTrip(recv, send)
	roundTrip(sel, send)
	require.Zero(t, testing.AllocsPerRun(200, func() { roundTrip(nop) }), "nop")
	require.Zero(t, testing.AllocsPerRun(200, func() { roundTrip(recv, send) }), "recv+send")
	require.Zero(t, testing.AllocsPerRun(200, func() { roundTrip(sel, send) }), "select recv+send")
}

var loopback0 = netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), 0)

// TestPollFirstDetected: kernels from 5.19 take the PollFirst hint (the
// conformance suite checks that results do not change with it), and the
// option turns it off.
func TestPollFirstDetected(t *testing.T) {
	require.Equal(t, kernelAtLeast(5, 19), newTest(t, Options{}).pollFirst)
	require.False(t, newTest(t, Options{DisablePollFirst: true}).pollFirst)
}
