package backend

// RecvArmer is implemented by a backend that can arm a receive on a stream
// socket without an Op: the backend keeps a few bytes for it (a key, the
// descriptor, the group), not an Op of the caller's, so that a server's
// idle connections, each waiting for its next request, cost the caller
// only what it keeps itself. The data lands in a buffer of a group (see
// Buffers), taken when it arrives.
//
// ArmRecv arms one receive on the connected stream socket fd into a buffer
// of group, which must be registered. Its completion comes through Wait
// like an op's, once, with Op nil and UserData key: N is the byte count,
// with HasBuffer and BufferID naming the buffer (the caller releases it),
// or 0 at end of stream; Err is set on failure: ErrNoBuffers when data
// waited and the group had no free buffer, ErrCanceled after CancelRecv,
// a KindClose of fd or Close, or an error of the socket. key must be below
// 1<<ArmKeyBits (ErrInvalid). At most one receive is armed on a descriptor,
// and no KindRecv op may be in flight on it meanwhile (ErrInvalid for a
// second arm). A backend or a kernel that cannot arm returns an error
// matching ErrUnsupported: the caller submits a SelectBuffer KindRecv
// instead.
//
// CancelRecv asks that fd's armed receive end: its completion follows,
// with ErrCanceled, or with its data if that came first. It returns
// ErrNotFound when no receive is armed on fd.
type RecvArmer interface {
	ArmRecv(fd FD, group uint16, key uint64) error
	CancelRecv(fd FD) error
}

// ArmKeyBits is the width of a RecvArmer key.
const ArmKeyBits = 56
