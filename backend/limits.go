package backend

// MaxRW is the most bytes one op transfers. A backend asks the kernel for
// at most MaxRW bytes in one recv, send, recvfrom, sendto, read, write,
// readv or writev (and TrySend, TryRecv), whatever the length of Buf or
// the sum of Bufs: a larger buffer gives a short count, N <= MaxRW, and the
// caller goes on with the rest as after any short transfer. Go's own poller
// keeps the same limit. It is well inside what every kernel takes in one
// call: io_uring's and Windows' lengths are 32 bits (a longer one would be
// cut modulo 4 GiB), Linux moves at most 2 GiB less a page per call.
//
// A datagram cannot be cut: one longer than MaxRW fails with the kernel's
// ErrMessageSize, as any datagram too long for its socket does.
const MaxRW = 1 << 30

// MaxIOV is the most buffers a readv or writev hands to the kernel in one
// call (IOV_MAX on Linux, the BSDs and macOS): an op with more of them
// transfers from the first MaxIOV only, a short count that the caller
// continues from.
const MaxIOV = 1024

// LimitRW returns b cut to MaxRW bytes: the buffer a backend gives the
// kernel for a recv, send, read or write of b.
func LimitRW(b []byte) []byte {
	if len(b) > MaxRW {
		return b[:MaxRW]
	}
	return b
}

// LimitVec returns bufs cut to MaxIOV buffers and MaxRW bytes in all: the
// buffers a backend gives the kernel for a readv or writev of bufs. Within
// the limits it returns bufs itself; beyond them a prefix of bufs, or, when
// a buffer must be shortened, a new slice (bufs is not modified).
func LimitVec(bufs [][]byte) [][]byte {
	if len(bufs) > MaxIOV {
		bufs = bufs[:MaxIOV]
	}
	total := 0
	for i, b := range bufs {
		if len(b) > MaxRW-total {
			out := make([][]byte, i+1)
			copy(out, bufs[:i])
			out[i] = b[:MaxRW-total]
			return out
		}
		total += len(b)
	}
	return bufs
}
