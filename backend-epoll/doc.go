// Package epoll is the Linux readiness backend: package reactor's
// completion emulation over epoll(7). The poller registers each descriptor
// once, for EPOLLIN|EPOLLOUT|EPOLLRDHUP edge-triggered, the first time an op
// on it has to wait; an eventfd, level-triggered in the same epoll set and
// drained when reported, wakes a blocked epoll_wait. It reports each
// arrival of data and the peer's close (EPOLLRDHUP), so the reactor's
// armed receives skip the read that would find an emptied socket empty
// (reactor.EdgePerArrival). All operation logic
// (queues, timers, cancellation, buffer groups) is package reactor's; see
// its documentation.
//
// New returns an error wrapping backend.ErrUnsupported on other platforms.
package epoll
