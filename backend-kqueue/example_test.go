//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package kqueue_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/blitz-go/blitz/backend"
	kqueue "github.com/blitz-go/blitz/backend-kqueue"
)

// Example cancels a timeout of an hour: the cancel op completes with nil
// (it reached its target) and the timeout with ErrCanceled, each exactly
// once, in either order.
func Example() {
	b, err := kqueue.New()
	if err != nil {
		panic(err)
	}
	defer b.Close()
	timeout := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour, UserData: 1}
	cancel := &backend.Op{Kind: backend.KindCancel, Target: timeout, UserData: 2}
	for _, op := range []*backend.Op{timeout, cancel} {
		if err := b.Submit(op); err != nil {
			panic(err)
		}
	}
	errs := map[uint64]error{}
	out := make([]backend.Completion, 2)
	for len(errs) < 2 {
		n, err := b.Wait(out, -1)
		if err != nil {
			panic(err)
		}
		for _, c := range out[:n] {
			errs[c.UserData] = c.Err
		}
	}
	fmt.Println("timeout cancelled:", errors.Is(errs[1], backend.ErrCanceled))
	fmt.Println("cancel:", errs[2])
	// Output:
	// timeout cancelled: true
	// cancel: <nil>
}
