// Package backendtest is the conformance suite of the backend contract:
// every backend module calls Run from a conformance_test.go, with a function
// that makes a fresh backend, and Bench from its benchmarks. The suite uses
// only the backend API and the standard library, so it runs unchanged on
// Linux, the BSDs, macOS and Windows (under Wine too), and skips what the
// backend's Caps say it lacks (Unix sockets, KindPoll).
//
// # The harness
//
// Each test makes its own backend and wraps it in a harness that submits
// ops, pumps Wait and keeps an exact account of every op in flight. A
// completion for an op that is not in flight (a stray, a second final
// completion, the hidden CQE of an io_uring linked timeout leaking out), a
// More flag on anything but a Multishot accept, a HasBuffer without data, a
// wrong UserData, or an error that matches no sentinel of package backend
// (or an ErrCanceled or ErrTimeout that is not the bare sentinel) fails the
// test wherever it shows up, not only in the test that looks for it. Waits
// for a completion have a deadline and Wait is called with bounded timeouts,
// so a broken backend fails with a message naming the ops still in flight
// instead of hanging; the tests of Wait(-1) watch the blocked goroutine and
// Wake it to report a failure.
//
// At the end of every test the harness closes the backend and checks the
// Close contract: Close returns; Wait hands back the final completion of
// every op still in flight without blocking, then (0, ErrClosed); Submit and
// a second Close say ErrClosed. Descriptors the test made are closed with
// CloseFD before Close when nothing is in flight, after the drain otherwise.
// The function passed to Run may register its own Close as a cleanup; it
// must accept the ErrClosed of a second Close.
//
// # Independent peers
//
// Where it can, the suite checks a backend against the standard library
// rather than against itself: a net.Conn at the other end of a socket, a
// net.UDPConn sending datagrams, os.ReadFile reading what the backend wrote.
// Where the platform itself does not give what the contract asks (Wine
// reports end of stream where Linux and Windows report a reset that arrived
// before the read), the suite measures the standard library first and asks
// the backend for no more.
//
// # Sizes and timing
//
// testing.Short shrinks the load tests (100 connections instead of 1000,
// fewer rounds of the cancel race and the stress). Timing checks are one
// sided where it matters: a timeout must not fire much earlier than asked
// (20 ms of slack for coarse timers), and may fire up to seconds later on a
// loaded, race-instrumented machine. Most tests run in parallel; the
// allocation test runs alone, and is skipped under -race.
//
// The tests of buffers longer than 4 GiB (a length passed as 32 bits would
// be cut) map the memory without touching it, so they cost address space,
// not memory, and write to the null device rather than to a file. They are
// skipped where the address space or the system cannot give the mapping.
package backendtest
