package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// batch reads the lines of in and hands them to flush in batches: at each
// tick of period, what arrived since the last tick (nothing when nothing
// did). At the end of in, or when it is cancelled (its stop), it flushes
// what is left and returns.
//
//blitz:async
func batch(in *blitz.BufReader, period time.Duration, flush func([]string)) {
	iv := blitz.NewTicker(period)
	defer iv.Cancel()
	var pending []string
	emit := func() {
		if len(pending) > 0 {
			flush(pending)
			pending = nil
		}
	}
	defer emit() // a cancel runs the defers: the last batch is not lost
	for {
		select {
		case <-future.OnKeep(iv):
			emit()
		case line := <-future.On(in.ReadLine()):
			if line.Err != nil { // the end of the input (io.EOF) or a read error
				return
			}
			pending = append(pending, line.Value)
		}
	}
}
