package simkv

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// maxBatch bounds the entries of one replication round.
const maxBatch = 64

// lead runs the leader: a replicator task per follower, the background
// flusher of AckBeforeSync, and the client server.
//
//blitz:async
func (r *Replica) lead() error {
	l, err := blitz.ListenTCP(r.h, r.cfg.Replicas[r.cfg.Self].Client)
	if err != nil {
		return err
	}
	for j := range r.cfg.Replicas {
		if j != r.cfg.Self {
			blitz.Spawn(future.Cx(), r.replicateAsync(j)).Detach()
		}
	}
	if r.cfg.AckBeforeSync {
		blitz.Spawn(future.Cx(), r.flusherAsync()).Detach()
	}
	stats := future.Await(blitz.Serve(l, r.handleClientAsync, blitz.ServeConfig{}))
	return stats.Err
}

// handleClient answers the commands of one client connection, one at a
// time, until the client closes it or stays idle for IdleTimeout.
//
//blitz:async
func (r *Replica) handleClient(c *blitz.TCPStream) error {
	defer c.Close()
	rd := blitz.NewBufReader(c, 0)
	for {
		line, err := future.Try(blitz.TryTimeout(r.cfg.IdleTimeout, rd.ReadLine()))
		if err != nil {
			return nil // the client left, or idled too long
		}
		reply := future.Await(r.doAsync(line))
		if _, err := future.Try(c.WriteAll([]byte(reply + "\n"))); err != nil {
			return err
		}
	}
}

// do runs one command line and returns its reply: "VALUE v" or
// "NOT_FOUND" to a GET, "OK" to a PUT, "ERR ..." otherwise. An ERR to a
// PUT is an unknown outcome: the write may still take effect.
//
//blitz:async
func (r *Replica) do(line string) string {
	cmd, args, _ := strings.Cut(line, " ")
	switch cmd {
	case "GET":
		if !validToken(args) {
			return "ERR " + errBadToken.Error()
		}
		return r.get(args)
	case "PUT":
		k, v, _ := strings.Cut(args, " ")
		if !validToken(k) || !validToken(v) {
			return "ERR " + errBadToken.Error()
		}
		if err := future.Await(r.putAsync(k, v)); err != nil {
			return "ERR " + err.Error()
		}
		return "OK"
	}
	return "ERR unknown command " + strconv.Quote(cmd)
}

// get reads key from the applied state: only committed entries (or, with
// AckBeforeSync, every acknowledged one).
func (r *Replica) get(key string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.kv[key]; ok {
		return "VALUE " + v
	}
	return "NOT_FOUND"
}

// errCommitTimeout is the answer to a PUT that no follower acknowledged
// in CommitTimeout.
var errCommitTimeout = errors.New("simkv: not replicated in time")

// put appends the write to the log, synced, and waits until a follower has
// it too (a majority of three), by which time it is applied; then the
// client may be told OK. With AckBeforeSync (the bug) it applies the write
// and returns at once, leaving the sync and the replication to the
// flusher.
//
//blitz:async
func (r *Replica) put(key, value string) error {
	idx, err := future.Try(r.appendEntryAsync(key, value, !r.cfg.AckBeforeSync))
	if err != nil {
		return err
	}
	if r.cfg.AckBeforeSync {
		r.mu.Lock()
		r.applyLocked(idx)
		r.mu.Unlock()
		return nil
	}
	return future.Await(r.waitAppliedAsync(idx, time.Now().Add(r.cfg.CommitTimeout)))
}

// waitApplied waits until entry idx is applied, or until deadline.
//
//blitz:async
func (r *Replica) waitApplied(idx int, deadline time.Time) error {
	for {
		changed := r.changed.Notified() // made before the check: no wake is missed
		r.mu.Lock()
		applied, fenced := r.applied, r.fenced
		r.mu.Unlock()
		if applied >= idx {
			return nil
		}
		if fenced {
			return errFenced
		}
		if _, err := future.Try(blitz.Deadline(deadline, changed)); err != nil {
			return errCommitTimeout
		}
	}
}

