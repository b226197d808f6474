//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd || solaris || aix

package poll_test

import (
	"fmt"
	"time"

	"github.com/blitz-go/blitz/backend"
	poll "github.com/blitz-go/blitz/backend-poll"
)

// Example submits a timeout and a nop and waits for their completions: the
// nop first, then the timeout with ErrTimeout.
func Example() {
	b, err := poll.New()
	if err != nil {
		panic(err)
	}
	defer b.Close()
	timeout := &backend.Op{Kind: backend.KindTimeout, Timeout: 10 * time.Millisecond, UserData: 1}
	nop := &backend.Op{Kind: backend.KindNop, UserData: 2}
	for _, op := range []*backend.Op{timeout, nop} {
		if err := b.Submit(op); err != nil {
			panic(err)
		}
	}
	out := make([]backend.Completion, 8)
	for got := 0; got < 2; {
		n, err := b.Wait(out, -1)
		if err != nil {
			panic(err)
		}
		for _, c := range out[:n] {
			fmt.Println(c.UserData, c.Err)
		}
		got += n
	}
	// Output:
	// 2 <nil>
	// 1 backend: timeout
}
