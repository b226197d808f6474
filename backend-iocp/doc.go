// Package iocp is the blitz backend on Windows I/O completion ports.
//
// New makes one completion port. Sockets (WSASocket, overlapped and not
// inheritable) and files (CreateFile with FILE_FLAG_OVERLAPPED) are
// associated with it when the backend makes them, and every operation is
// the matching overlapped call: AcceptEx into a socket made in advance,
// ConnectEx, WSARecv/WSASend, WSARecvFrom/WSASendTo, ReadFile/WriteFile at
// the offset in the OVERLAPPED. Submit starts the call at once; Wait
// dequeues packets with GetQueuedCompletionStatusEx. Every started call
// completes through the port, synchronous successes included: the backend
// does not set FILE_SKIP_COMPLETION_PORT_ON_SUCCESS, so there is a single
// completion path. A call that fails at once completes through a ready queue
// that Wait empties first.
//
// Memory the kernel writes lives in records: the OVERLAPPED, the WSABUF,
// the sockaddrs and the AcceptEx address buffer are fields of one heap
// record per op in flight, allocated once, reused after the op's final
// completion, and kept alive by the backend's record table, so that neither
// the garbage collector nor a dropped Op can free them while the kernel
// holds them. The OVERLAPPED is the record's first field, so the pointer a
// packet carries is the record's address; it is accepted only if the table
// slot it names holds that very record with a packet owed.
//
// What IOCP lacks is emulated. Multishot accept posts the next AcceptEx
// after each connection. A SelectBuffer recv is a zero-byte WSARecv, which
// holds no buffer while the connection idles, followed by a non-blocking
// recv into a group buffer (sockets are in non-blocking mode for this; the
// mode does not affect overlapped calls). The groups are BufferStacks: their
// memory is made as buffers are first taken, and after a burst the pages of
// the buffers left idle leave the working set (TrimIdle:
// DiscardVirtualMemory, or MEM_RESET and VirtualUnlock where it is missing). Poll supports EventIn only, by
// the same zero-byte read (CapPoll is off). Timeouts and linked timeouts are
// a min-heap of deadlines that bounds Wait's timeout; an expired linked
// timeout calls CancelIoEx and the op reports ErrTimeout. Cancel and Close
// use CancelIoEx, and a KindClose closes the descriptor once its ops have
// completed. Wake posts a packet with a reserved completion key, at most one
// at a time.
package iocp
