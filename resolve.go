package blitz

import (
	"context"
	"net"
	"net/netip"
	"sync"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/internal/contain"
	"github.com/blitz-go/blitz/scheduler"
	"github.com/blitz-go/blitz/waker"
)

// Resolve returns a future of the IP addresses of host, looked up with
// net.DefaultResolver (the system's configuration, /etc/hosts and DNS). A
// lookup may block for seconds, so it runs on a goroutine of its own, never
// on a worker; the future wakes its task when the answer is in. Cancelling
// the future cancels the lookup. An IP literal resolves to itself at once.
func Resolve(host string) *ResolveFuture {
	return &ResolveFuture{host: host}
}

// ResolveFuture is the future of Resolve: its pointer is a
// future.Future[future.Result[[]netip.Addr]] and a future.Canceler.
type ResolveFuture struct {
	host    string
	started bool
	done    bool
	cancel  context.CancelFunc
	// sched is the scheduler of the first poll's runtime (nil outside
	// one), to report a panic of the Waker the lookup goroutine calls.
	// Written before that goroutine starts.
	sched *scheduler.Scheduler

	// mu guards the fields the lookup goroutine shares with Poll.
	mu    sync.Mutex
	wk    waker.Waker
	ready bool
	addrs []netip.Addr
	err   error
}

// Poll starts the lookup on the first poll and returns its answer.
func (r *ResolveFuture) Poll(cx *future.Context) (future.Result[[]netip.Addr], bool) {
	if r.done {
		panic(future.ErrPolledAfterCompletion)
	}
	if !r.started {
		r.started = true
		if ip, err := netip.ParseAddr(r.host); err == nil {
			r.done = true
			return future.Ok([]netip.Addr{ip}), true
		}
		if h, ok := Current(cx); ok && h.rt.sim != nil {
			r.done = true // the simulator answers at once
			addrs, err := h.rt.sim.Resolve(r.host)
			if err != nil {
				return future.Fail[[]netip.Addr](err), true
			}
			return future.Ok(addrs), true
		}
		ctx, cancel := context.WithCancel(context.Background())
		r.cancel = cancel
		r.wk = cx.Waker()
		r.sched, _ = cx.Executor().(*scheduler.Scheduler)
		go r.lookup(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready {
		r.done = true
		r.cancel()
		if r.err != nil {
			return future.Fail[[]netip.Addr](r.err), true
		}
		return future.Ok(r.addrs), true
	}
	if wk := cx.Waker(); !r.wk.WillWake(wk) {
		r.wk = wk
	}
	return future.Result[[]netip.Addr]{}, false
}

// lookup runs on its own goroutine.
func (r *ResolveFuture) lookup(ctx context.Context) {
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", r.host)
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	r.mu.Lock()
	r.addrs, r.err, r.ready = addrs, err, true
	wk := r.wk
	r.wk = waker.Waker{}
	r.mu.Unlock()
	contain.WakeReported(r.sched, wk, contain.OfResolver)
}

// Cancel cancels the lookup.
func (r *ResolveFuture) Cancel() {
	if r.cancel != nil {
		r.cancel()
	}
	r.mu.Lock()
	r.wk = waker.Waker{}
	r.mu.Unlock()
	r.done = true
}
