package unixio

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read is read(2) on a non-blocking descriptor (a socket, a pipe): the
// receive of the Unix backends. Any goroutine may call it.
//
// On Linux it is a raw system call, without Go's entersyscall and
// exitsyscall, as the sends are: a call on a non-blocking descriptor
// cannot sleep, so Go has no P to hand over while it runs. An ordinary
// call would also wake Go's sysmon from the deep sleep it takes when every
// P is idle, that is, after each park of a worker: sysmon then looks at the
// Ps every 20 µs for a millisecond or more, and takes the P of any call it
// finds in progress at two looks in a row (a send over loopback delivers to
// the receiver within the call: tens of microseconds), handing the P to
// another thread with a futex wake; the worker, back from the kernel,
// finds its P gone and waits for one. A busy worker wakes sysmon itself
// after a while (see the scheduler's package doc, "Go's sysmon").
//
// Do not use it for a descriptor that may block (a regular file, a
// blocking pipe): the P would stay with the sleeping thread.
func Read(fd int, b []byte) (int, error) {
	p := bufAddr(b)
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(p), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	raceWritten(p, int(n))
	return int(n), nil
}

// bufAddr is the address of b's first byte, nil for an empty b: the buffer
// argument of a raw read or send.
func bufAddr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}
