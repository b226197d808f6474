package backend_test

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// Example_op describes operations: a recv with a linked timeout, and one the
// contract refuses before any backend sees it.
func Example_op() {
	buf := make([]byte, 4096)
	recv := &backend.Op{Kind: backend.KindRecv, FD: 7, Buf: buf, Timeout: time.Second, UserData: 42}
	fmt.Println(recv.Kind, backend.CheckOp(recv))

	empty := &backend.Op{Kind: backend.KindSend, FD: 7}
	err := backend.CheckOp(empty)
	fmt.Println(errors.Is(err, backend.ErrInvalid))

	fmt.Println(backend.AddrPort(netip.MustParseAddrPort("127.0.0.1:80")), backend.UnixAddr("/run/s"))
	// Output:
	// recv <nil>
	// true
	// 127.0.0.1:80 unix:/run/s
}
