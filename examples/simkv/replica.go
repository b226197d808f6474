package simkv

//go:generate go tool blitzgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

// Addr is where a replica listens: Client for the clients (the leader
// only), Peer for the leader's replication stream (the followers).
type Addr struct {
	Client, Peer string
}

// Config configures one replica. Replicas[0] is the leader.
type Config struct {
	// Self is this replica's index in Replicas.
	Self int
	// Replicas are the addresses of every replica, the leader first.
	Replicas []Addr
	// LogPath is the replica's log file.
	LogPath string
	// AckBeforeSync is the deliberate bug: the leader answers a PUT as
	// soon as its record is written, before the fsync and before any
	// follower has it, and syncs (then replicates) in the background every
	// FlushInterval: a crash of the leader loses writes it acknowledged.
	AckBeforeSync bool
	// FlushInterval is the period of the background sync of
	// AckBeforeSync (default 50 ms).
	FlushInterval time.Duration
	// CommitTimeout bounds the wait of a PUT for a follower's ack (default
	// 1 s); past it the client is told ERR, an unknown outcome.
	CommitTimeout time.Duration
	// AckTimeout bounds the leader's wait for a follower's HELLO or ACK
	// (default 300 ms); past it the connection is dropped and dialed again.
	AckTimeout time.Duration
	// DialTimeout bounds a connect to a follower (default 500 ms).
	DialTimeout time.Duration
	// Retry is the pause before dialing a follower again, or opening the
	// log again after a failure (default 100 ms).
	Retry time.Duration
	// IdleTimeout closes a connection, of a client or of the leader, that
	// sends nothing for that long (default 10 s).
	IdleTimeout time.Duration
}

// withDefaults returns c with its zero durations set.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.FlushInterval, 50*time.Millisecond)
	def(&c.CommitTimeout, time.Second)
	def(&c.AckTimeout, 300*time.Millisecond)
	def(&c.DialTimeout, 500*time.Millisecond)
	def(&c.Retry, 100*time.Millisecond)
	def(&c.IdleTimeout, 10*time.Second)
	return c
}

// validate checks the fields a replica cannot run without.
func (c Config) validate() error {
	switch {
	case len(c.Replicas) < 2:
		return errors.New("simkv: at least two replicas")
	case c.Self < 0 || c.Self >= len(c.Replicas):
		return fmt.Errorf("simkv: Self %d out of range", c.Self)
	case c.LogPath == "":
		return errors.New("simkv: no LogPath")
	}
	return nil
}

// Replica is one replica of the store, leader or follower by its index.
// Its tasks run on one runtime; the fields under mu are shared by them
// (and by several workers on a real runtime), and mu is never held
// across an await.
type Replica struct {
	cfg Config
	h   blitz.Handle
	// task is the replica's main task (run).
	task blitz.JoinHandle[error]
	// log is the replica's log file, set once the replica's main task has
	// opened it.
	log *wal
	// writeMu is held across the append (and sync) of one entry and
	// across a flush: the file's record order is the index order, and
	// writes and syncs of the log never overlap.
	writeMu syncprim.Mutex
	// changed is notified (NotifyWaiters) whenever entries, stable or
	// commit grow, or the replica becomes fenced.
	changed syncprim.Notify

	mu sync.Mutex
	// entries is the log in memory: entries[i] has index i+1.
	entries []Entry
	// stable is how many entries are synced to this replica's disk; the
	// leader replicates only those.
	stable int
	// match (leader) is, per replica, how many entries it acknowledged as
	// synced; commit is how many entries a majority has synced.
	match  []int
	commit int
	// applied (leader) is how many entries kv reflects.
	applied int
	kv      map[string]string
	// fenced is set when the log could not be written or synced: the
	// replica accepts no more writes until it restarts.
	fenced bool
}

// Start spawns the replica's main task on h's runtime and returns at once;
// the task opens the log, rebuilds the state and serves until the runtime
// shuts down (or, under simulation, its host crashes). Run it again on a
// new runtime after a restart.
func Start(h blitz.Handle, cfg Config) (*Replica, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	r := &Replica{cfg: cfg, h: h, match: make([]int, len(cfg.Replicas)), kv: map[string]string{}}
	r.task = blitz.SpawnOn(h, r.runAsync())
	return r, nil
}

