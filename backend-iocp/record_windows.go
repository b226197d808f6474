//go:build windows

package iocp

import (
	"container/heap"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

// acceptAddrLen is the room AcceptEx needs for each of the two addresses it
// writes: the largest sockaddr plus 16 bytes, as its documentation asks.
const acceptAddrLen = uint32(unsafe.Sizeof(windows.RawSockaddrAny{})) + 16

// record is the heap bookkeeping of one op in flight: the OVERLAPPED the
// kernel writes, and every buffer the kernel reads or writes (WSABUF,
// sockaddrs, the AcceptEx output) until the op's packet is dequeued. Records
// are allocated once, kept alive by Backend.recs (so the garbage collector
// never frees one the kernel holds, whatever the caller drops) and reused
// after their op's final completion.
//
// ov must stay the first field: the port hands back &ov, which is then the
// record's address (see Backend.recordOf).
type record struct {
	ov windows.Overlapped

	// Everything below is guarded by Backend.mu.

	op   *backend.Op // the op; keeps its buffers alive while the kernel uses them
	slot uint32      // index in Backend.recs, fixed for the record's life
	gen  uint32      // bumped at every reuse; with slot it forms op.Internal.Token

	h  windows.Handle // the handle the kernel I/O runs on
	fd *fdState       // its state, nil for ops without one

	active   bool // allocated to op, final completion not yet produced
	inKernel bool // a packet for &ov is owed by the port (counted in Backend.inflight)
	canceled bool // a Cancel, a KindClose or Close asked it to stop
	timedOut bool // its linked timeout expired

	heapIdx  int   // index in Backend.timers, -1 if no timer is armed
	deadline int64 // the timer's expiry, Backend.now() units

	n     uint32                 // byte count of a call that finished at once (unused after)
	wsa   windows.WSABuf         // the buffer of WSARecv/WSASend & co.
	flags uint32                 // WSARecv flags, in and out
	sa    windows.RawSockaddrAny // connect/sendto destination, recvfrom source
	saLen int32                  // its length, written by WSARecvFrom

	acceptBuf  [2 * acceptAddrLen]byte // AcceptEx's local and remote address
	acceptSock windows.Handle          // the socket AcceptEx accepts into

	vec  int // readv/writev: index of the buffer in the kernel
	done int // readv/writev: bytes moved by the earlier buffers
}

// token is the record's identity as stored in op.Internal.Token.
func (r *record) token() uint64 { return uint64(r.gen)<<32 | uint64(r.slot) }

// allocLocked takes a free record (or makes one) for op.
func (b *Backend) allocLocked(op *backend.Op) *record {
	var r *record
	if n := len(b.free); n > 0 {
		r = b.recs[b.free[n-1]]
		b.free = b.free[:n-1]
	} else {
		r = &record{slot: uint32(len(b.recs))}
		b.recs = append(b.recs, r)
	}
	slot, gen := r.slot, r.gen+1
	if gen == 0 {
		gen = 1
	}
	*r = record{slot: slot, gen: gen, op: op, active: true, heapIdx: -1, h: windows.InvalidHandle, acceptSock: windows.InvalidHandle}
	op.Internal.Token = r.token()
	return r
}

// releaseLocked returns r to the free list. Its op and buffers are no longer
// referenced from it.
func (b *Backend) releaseLocked(r *record) {
	r.op = nil
	r.fd = nil
	r.wsa = windows.WSABuf{}
	r.active = false
	b.free = append(b.free, r.slot)
}

// recordOf maps the OVERLAPPED pointer of a dequeued packet back to its
// record. The pointer is the address of the first field of a record that
// b.recs keeps alive; the slot check rejects any pointer that is not one of
// ours, and inKernel one whose packet was already consumed.
func (b *Backend) recordOf(ov *windows.Overlapped) *record {
	if ov == nil {
		return nil
	}
	r := (*record)(unsafe.Pointer(ov))
	if int(r.slot) >= len(b.recs) || b.recs[r.slot] != r || !r.inKernel {
		return nil
	}
	return r
}

// lookupLocked returns the live record of op, or nil when op is not in
// flight here (never submitted, or its final completion was produced).
func (b *Backend) lookupLocked(op *backend.Op) *record {
	slot := uint32(op.Internal.Token)
	if int(slot) >= len(b.recs) {
		return nil
	}
	r := b.recs[slot]
	if !r.active || r.op != op || r.token() != op.Internal.Token {
		return nil
	}
	return r
}

// push appends a completion to the ready queue, which Wait hands out.
func (b *Backend) pushLocked(c backend.Completion) {
	b.ready = append(b.ready, c)
}

// handoutLocked moves up to len(out) ready completions to out. A completion
// without More ends its op's flight: the op may be submitted again.
func (b *Backend) handoutLocked(out []backend.Completion) int {
	n := copy(out, b.ready[b.head:])
	for i := 0; i < n; i++ {
		c := &out[i]
		if c.Flags&backend.More == 0 {
			c.Op.Internal.State &^= stateInFlight
		}
		b.ready[b.head+i] = backend.Completion{}
	}
	b.head += n
	if b.head == len(b.ready) {
		b.ready, b.head = b.ready[:0], 0
	}
	return n
}

// timerHeap orders the records with an armed timer by deadline.
type timerHeap []*record

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].deadline < h[j].deadline }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *timerHeap) Push(x any) {
	r := x.(*record)
	r.heapIdx = len(*h)
	*h = append(*h, r)
}
func (h *timerHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	r.heapIdx = -1
	return r
}

// armLocked starts r's timer at deadline.
func (b *Backend) armLocked(r *record, deadline int64) {
	r.deadline = deadline
	heap.Push(&b.timers, r)
}

// disarmLocked stops r's timer if one is armed.
func (b *Backend) disarmLocked(r *record) {
	if r.heapIdx >= 0 {
		heap.Remove(&b.timers, r.heapIdx)
	}
}
