package netsim

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/blitz-go/blitz/backend"
)

// caps are what the simulated backend serves: completions come from the
// model, Multishot accept and buffer selection are served by it directly,
// KindPoll works for both directions, a close cancels the descriptor's ops
// itself, and the file-system kinds are served.
const caps = backend.CapNativeCompletions | backend.CapNativeMultishot | backend.CapNativeBufferGroups |
	backend.CapPoll | backend.CapCancelFD | backend.CapFileOps | backend.CapFtruncate

// firstFD is the first descriptor an incarnation hands out (0 to 2 are the
// standard streams on Unix).
const firstFD = 3

// simBackend is one incarnation's backend.Backend. Its fields are guarded
// by World.mu, except poke, a channel.
type simBackend struct {
	w *World
	h *Host
	// incarnation is h's incarnation this backend belongs to.
	incarnation int
	// closed is set by Close or by the host's death; dead by the death
	// only (Crash, Kill, Restart).
	closed, dead bool
	// fds are the open descriptors: *socket or *ofile. nextFD is the next
	// one to hand out (descriptors are not reused).
	fds    map[backend.FD]any
	nextFD backend.FD
	// inflight are the submitted ops whose final completion is decided
	// but may not have been posted, keyed by op.
	inflight map[*backend.Op]*pending
	// ready are the completions posted and not yet taken by Wait.
	ready []backend.Completion
	// groups are the registered buffer groups.
	groups map[uint16]*bufGroup

	// inWait is set while a goroutine is in Wait; sleeping while it is
	// blocked, until sleepUntil (the zero Time: no limit).
	inWait, sleeping bool
	sleepUntil       time.Time
	// wakePending is set by Wake until a Wait returns.
	wakePending bool
	// poke makes a sleeping Wait look again (a Wake, a new event).
	poke chan struct{}
}

// pending is an op in flight, from Submit to its final completion
// (finish), after which it goes back to the world's free list. Guarded by
// World.mu.
type pending struct {
	op *backend.Op
	// seq numbers the submission: it orders ops in flight, and an event
	// about the op remembers it, since the pending is reused once the op
	// is finished (see event.current).
	seq uint64
	// sock is the socket in whose queues the op waits, if any.
	sock *socket
	// ev is the event that will complete the op (a disk op, a
	// KindTimeout, a connect's timeout); limit its linked timeout. Both
	// are cancelled by finish.
	ev, limit evRef
	// ep is the connection end a connect is making.
	ep *endpoint
}

// newPending returns a pending for op, numbered, from the free list or
// new.
func (w *World) newPending(op *backend.Op) *pending {
	var p *pending
	if n := len(w.freePendings); n > 0 {
		p = w.freePendings[n-1]
		w.freePendings[n-1] = nil
		w.freePendings = w.freePendings[:n-1]
	} else {
		p = new(pending)
	}
	w.seq++
	p.op, p.seq = op, w.seq
	return p
}

// freePending puts p, finished, on the free list.
func (w *World) freePending(p *pending) {
	*p = pending{}
	w.freePendings = append(w.freePendings, p)
}

// newBackend makes the backend of h's current incarnation.
func newBackend(h *Host) *simBackend {
	return &simBackend{
		w: h.w, h: h, incarnation: h.incarnation,
		fds:      make(map[backend.FD]any),
		nextFD:   firstFD,
		inflight: make(map[*backend.Op]*pending),
		groups:   make(map[uint16]*bufGroup),
		poke:     make(chan struct{}, 1),
	}
}

var _ backend.Backend = (*simBackend)(nil)

// Name returns "sim".
func (b *simBackend) Name() string { return "sim" }

// Caps returns what the simulated backend serves.
func (b *simBackend) Caps() backend.Caps { return caps }

// Flush does nothing: submissions reach the model at once.
func (b *simBackend) Flush() error { return nil }

// TrySend sends at once what the socket's send buffer takes, or returns
// ErrWouldBlock when it is full.
func (b *simBackend) TrySend(fd backend.FD, buf []byte) (n int, err error) {
	b.w.locked(func() { n, err = b.trySend(fd, backend.LimitRW(buf)) })
	return n, err
}

// TryRecv takes at once what the socket has received (0: end of stream),
// or returns ErrWouldBlock when nothing is there.
func (b *simBackend) TryRecv(fd backend.FD, buf []byte) (n int, err error) {
	b.w.locked(func() { n, err = b.tryRecv(fd, backend.LimitRW(buf)) })
	return n, err
}

