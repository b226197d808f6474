package httpserver

import (
	"testing"
	"unsafe"
)

// TestIdleConnSize pins what an idle keep-alive connection holds beside
// its task and its socket: the conn record (the 176-byte size class; the
// request state, active, exists only while a request is in progress).
func TestIdleConnSize(t *testing.T) {
	if n := unsafe.Sizeof(conn{}); n > 176 {
		t.Errorf("conn is %d bytes, want at most 176", n)
	}
}
