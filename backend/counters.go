package backend

import "time"

// EnterCounter is implemented by a backend that counts its calls into the
// kernel's queue: io_uring_enter on io_uring (submissions and waits), the
// poller's wait (epoll_wait, kevent) on the epoll and kqueue backends. The
// runtime's Metrics report it per ring. EnterCalls may be called by any
// goroutine at any time, also after Close.
type EnterCounter interface {
	EnterCalls() uint64
}

// Trimmer is implemented by a backend that holds memory it can give back
// once it has stayed unused for a while: the buffers a burst of reads
// left behind (the io_uring backend's parked buffers, the epoll, kqueue
// and poll backends' free buffers). The runtime calls TrimIdle from a worker
// that is about to sleep in the backend's Wait; TrimIdle gives back what
// has waited long enough and returns how soon to call it again (0 when
// nothing waits), which bounds that sleep. Any goroutine may call it; it
// does not block beyond short locks.
type Trimmer interface {
	TrimIdle() time.Duration
}
