package simprims

import (
	"errors"

	"github.com/blitz-go/blitz/channels"
	"github.com/blitz-go/blitz/future"
)

// oneshotPair is one Oneshot channel's two ends and what each saw.
type oneshotPair struct {
	tx channels.OneshotSender[int]
	rx channels.OneshotReceiver[int]
	// sent: the sender's Send returned nil; got: the receiver has the
	// value; closedSeen: the receiver's receive failed with ErrClosed.
	sent, got, closedSeen bool
}

// oneshotWorkload runs pairs Oneshot channels, each with a sender task
// that sends or closes and a receiver task that receives (sometimes with
// a timeout, then again) or closes its end first. It checks that the
// value is received exactly when the Send succeeded, that a closed
// sender shows as ErrClosed, and that no receive waits for ever.
//
//blitz:async
func oneshotWorkload(pairs int) error {
	ps := make([]*oneshotPair, pairs)
	fs := make([]future.Future[error], 0, 2*pairs)
	for i := range ps {
		p := &oneshotPair{}
		p.tx, p.rx = channels.NewOneshot[int]()
		ps[i] = p
		fs = append(fs, p.senderAsync(i+1), p.receiverAsync(i+1))
	}
	if err := future.Await(allAsync(fs)); err != nil {
		return err
	}
	for i, p := range ps {
		if p.sent != p.got || p.got == p.closedSeen {
			return violation("oneshot %d: sent %v, received %v, closed seen %v", i+1, p.sent, p.got, p.closedSeen)
		}
	}
	return nil
}

// sender sends v after a pause, or one time in 4 closes its end.
//
//blitz:async
func (p *oneshotPair) sender(v int) error {
	future.Await(pauseAsync())
	if chance(future.Cx(), 4) {
		p.tx.Close()
		return nil
	}
	err := p.tx.Send(v)
	if err != nil && !errors.Is(err, channels.ErrClosed) {
		return err
	}
	p.sent = err == nil
	return nil
}

// receiver receives the value, with timeouts tried again, or one time in
// 4 closes its end first and then takes whatever was sent before.
//
//blitz:async
func (p *oneshotPair) receiver(want int) error {
	future.Await(pauseAsync())
	if chance(future.Cx(), 4) {
		p.rx.Close()
		v, err := p.rx.TryRecv()
		return p.outcome(want, v, err)
	}
	for {
		if chance(future.Cx(), 2) {
			r := future.Await(withTimeout(future.Cx(), 2, p.rx.Recv()))
			if timedOut(r.Err) {
				continue
			}
			return p.outcome(want, r.Value.Value, errors.Join(r.Err, r.Value.Err))
		}
		v, err := future.Try(p.rx.Recv())
		return p.outcome(want, v, err)
	}
}

// outcome records a receive's result: want, or ErrClosed.
func (p *oneshotPair) outcome(want, v int, err error) error {
	switch {
	case err == nil && v == want:
		p.got = true
	case errors.Is(err, channels.ErrClosed):
		p.closedSeen = true
	default:
		return violation("oneshot: received %d, %v; want %d or ErrClosed", v, err, want)
	}
	return nil
}
