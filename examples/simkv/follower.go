package simkv

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// follow runs a follower: it serves the leader's replication connections.
//
//blitz:async
func (r *Replica) follow() error {
	l, err := blitz.ListenTCP(r.h, r.cfg.Replicas[r.cfg.Self].Peer)
	if err != nil {
		return err
	}
	stats := future.Await(blitz.Serve(l, r.handlePeerAsync, blitz.ServeConfig{}))
	return stats.Err
}

// handlePeer is the follower's side of the replication protocol (see
// feed): HELLO with the entries it holds synced, then for each round the
// entries appended and, at FLUSH, synced and acknowledged. A stale
// connection of the leader may still be open beside a new one; writeMu
// and the index checks of acceptEntry keep them from interleaving
// entries.
//
//blitz:async
func (r *Replica) handlePeer(c *blitz.TCPStream) error {
	defer c.Close()
	r.mu.Lock()
	hello := "HELLO " + strconv.Itoa(r.stable) + "\n"
	r.mu.Unlock()
	if _, err := future.Try(c.WriteAll([]byte(hello))); err != nil {
		return err
	}
	rd := blitz.NewBufReader(c, 0)
	for {
		line, err := future.Try(blitz.TryTimeout(r.cfg.IdleTimeout, rd.ReadLine()))
		if err != nil {
			return nil // the leader left, or idled too long
		}
		switch {
		case line == "FLUSH":
			n, err := future.Try(r.flushAsync())
			if err != nil {
				return err
			}
			if _, err := future.Try(c.WriteAll([]byte("ACK " + strconv.Itoa(n) + "\n"))); err != nil {
				return err
			}
		case strings.HasPrefix(line, "ENTRY "):
			e, err := parseBody(line[len("ENTRY "):])
			if err != nil {
				return err
			}
			if err := future.Await(r.acceptEntryAsync(e)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("simkv: unexpected %q from the leader", line)
		}
	}
}

// acceptEntry appends e, unsynced, if it is the next entry; one the
// follower holds already is skipped (the leader resends from the count of
// HELLO, and entries never change), and one beyond the next is a
// protocol error.
//
//blitz:async
func (r *Replica) acceptEntry(e Entry) error {
	g := future.Await(r.writeMu.Lock())
	defer g.Unlock()
	r.mu.Lock()
	n := len(r.entries)
	r.mu.Unlock()
	switch {
	case e.Index <= n:
		return nil
	case e.Index > n+1:
		return fmt.Errorf("simkv: entry %d after %d: a gap", e.Index, n)
	}
	return future.Await(r.writeEntryAsync(e, false))
}