// flusher (AckBeforeSync only) syncs the log every FlushInterval, after
// which the replicators send the new entries.
//
//blitz:async
func (r *Replica) flusher() {
	for {
		future.Await(blitz.Sleep(r.cfg.FlushInterval))
		if _, err := future.Try(r.flushAsync()); err != nil {
			return // fenced
		}
	}
}

// replicate keeps follower j up to date: it connects, feeds it entries
// until the connection fails, and connects again after a pause.
//
//blitz:async
func (r *Replica) replicate(j int) {
	for {
		c, err := future.Try(blitz.DialTCP(r.h, r.cfg.Replicas[j].Peer, r.cfg.DialTimeout))
		if err == nil {
			future.Await(r.feedAsync(j, c))
			c.Close()
		}
		future.Await(blitz.Sleep(r.cfg.Retry))
	}
}

// feed runs the replication protocol on one connection to follower j: the
// follower says how many entries it holds (HELLO n); then, round after
// round, the leader sends the stable entries the follower lacks (ENTRY
// lines, then FLUSH) and the follower answers how many it holds synced
// (ACK n). A silence longer than AckTimeout ends the connection.
//
//blitz:async
func (r *Replica) feed(j int, c *blitz.TCPStream) error {
	rd := blitz.NewBufReader(c, 0)
	line, err := future.Try(blitz.TryTimeout(r.cfg.AckTimeout, rd.ReadLine()))
	if err != nil {
		return err
	}
	n, err := parseCount("HELLO", line)
	if err != nil {
		return err
	}
	if err := r.setMatch(j, n); err != nil {
		return err
	}
	next := n + 1
	for {
		changed := r.changed.Notified()
		batch := r.stableFrom(next)
		if len(batch) == 0 {
			future.Await(blitz.Timeout(r.cfg.IdleTimeout/2, changed))
			continue
		}
		if _, err := future.Try(c.WriteAll(encodeBatch(batch))); err != nil {
			return err
		}
		line, err := future.Try(blitz.TryTimeout(r.cfg.AckTimeout, rd.ReadLine()))
		if err != nil {
			return err
		}
		m, err := parseCount("ACK", line)
		if err != nil {
			return err
		}
		if err := r.setMatch(j, m); err != nil {
			return err
		}
		next = m + 1
	}
}

// stableFrom returns up to maxBatch stable entries from index next.
func (r *Replica) stableFrom(next int) []Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	end := min(r.stable, next-1+maxBatch)
	if next > end {
		return nil
	}
	return append([]Entry(nil), r.entries[next-1:end]...)
}

// setMatch records that follower j holds n entries synced, and advances
// the commit index (and the state) to what the leader and one follower
// hold. A follower claiming more than the leader's stable entries breaks
// the protocol's invariant: the connection is dropped.
func (r *Replica) setMatch(j, n int) error {
	r.mu.Lock()
	if n > r.stable {
		r.mu.Unlock()
		return fmt.Errorf("simkv: follower %d claims %d entries, the leader has %d stable", j, n, r.stable)
	}
	r.match[j] = max(r.match[j], n)
	best := majorityMatch(r.match, r.cfg.Self, r.stable)
	grew := best > r.commit
	if grew {
		r.commit = best
		r.applyLocked(best)
	}
	r.mu.Unlock()
	if grew {
		r.changed.NotifyWaiters()
	}
	return nil
}

// majorityMatch is the highest index that a majority of the replicas
// hold synced: the leader (self) holds stable, the others what match says.
func majorityMatch(match []int, self, stable int) int {
	held := slices.Clone(match)
	held[self] = stable
	slices.Sort(held)
	return held[(len(held)-1)/2] // the majority's lowest, from the top
}

// encodeBatch is a replication round: an ENTRY line per entry, then FLUSH.
func encodeBatch(batch []Entry) []byte {
	var b []byte
	for _, e := range batch {
		b = append(b, "ENTRY "...)
		b = append(b, e.body()...)
		b = append(b, '\n')
	}
	return append(b, "FLUSH\n"...)
}

// parseCount parses "WORD n".
func parseCount(word, line string) (int, error) {
	w, num, _ := strings.Cut(line, " ")
	n, err := strconv.Atoi(num)
	if w != word || err != nil || n < 0 {
		return 0, fmt.Errorf("simkv: want %s n, got %q", word, line)
	}
	return n, nil
}
