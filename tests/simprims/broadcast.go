package simprims

import (
	"errors"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// broadcastWorkload sends 1..n on a Broadcast of capacity capacity to
// receivers receivers subscribed before the first send, then closes it.
// Each receiver, pausing between receives, must see the values in order,
// each message once, a lag (LaggedError) only for messages it really
// missed, skipping exactly the count it reports, and then ErrClosed after
// the last: what it received plus what it was told it missed is n.
//
//blitz:async
func broadcastWorkload(capacity, receivers, n int) error {
	b := channels.NewBroadcast[int](capacity)
	fs := make([]future.Future[error], 0, receivers)
	for range receivers {
		fs = append(fs, broadcastReceiverAsync(b.Subscribe(), n))
	}
	recv := blitz.Spawn(future.Cx(), allAsync(fs))
	for v := 1; v <= n; v++ {
		future.Await(pauseAsync())
		got, err := b.Send(v)
		if err != nil || got != receivers {
			return violation("broadcast: Send reached %d receivers (%v), want %d", got, err, receivers)
		}
	}
	b.Close()
	rerr, jerr := future.Try(recv)
	return errors.Join(rerr, jerr)
}

// broadcastReceiver receives until ErrClosed and checks what it saw.
//
//blitz:async
func broadcastReceiver(rx *channels.BroadcastReceiver[int], n int) error {
	next := 1 // the value due next
	for {
		future.Await(pauseAsync())
		v, err := future.Try(rx.Recv())
		var lag *channels.LaggedError
		switch {
		case errors.As(err, &lag):
			next += int(lag.Missed)
			continue
		case errors.Is(err, channels.ErrClosed):
			if next != n+1 {
				return violation("broadcast: closed after value %d of %d", next-1, n)
			}
			return nil
		case err != nil:
			return err
		case v != next:
			return violation("broadcast: received %d, want %d", v, next)
		}
		next++
	}
}

// watchWorkload sends 1..n on a Watch, pausing between sends, then closes
// it; receivers wait for changes (sometimes with a timeout) and read the
// value. Each must see values only grow, never the same version twice,
// and last the final value n, before ErrClosed.
//
//blitz:async
func watchWorkload(receivers, n int) error {
	w := channels.NewWatch(0)
	fs := make([]future.Future[error], 0, receivers)
	for range receivers {
		fs = append(fs, watchReceiverAsync(w.Subscribe(), n))
	}
	recv := blitz.Spawn(future.Cx(), allAsync(fs))
	for v := 1; v <= n; v++ {
		future.Await(pauseAsync())
		if err := w.Send(v); err != nil {
			return err
		}
	}
	w.Close()
	rerr, jerr := future.Try(recv)
	if err := errors.Join(rerr, jerr); err != nil {
		return err
	}
	if got := w.Borrow(); got != n {
		return violation("watch: holds %d after the close, want %d", got, n)
	}
	return nil
}

// watchReceiver follows the changes until ErrClosed.
//
//blitz:async
func watchReceiver(rx *channels.WatchReceiver[int], n int) error {
	last := 0
	for {
		future.Await(pauseAsync())
		var err error
		if chance(future.Cx(), 3) {
			r := future.Await(withTimeout(future.Cx(), 2, rx.Changed()))
			if timedOut(r.Err) {
				continue
			}
			err = errors.Join(r.Err, r.Value)
		} else {
			err = future.Await(rx.Changed())
		}
		if errors.Is(err, channels.ErrClosed) {
			if last != n {
				return violation("watch: closed after value %d, the last sent was %d", last, n)
			}
			return nil
		}
		if err != nil {
			return err
		}
		v := rx.BorrowAndUpdate()
		if v <= last {
			return violation("watch: a change from %d to %d", last, v)
		}
		last = v
	}
}
