// Package kqueue is the BSD and macOS readiness backend: package reactor's
// completion emulation over kqueue(2). The poller registers each
// descriptor once, with EVFILT_READ and EVFILT_WRITE filters flagged
// EV_CLEAR (edge-triggered), the first time an op on it has to wait. A
// blocked kevent is woken by an EVFILT_USER event triggered with
// NOTE_TRIGGER (darwin, FreeBSD, DragonFly) or, where x/sys lacks
// EVFILT_USER (NetBSD, OpenBSD), by a byte written to a non-blocking pipe
// whose read end is in the kqueue. All operation logic (queues, timers,
// cancellation, buffer groups) is package reactor's; see its documentation.
//
// New returns an error wrapping backend.ErrUnsupported on other platforms.
package kqueue
