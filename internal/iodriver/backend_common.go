package iodriver

import (
	"fmt"

	"github.com/blitz-go/blitz/backend"
)

// wrapBackendErr starts a forced backend, wrapping its error with ErrBackend.
func wrapBackendErr(name string, open func() (backend.Backend, error)) (backend.Backend, error) {
	b, err := open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrBackend, name, err)
	}
	return b, nil
}

// multiRing reports whether a backend may run as several instances, one
// per worker, with each socket homed on one of them. io_uring may: an
// instance knows nothing of a descriptor beyond the ops submitted to it.
// So may epoll: its reactor registers a descriptor with the instance its
// first waiting op went to, the socket's home, and the listener's instance
// hands an accepted descriptor over unregistered. kqueue would too (the
// same reactor), but runs one until the macOS runners have measured it;
// poll could as epoll does, but runs one until someone measures whether
// splitting its O(n) scans is worth a thread blocked in poll(2) per
// worker; IOCP binds a socket to one port for its life and runs one.
func multiRing(name string) bool { return name == URing || name == Epoll }

// TestHookBackend, when not nil, wraps every backend instance OpenBackends opens: a
// test's way to inject faults the kernel will not produce on demand (an
// accept whose connection was reset first). Set and cleared only by tests
// that run alone, around their call to blitz.New.
var TestHookBackend func(backend.Backend) backend.Backend

// OpenBackends starts the backend blitz.Config.Backend names, as many instances
// as rings asks (0: one per worker where multiRing allows, else one). It
// returns nil, nil where the platform has no backend and the choice was
// automatic.
func OpenBackends(name string, rings, workers int) ([]backend.Backend, error) {
	b, err := openBackend(name)
	if err != nil || b == nil {
		return nil, err
	}
	bs := []backend.Backend{b}
	if !multiRing(b.Name()) {
		return hookBackends(bs), nil
	}
	if rings == 0 {
		rings = workers
	}
	for len(bs) < rings {
		more, err := openBackend(b.Name())
		if err != nil {
			for _, o := range bs {
				_ = o.Close()
			}
			return nil, err
		}
		bs = append(bs, more)
	}
	return hookBackends(bs), nil
}

// hookBackends applies TestHookBackend to bs, if a test set it.
func hookBackends(bs []backend.Backend) []backend.Backend {
	if TestHookBackend != nil {
		for i, b := range bs {
			bs[i] = TestHookBackend(b)
		}
	}
	return bs
}
