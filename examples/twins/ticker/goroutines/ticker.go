package main

import (
	"context"
	"time"
)

// batch collects the messages of in and hands them to flush in batches: at
// each tick of period, what arrived since the last tick (nothing when
// nothing did). When in is closed or ctx ends it flushes what is left and
// returns.
func batch(ctx context.Context, in <-chan string, period time.Duration, flush func([]string)) {
	t := time.NewTicker(period)
	defer t.Stop()
	var pending []string
	emit := func() {
		if len(pending) > 0 {
			flush(pending)
			pending = nil
		}
	}
	for {
		select {
		case <-t.C:
			emit()
		case m, ok := <-in:
			if !ok {
				emit()
				return
			}
			pending = append(pending, m)
		case <-ctx.Done():
			emit()
			return
		}
	}
}
