// Package simkv is a small replicated key-value store written as ordinary
// blitz code (async functions, compiled by blitzgen into *_async.go), and
// the tests that run it under the deterministic simulator of package
// github.com/blitz-go/blitz/sim: three replicas and a client host on a
// simulated network with simulated disks, partitions, crashes, kills and
// disk faults drawn from a seed, and a linearizability check of what the
// clients saw. With its deliberate bug turned on (Config.AckBeforeSync)
// the simulator finds a seed that loses an acknowledged write, and the
// seed replays the failure event for event. cmd/simkv runs a replica on a
// real runtime.
//
// # The protocol
//
// The replicas are fixed: Replicas[0] is the leader, the others are
// followers. Clients talk to the leader only, one line per command over
// TCP:
//
//	GET key        -> VALUE value | NOT_FOUND
//	PUT key value  -> OK | ERR reason
//
// Keys and values are 1 to 64 bytes without spaces. An ERR to a PUT is
// an unknown outcome: the write may still take effect.
//
// Every replica keeps an append-only log file, one record per write:
// "index key value crc32\n". A replica opening its log reads it until
// two whole reads agree (a read may fail, or flip a bit, on a bad disk),
// cuts off a torn record at its end (a power loss during an unsynced
// append), and syncs the file, so that what it recovered is durable.
//
// The leader handles a PUT this way: under its write lock, it appends the
// record, fsyncs the log and adds the entry to its in-memory log (the
// entry is now stable); then it waits until a follower has the entry
// synced too, that is until a majority of the three replicas (the leader
// and one follower) hold it. By then the entry is committed and applied
// to the leader's map, and the client is told OK. A GET is served from
// the leader's map, which holds committed entries only.
//
// Replication runs on one TCP connection per follower, which the leader
// dials (and dials again after a failure or a silence of AckTimeout):
//
//	follower: HELLO n            (n: the entries it holds synced)
//	leader:   ENTRY i key value  (the stable entries from n+1, at most 64)
//	          ...
//	          FLUSH
//	follower: ACK m              (after appending and fsyncing them)
//
// The leader sends only stable entries, so every follower's log is a
// prefix of the leader's durable log, and a follower skips an entry it
// holds already (entries never change). When the leader restarts, its
// durable log holds every write it ever acknowledged, so it rebuilds its
// map from its log alone and counts all of it committed: an entry that no
// follower had yet was never acknowledged, and may take effect now.
// Followers catch up when the leader connects again.
//
// A replica whose log cannot be written (a failed write that cannot be
// cut back) or synced is fenced: it answers ERR to writes until it
// restarts.
//
// # The bug
//
// With Config.AckBeforeSync the leader answers a PUT as soon as the
// record is written, before any fsync or replication, and leaves both to
// a background flusher (every FlushInterval): a power loss of the leader
// takes back writes that clients were told succeeded, and a later GET
// returns an older value. TestSimFindsTheBug shows the simulator finding
// it, and replaying it.
//
// # Ownership
//
// A Replica's tasks all run on the runtime given to Start. The in-memory
// state (entries, the stable, commit and applied counts, the map, the
// followers' acknowledged counts) is under Replica.mu, a sync.Mutex never
// held across an await; the log file is used under Replica.writeMu, an
// async mutex held across the write and sync of one entry or of a flush,
// so that the file's order is the index order. Replica.changed wakes the
// tasks waiting for the state to move (PUTs waiting for their commit,
// replicators waiting for new entries). A Client belongs to one task; a
// History may be shared.
//
// Under simulation only the file operations that run on the I/O backend
// work (open, ReadAt, Write, Sync, Truncate, Stat, Close): the log is
// read with ReadAt in a loop, never with blitz.ReadFile, and nothing uses
// the blocking pool.
package simkv
