//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package kqueue_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/blitz-go/blitz/backend"
	kqueue "github.com/blitz-go/blitz/backend-kqueue"
)

// Example writes to a file at an offset and reads it back from the start,
// each operation a completion although kqueue itself only reports
// readiness: the backend makes the call and reports what it did.
func Example() {
	b, err := kqueue.New()
	if err != nil {
		panic(err)
	}
	defer b.Close()
	dir, err := os.MkdirTemp("", "kqueue-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	fd, err := b.OpenFile(filepath.Join(dir, "f"), backend.OpenRead|backend.OpenWrite|backend.OpenCreate, 0o600)
	if err != nil {
		panic(err)
	}
	defer b.CloseFD(fd)

	w := complete(b, &backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("world"), Offset: 3})
	buf := make([]byte, 16)
	r := complete(b, &backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: 0})
	fmt.Println(w.N, w.Err)
	fmt.Printf("%q %v\n", buf[:r.N], r.Err)
	// Output:
	// 5 <nil>
	// "\x00\x00\x00world" <nil>
}

// complete submits op and waits for its completion, the only one in flight.
func complete(b backend.Backend, op *backend.Op) backend.Completion {
	if err := b.Submit(op); err != nil {
		panic(err)
	}
	out := make([]backend.Completion, 1)
	for {
		n, err := b.Wait(out, -1)
		if err != nil {
			panic(err)
		}
		if n == 1 {
			return out[0]
		}
	}
}