// Submit starts op in the model; see the package doc for what each kind
// does.
func (b *simBackend) Submit(op *backend.Op) (err error) {
	if err := backend.CheckOp(op); err != nil {
		return err
	}
	if err := backend.CheckCaps(op, caps); err != nil {
		return err
	}
	b.w.locked(func() { err = b.submit(op) })
	return err
}

// submit is Submit with the world locked.
func (b *simBackend) submit(op *backend.Op) error {
	if b.closed {
		return backend.ErrClosed
	}
	if b.inflight[op] != nil {
		return backend.NewError(op.Kind.String(), backend.ErrInvalid, fmt.Errorf("op already in flight"))
	}
	p := b.w.newPending(op)
	b.inflight[op] = p
	b.start(p)
	if b.inflight[op] == p && op.Timeout > 0 && op.Kind != backend.KindTimeout {
		b.armLimit(p)
	}
	return nil
}

// start runs op's kind.
func (b *simBackend) start(p *pending) {
	op := p.op
	switch op.Kind {
	case backend.KindNop:
		b.post(b.finish(p, 0, nil))
	case backend.KindTimeout:
		e := b.w.newEvent(evOpTimeout)
		e.b, e.p = b, p
		p.ev = b.w.schedule(b.h, b.w.clock.Add(op.Timeout), e).ref()
	case backend.KindCancel:
		b.startCancel(p)
	case backend.KindClose:
		b.startClose(p)
	case backend.KindOpenAt:
		b.startFileOp(p, nil)
	case backend.KindStatx:
		o, _ := b.fds[op.FD].(*ofile)
		if op.File.Path == "" && b.fds[op.FD] == nil {
			b.post(b.finish(p, 0, oserr("statx", backend.ErrClosed)))
			return
		}
		b.startFileOp(p, o)
	default:
		switch o := b.fds[op.FD].(type) {
		case *socket:
			b.startSocketOp(p, o)
		case *ofile:
			b.startFileOp(p, o)
		default:
			b.post(b.finish(p, 0, oserr(op.Kind.String(), backend.ErrClosed)))
		}
	}
}

// armLimit arms op's linked timeout: if the op is still in flight when it
// expires, it completes with ErrTimeout. A deadline beyond the clock's
// range never expires.
func (b *simBackend) armLimit(p *pending) {
	at := b.w.clock.Add(p.op.Timeout)
	if !at.After(b.w.clock) {
		return
	}
	e := b.w.newEvent(evLimit)
	e.b, e.p = b, p
	p.limit = b.w.schedule(b.h, at, e).ref()
}

// startCancel cancels op.Target, posting its completion before the
// cancel's own.
func (b *simBackend) startCancel(p *pending) {
	t := b.inflight[p.op.Target]
	if t == nil {
		b.post(b.finish(p, 0, backend.ErrNotFound))
		return
	}
	c := b.abort(t, backend.ErrCanceled)
	b.postPair(c, b.finish(p, 0, nil))
}

// startClose closes op.FD after cancelling the ops in flight on it; their
// completions come first, in submission order.
func (b *simBackend) startClose(p *pending) {
	fd := p.op.FD
	if b.fds[fd] == nil {
		b.post(b.finish(p, 0, oserr("close", backend.ErrClosed)))
		return
	}
	cs := b.cancelFD(fd, p)
	b.closeFD(fd)
	b.postAll(append(cs, b.finish(p, 0, nil)))
}

// cancelFD cancels every op in flight on fd but except, returning their
// completions in submission order.
func (b *simBackend) cancelFD(fd backend.FD, except *pending) []backend.Completion {
	var cs []backend.Completion
	for _, q := range b.sortedInflight(func(q *pending) bool {
		return q != except && q.op.FD == fd && usesFD(q.op.Kind)
	}) {
		if b.inflight[q.op] == q { // not finished by an abort before it
			cs = append(cs, b.abort(q, backend.ErrCanceled))
		}
	}
	return cs
}

// usesFD reports whether ops of kind k work on Op.FD.
func usesFD(k backend.Kind) bool {
	switch k {
	case backend.KindNop, backend.KindTimeout, backend.KindCancel, backend.KindOpenAt:
		return false
	}
	return true
}

