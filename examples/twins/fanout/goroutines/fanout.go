package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
)

// fetchFunc fetches the item of id; it gives up with ctx's error when ctx
// ends.
type fetchFunc func(ctx context.Context, id string) (string, error)

// fetchAll fetches every id, at most limit at a time, and returns the items
// in the order of ids. The first error cancels the fetches in flight, starts
// no more, and is returned.
func fetchAll(ctx context.Context, ids []string, limit int, fetch fetchFunc) ([]string, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		items = make([]string, len(ids))
		sem   = make(chan struct{}, limit)
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i, id := range ids {
		sem <- struct{}{} // wait for a free slot
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			item, err := fetch(ctx, id)
			if err != nil {
				once.Do(func() { first = err; cancel(err) })
				return
			}
			items[i] = item
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil { // the caller's ctx ended
		return nil, err
	}
	return items, nil
}

// fetchKey asks the kv server at addr (examples/twins/kv) for the value of
// key, over a connection of its own.
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
