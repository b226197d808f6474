//go:build linux

package uring

import (
	"testing"
	"unsafe"

	"github.com/blitz-go/blitz/backend"
	"github.com/stretchr/testify/require"
)

// TestLayout checks the kernel ABI structs against the sizes and offsets of
// include/uapi/linux/io_uring.h.
func TestLayout(t *testing.T) {
	require.EqualValues(t, 64, unsafe.Sizeof(sqe{}))
	require.EqualValues(t, 16, unsafe.Sizeof(cqe{}))
	require.EqualValues(t, 120, unsafe.Sizeof(params{}))
	require.EqualValues(t, 40, unsafe.Sizeof(sqringOffsets{}))
	require.EqualValues(t, 40, unsafe.Sizeof(cqringOffsets{}))
	require.EqualValues(t, 8, unsafe.Sizeof(probeOp{}))
	require.EqualValues(t, 16+256*8, unsafe.Sizeof(probe{}))
	require.EqualValues(t, 16, unsafe.Sizeof(kernelTimespec{}))
	require.EqualValues(t, 24, unsafe.Sizeof(geteventsArg{}))
	require.EqualValues(t, 40, unsafe.Sizeof(bufReg{}))
	require.EqualValues(t, 16, unsafe.Sizeof(ringBuf{}))

	var s sqe
	for _, c := range []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"fd", unsafe.Offsetof(s.FD), 4},
		{"off", unsafe.Offsetof(s.Off), 8},
		{"addr", unsafe.Offsetof(s.Addr), 16},
		{"len", unsafe.Offsetof(s.Len), 24},
		{"op_flags", unsafe.Offsetof(s.OpFlags), 28},
		{"user_data", unsafe.Offsetof(s.UserData), 32},
		{"buf_index", unsafe.Offsetof(s.BufIndex), 40},
		{"splice_fd_in", unsafe.Offsetof(s.SpliceFDIn), 44},
		{"addr3", unsafe.Offsetof(s.Addr3), 48},
	} {
		require.Equal(t, c.want, c.got, "sqe.%s", c.name)
	}
	var p params
	require.EqualValues(t, 40, unsafe.Offsetof(p.SQOff))
	require.EqualValues(t, 80, unsafe.Offsetof(p.CQOff))
	var ts kernelTimespec
	_ = ts
}

func TestToken(t *testing.T) {
	for _, c := range []struct {
		tag  uint64
		gen  uint32
		slot int32
	}{{tagOp, 1, 0}, {tagAux, genMask, 12345}, {tagCancel, 77, 1<<31 - 1}} {
		tag, gen, slot := splitToken(token(c.tag, c.gen, c.slot))
		require.Equal(t, c.tag, tag)
		require.Equal(t, c.gen, gen)
		require.Equal(t, c.slot, slot)
	}
	require.NotZero(t, token(tagOp, 1, 0))
}

// TestRecordIsSmall: the record of an op in flight is what every idle
// connection's pending recv costs the backend; what only some kinds need
// lives in recordExt, made for the slots that serve them.
func TestRecordIsSmall(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(record{}), uintptr(96), "record")
	var s slab
	_, r := s.alloc(&backend.Op{Kind: backend.KindRecv})
	require.Nil(t, r.ext, "a recv's record has no extension")
}