// abort ends p early with err (ErrCanceled, ErrTimeout), undoing what its
// kind started, and returns its final completion.
func (b *simBackend) abort(p *pending, err error) backend.Completion {
	if p.ep != nil && p.ep.state == epSynSent {
		b.w.forget(p.ep) // a connect given up: its SYN's answer finds nobody
		p.ep.sock.state = sockNew
		p.ep.sock.ep = nil
	}
	return b.finish(p, 0, err)
}

// finish ends p: it is no longer in flight, its events are void, and the
// returned final completion, to post, carries n and err. p goes back to
// the free list: the caller must not use it afterwards.
func (b *simBackend) finish(p *pending, n int, err error) backend.Completion {
	op := p.op
	delete(b.inflight, op)
	p.ev.cancel()
	p.limit.cancel()
	if p.sock != nil {
		p.sock.unqueue(p)
	}
	c := backend.Completion{Op: op, UserData: op.UserData, N: n, Err: err}
	if err != nil && (op.Kind == backend.KindAccept || op.Kind == backend.KindOpenAt) {
		c.FD = backend.InvalidFD
	}
	b.w.freePending(p)
	return c
}

// post makes the completion c visible to Wait at the model clock: through
// an event, so that among completions of one instant the order is the
// seeded tiebreak's.
func (b *simBackend) post(c backend.Completion) {
	e := b.w.newEvent(evPost)
	e.b, e.c = b, c
	b.schedulePost(e)
}

// postPair posts c and then d, in that order, as one event.
func (b *simBackend) postPair(c, d backend.Completion) {
	e := b.w.newEvent(evPost)
	e.b, e.c = b, c
	e.more = append(e.more, d)
	b.schedulePost(e)
}

// postAll posts cs (at least one), in order, as one event.
func (b *simBackend) postAll(cs []backend.Completion) {
	e := b.w.newEvent(evPost)
	e.b, e.c = b, cs[0]
	e.more = append(e.more, cs[1:]...)
	b.schedulePost(e)
}

// schedulePost schedules the evPost e now.
func (b *simBackend) schedulePost(e *event) {
	e = b.w.schedule(b.h, b.w.clock, e)
	b.rescheduled(e.at)
}

// deliver runs the evPost e: its completions are traced and ready.
func (b *simBackend) deliver(e *event) {
	b.trace(&e.c)
	for i := range e.more {
		b.trace(&e.more[i])
	}
	b.ready = append(b.ready, e.c)
	b.ready = append(b.ready, e.more...)
}

// trace emits a completion's event.
func (b *simBackend) trace(c *backend.Completion) {
	if !b.w.tracing() {
		return
	}
	d := b.w.detail()
	d = append(d, c.Op.Kind.String()...)
	d = append(d, " fd="...)
	d = strconv.AppendUint(d, uint64(c.Op.FD), 10)
	d = append(d, " n="...)
	d = strconv.AppendInt(d, int64(c.N), 10)
	if c.Err != nil {
		d = append(d, " err="...)
		d = append(d, c.Err.Error()...)
	}
	if c.More() {
		d = append(d, " more"...)
	}
	b.w.emitDetail(b.h, "complete", d)
}

// sortedInflight returns the ops in flight that keep reports true, in
// submission order.
func (b *simBackend) sortedInflight(keep func(*pending) bool) []*pending {
	var ps []*pending
	for _, p := range b.inflight {
		if keep(p) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(x, y *pending) int { return cmp.Compare(x.seq, y.seq) })
	return ps
}

// sortedSockets returns the open sockets in descriptor order.
func (b *simBackend) sortedSockets() []*socket {
	var ss []*socket
	for _, o := range b.fds {
		if s, ok := o.(*socket); ok {
			ss = append(ss, s)
		}
	}
	slices.SortFunc(ss, func(x, y *socket) int { return cmp.Compare(x.fd, y.fd) })
	return ss
}

// newFD returns a fresh descriptor for o.
func (b *simBackend) newFD(o any) backend.FD {
	fd := b.nextFD
	b.nextFD++
	b.fds[fd] = o
	return fd
}

// Wait returns the completions posted by now; without any it sleeps until
// the world's next event, the timeout, a Wake or (after Close) returns
// ErrClosed. In a synctest bubble the sleep takes no real time.
func (b *simBackend) Wait(out []backend.Completion, timeout time.Duration) (int, error) {
	w := b.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if b.inWait {
		return 0, backend.ErrBusy
	}
	b.inWait = true
	defer func() { b.inWait = false }()
	w.advance()
	var deadline time.Time // zero: none
	if timeout > 0 {
		if d := w.clock.Add(timeout); d.After(w.clock) {
			deadline = d
		}
	}
	for {
		if n := b.take(out); n > 0 || len(out) == 0 {
			b.wakePending = false
			return n, nil
		}
		switch {
		case b.closed:
			return 0, backend.ErrClosed
		case b.wakePending:
			b.wakePending = false
			return 0, nil
		case timeout == 0, !deadline.IsZero() && !w.clock.Before(deadline):
			return 0, nil
		}
		b.sleep(deadline)
		w.advance()
	}
}

