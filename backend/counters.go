package backend

// EnterCounter is implemented by a backend that counts its calls into the
// kernel's queue: io_uring_enter on io_uring (submissions and waits), the
// poller's wait (epoll_wait, kevent) on the epoll and kqueue backends. The
// runtime's Metrics report it per ring. EnterCalls may be called by any
// goroutine at any time, also after Close.
type EnterCounter interface {
	EnterCalls() uint64
}
