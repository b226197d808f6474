package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"time"
)

// policy is how retry spaces and bounds its attempts.
type policy struct {
	attempts int           // at most this many attempts
	base     time.Duration // the wait after the first failure
	max      time.Duration // the longest wait
	timeout  time.Duration // bounds each attempt
}

// backoff returns the wait after failed attempt n (from 0): base·2^n, at
// most max, of which half is fixed and half random ("equal jitter").
func (p policy) backoff(n int) time.Duration {
	d := p.max
	if n < 32 {
		d = min(p.max, p.base<<n)
	}
	return d/2 + rand.N(d/2+1)
}

// retry calls attempt until it succeeds, at most p.attempts times, waiting
// p.backoff between attempts. An attempt that panics has failed, with the
// panic as its error. It gives up with ctx's error when ctx ends.
func retry[T any](ctx context.Context, p policy, attempt func(context.Context) (T, error)) (T, error) {
	var zero T
	for n := 0; ; n++ {
		v, err := try(ctx, p.timeout, attempt)
		if err == nil {
			return v, nil
		}
		if n+1 >= p.attempts || ctx.Err() != nil {
			return zero, fmt.Errorf("after %d attempts: %w", n+1, err)
		}
		t := time.NewTimer(p.backoff(n))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return zero, ctx.Err()
		}
	}
}

// try runs one attempt within timeout, turning a panic into an error.
func try[T any](ctx context.Context, timeout time.Duration, attempt func(context.Context) (T, error)) (v T, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("attempt panicked: %v", r)
		}
	}()
	return attempt(ctx)
}

// fetchKey asks the kv server at addr (examples/twins/kv) for the value of
// key.
func fetchKey(ctx context.Context, addr, key string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() }) // unblocks the I/O below
	defer stop()
	if _, err := fmt.Fprintf(c, "GET %s\n", key); err != nil {
		return "", err
	}
	reply, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	reply = strings.TrimSuffix(reply, "\n")
	v, ok := strings.CutPrefix(reply, "VALUE ")
	if !ok {
		return "", fmt.Errorf("%s: %s", key, reply)
	}
	return v, nil
}