// take moves ready completions to out and returns how many. The rest
// move to the front of ready, which keeps its array.
func (b *simBackend) take(out []backend.Completion) int {
	n := copy(out, b.ready)
	rest := copy(b.ready, b.ready[n:])
	clear(b.ready[rest:])
	b.ready = b.ready[:rest]
	return n
}

// sleep releases the world's lock until the earlier of deadline (zero:
// none) and the world's next event, or a poke, and takes it again. It
// wakes for any host's event, since that may cause one of this host's.
func (b *simBackend) sleep(deadline time.Time) {
	until := deadline
	if e := b.w.next(); e != nil && (until.IsZero() || e.at.Before(until)) {
		until = e.at
	}
	select { // a poke from before this sleep is stale: the state was looked at since
	case <-b.poke:
	default:
	}
	b.sleeping, b.sleepUntil = true, until
	b.w.mu.Unlock()
	if until.IsZero() {
		<-b.poke
	} else {
		t := time.NewTimer(time.Until(until))
		select {
		case <-b.poke:
		case <-t.C:
		}
		t.Stop()
	}
	b.w.mu.Lock()
	b.sleeping = false
}

// rescheduled tells a sleeping Wait of an event due at at, if it sleeps
// longer.
func (b *simBackend) rescheduled(at time.Time) {
	if b.sleeping && (b.sleepUntil.IsZero() || at.Before(b.sleepUntil)) {
		b.pokeWait()
	}
}

// pokeWait makes a sleeping Wait look again.
func (b *simBackend) pokeWait() {
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// Wake makes a Wait return now, or the next one at once.
func (b *simBackend) Wake() error {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	if b.closed {
		return backend.ErrClosed
	}
	b.wakePending = true
	b.pokeWait()
	return nil
}

// Close cancels every op in flight (their completions, in submission
// order, stay readable through Wait) and wakes a Wait.
func (b *simBackend) Close() (err error) {
	b.w.locked(func() {
		if b.closed {
			err = backend.ErrClosed
			return
		}
		b.closed = true
		b.cancelAll(backend.ErrCanceled)
		b.pokeWait()
	})
	return err
}

// cancelAll ends every op in flight with err, in submission order.
func (b *simBackend) cancelAll(err error) {
	var cs []backend.Completion
	for _, p := range b.sortedInflight(func(*pending) bool { return true }) {
		if b.inflight[p.op] == p { // not finished by an abort before it
			cs = append(cs, b.abort(p, err))
		}
	}
	if len(cs) > 0 {
		b.postAll(cs)
	}
}

// die ends the incarnation: every op in flight completes with an error
// wrapping ErrClosed, then Wait returns ErrClosed, and every call fails.
func (b *simBackend) die() {
	b.dead = true
	if !b.closed {
		b.closed = true
		b.cancelAll(backend.NewError("host down", backend.ErrClosed, nil))
	}
	for _, fd := range b.sortedFDs() {
		delete(b.fds, fd)
	}
	b.pokeWait()
}

// sortedFDs returns the open descriptors in order.
func (b *simBackend) sortedFDs() []backend.FD {
	fds := make([]backend.FD, 0, len(b.fds))
	for fd := range b.fds {
		fds = append(fds, fd)
	}
	slices.Sort(fds)
	return fds
}

// CloseFD closes fd at once; ops still in flight on it are cancelled.
func (b *simBackend) CloseFD(fd backend.FD) (err error) {
	b.w.locked(func() {
		if b.dead || b.fds[fd] == nil {
			err = oserr("close", backend.ErrClosed)
			return
		}
		if cs := b.cancelFD(fd, nil); len(cs) > 0 {
			b.postAll(cs)
		}
		b.closeFD(fd)
	})
	return err
}

// closeFD releases fd's object: a socket is closed as close(2) would.
func (b *simBackend) closeFD(fd backend.FD) {
	o := b.fds[fd]
	delete(b.fds, fd)
	if s, ok := o.(*socket); ok {
		b.w.closeSocket(s)
	}
}