// Wait blocks the calling goroutine (not a task) until the replica's main
// task ends, which it does only on an error (a port it cannot listen on)
// or at the runtime's shutdown, or until ctx ends; it returns the task's
// error, or ctx's.
func (r *Replica) Wait(ctx context.Context) error {
	err, werr := r.task.Wait(ctx)
	if werr != nil {
		return werr
	}
	return err
}

// IsLeader reports whether the replica is the leader.
func (r *Replica) IsLeader() bool { return r.cfg.Self == 0 }

// run opens the log (again and again while it fails), rebuilds the state
// from it, and serves as leader or follower.
//
//blitz:async
func (r *Replica) run() error {
	for {
		w, err := future.Try(openWALAsync(r.cfg.LogPath))
		if err == nil {
			r.log = w
			break
		}
		future.Await(blitz.Sleep(r.cfg.Retry))
	}
	r.recover(r.log.recovered)
	r.log.recovered = nil
	if r.IsLeader() {
		return future.Await(r.leadAsync())
	}
	return future.Await(r.followAsync())
}

// recover rebuilds the in-memory state from the entries of the durable log.
// The leader's durable log holds every entry it ever acknowledged (it syncs
// before replicating, and replicates before answering), and every
// follower's log is a prefix of it (it sends only synced entries), so the
// leader needs nothing from the followers: its log is the authority, and
// all of it counts as committed (an entry not yet on a follower was never
// acknowledged, so a client saw no answer for it and it may take effect
// now). Followers catch up from it when the leader connects.
func (r *Replica) recover(entries []Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = entries
	r.stable = len(entries)
	if r.IsLeader() {
		r.commit = len(entries)
		r.applyLocked(len(entries))
	}
}

// applyLocked applies entries up to index upTo to kv. Called with mu held.
func (r *Replica) applyLocked(upTo int) {
	for ; r.applied < upTo; r.applied++ {
		e := r.entries[r.applied]
		r.kv[e.Key] = e.Value
	}
}

// fence stops the replica's writes after a log failure.
func (r *Replica) fence() {
	r.mu.Lock()
	r.fenced = true
	r.mu.Unlock()
	r.changed.NotifyWaiters()
}

// errFenced is the answer to a write on a fenced replica.
var errFenced = errors.New("simkv: replica fenced after a log failure; restart it")

// appendEntry appends an entry for key and value (the next index) to the
// log and to entries, synced first when sync is set. It returns the
// entry's index.
//
//blitz:async
func (r *Replica) appendEntry(key, value string, sync bool) (int, error) {
	g := future.Await(r.writeMu.Lock())
	defer g.Unlock()
	r.mu.Lock()
	idx := len(r.entries) + 1
	r.mu.Unlock()
	if err := future.Await(r.writeEntryAsync(Entry{Index: idx, Key: key, Value: value}, sync)); err != nil {
		return 0, err
	}
	return idx, nil
}

// writeEntry appends e, the next entry, to the log and to entries; with
// sync, it syncs the log first and counts e stable. The caller holds
// writeMu.
//
//blitz:async
func (r *Replica) writeEntry(e Entry, sync bool) error {
	r.mu.Lock()
	fenced := r.fenced
	r.mu.Unlock()
	if fenced {
		return errFenced
	}
	if err := future.Await(r.log.appendAsync(e)); err != nil {
		if errors.Is(err, errBroken) {
			r.fence()
		}
		return err
	}
	if sync {
		if err := future.Await(r.log.syncAsync()); err != nil {
			r.fence() // what the disk holds is unknown now
			return err
		}
	}
	r.mu.Lock()
	r.entries = append(r.entries, e)
	if sync {
		r.stable = e.Index
	}
	r.mu.Unlock()
	r.changed.NotifyWaiters()
	return nil
}

// flush syncs the entries appended but not yet synced and returns how
// many entries are stable.
//
//blitz:async
func (r *Replica) flush() (int, error) {
	g := future.Await(r.writeMu.Lock())
	defer g.Unlock()
	r.mu.Lock()
	n, stable, fenced := len(r.entries), r.stable, r.fenced
	r.mu.Unlock()
	if fenced {
		return stable, errFenced
	}
	if stable == n {
		return stable, nil
	}
	if err := future.Await(r.log.syncAsync()); err != nil {
		r.fence()
		return stable, err
	}
	r.mu.Lock()
	r.stable = n
	r.mu.Unlock()
	r.changed.NotifyWaiters()
	return n, nil
}
