package main

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"os"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// batch collects the messages of in and hands them to flush in batches: at
// each tick of period, what arrived since the last tick (nothing when
// nothing did). When in is closed or stop completes (a signal) it flushes
// what is left and returns.
//
//blitz:async
func batch(in *channels.Bounded[string], period time.Duration, stop future.Future[future.Result[os.Signal]], flush func([]string)) {
	iv := blitz.NewTicker(period)
	defer iv.Cancel()
	var pending []string
	emit := func() {
		if len(pending) > 0 {
			flush(pending)
			pending = nil
		}
	}
	for {
		select {
		case <-future.OnKeep(iv):
			emit()
		case m := <-future.On(in.Recv()):
			if m.Err != nil { // closed: everything sent was received
				emit()
				return
			}
			pending = append(pending, m.Value)
		case <-future.OnKeep(stop):
			emit()
			return
		}
	}
}
