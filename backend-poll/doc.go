// Package poll is the portable readiness backend: package reactor's
// completion emulation over poll(2). The runtime picks it by itself on
// the Unix systems that have neither io_uring, epoll nor kqueue (illumos,
// Solaris, AIX). On Linux, macOS and the BSDs it runs when asked for by
// name (blitz.Config{Backend: blitz.BackendPoll}), to test it or to
// compare; the native backends there scale better.
//
//	b, err := poll.New()
//	if err != nil {
//		return err
//	}
//	defer b.Close()
//	// Submit ops and Wait for their completions as with any backend.Backend.
//
// The operation logic (queues, timers, cancellation, buffer groups, armed
// receives) is package reactor's, shared with the epoll and kqueue
// backends; see its documentation. This package supplies the poller and
// counts what the poller needs to know.
//
// # Readiness from poll(2)
//
// The reactor wants an edge-triggered poller: a registered descriptor
// reports a direction when it becomes ready, and stays silent while it
// stays so. poll(2) is level-triggered: a readable socket is reported by
// every call until someone reads it, so a plain translation would turn
// the wait into a busy loop around data nobody has asked for yet. Nor can
// the poller find the edges by itself: a direction found ready by two
// polls may have been drained and refilled in between.
//
// So the backend polls by interest. It counts the ops in flight on each
// side of each descriptor: a recv, recvfrom, accept, read, armed receive
// or poll for EventIn waits to read; a send, sendto, connect, write or
// poll for EventOut waits to write. An op counts from the moment Submit
// has handed it to the reactor until Wait returns its final completion.
// The poll set holds a descriptor for a direction only while an op counts
// there, so a readable socket that nobody reads is not polled at all,
// however long its data waits. Registering a descriptor (the reactor does
// it when the first op on it has to wait) adds one report of each
// direction, whatever the counts, since the reactor's contract wants a
// condition already true at registration reported; the report uses it up.
//
// Polling only the directions someone waits on, level-triggered, behaves
// as the edge-triggered registration the reactor expects: on a report the
// reactor runs that side's ops until one would block or none is left, and
// it returns their completions, which uncounts them, before it polls
// again. So each direction still polled at the next poll has an op that
// has just seen EAGAIN, and the next report is the next edge. An op
// counted while another goroutine is blocked in poll(2) without its
// direction wakes that goroutine through a self-pipe, and the poll set is
// rebuilt under the poller's mutex; so do a registration and Wake. No
// report is lost that way, and none repeats for data nobody reads.
//
// # Costs
//
// Every wait rebuilds the poll set, walking the registered descriptors,
// and the kernel scans the set: O(n) per wait, where epoll and kqueue pay
// per event. An op that has to wait while another goroutine is blocked in
// Wait costs that goroutine a wake-up (a byte through the pipe and a
// second poll). Submit and Wait take the poller's mutex to count. A few
// hundred busy descriptors are fine; tens of thousands of connections
// want epoll or kqueue. The runtime runs one instance (Config.IORings
// does not apply), and its PollFD (backend.Pollable) reports no
// descriptor: poll(2) has none of its own for Go's poller to wait on.
//
// New returns an error wrapping backend.ErrUnsupported on systems without
// poll(2).
package poll
