// Package netsim is the simulated network and disks of the deterministic
// simulator: a World of hosts, each with a backend.Backend whose sockets
// and files live in memory, and whose every delivery happens at a virtual
// time.
//
// # Time and determinism
//
// Virtual time is time.Now inside a testing/synctest bubble. The model has
// no goroutine: it keeps, per host, a heap of events (a segment arriving,
// a disk op finishing, a timeout), and every call into it (a Submit, a
// Wait, a fault setter) first runs the events due by now, in order of
// time, then a tiebreak drawn from the World's rand.Rand when the event
// was scheduled, then sequence; each event runs with the model clock at
// its own time. Completions, too, become visible through an event at the
// instant they are decided, so which of several simultaneous completions
// Wait returns first is a seeded choice. Every random choice (latency,
// loss, duplication, reordering, disk faults) comes from the one
// rand.Rand; nothing iterates a map where order matters. So the same seed
// and the same sequence of calls at the same virtual times give the same
// results, completions in the same order, and the same trace (SetTrace).
//
// The model allocates little per event, since a simulation runs millions
// of them and garbage costs a test run on several cores more than the
// events themselves: events are typed records (not closures), and they,
// the ops in flight and the TCP segments go back to free lists of the
// World when done (a stale reference is told apart by a sequence number);
// a trace's details are built in one reused buffer, and only when a trace
// is set.
//
// A Wait with nothing to return sleeps until the next event of any host
// (an event of one host can cause a completion on another), its timeout,
// or a Wake; a newly scheduled earlier event wakes it to look again. In a
// bubble these sleeps take no real time. NextEvent tells a driver loop
// when the model next has something to do.
//
// # Network
//
// Each segment or datagram takes a one-way latency drawn uniformly from
// the link's range (SetLatency, SetLinkLatency; a host's own loopback
// uses the range of the link from the host to itself). With SetBandwidth,
// each link direction carries one transfer at a time: n bytes occupy it
// for n/bandwidth after those sent before, then travel with the latency.
//
// TCP is reliable and ordered: a send is accepted up to the socket's send
// buffer (OptSendBuffer, 256 KiB) less what is in flight, less what the
// peer holds unread beyond its receive buffer (OptRecvBuffer, 256 KiB); a
// faster writer waits. A window reopens at once when the reader reads
// (the window update takes no latency). A connect completes after a round
// trip when a listener's backlog takes it; with no listener (or a full
// backlog) a reset comes back and it fails with ECONNREFUSED after the
// round trip; to an address no host has, EHOSTUNREACH after a latency.
// Shutdown of the write half sends a FIN behind the data in flight (the
// peer reads 0 after it); close sends the FIN, or a reset when data was
// left unread or SO_LINGER is 0; a segment arriving where no connection
// is draws a reset, as Linux does. A reset makes the next op fail with
// ECONNRESET (reads afterwards see end of stream, writes EPIPE) and
// discards unread data. ResetConnections resets both ends at once.
//
// UDP datagrams (up to 65507 bytes) may be lost (SetLoss), duplicated
// (SetDuplicate) or, with SetReorder, overtake those sent before them;
// otherwise they keep their order per link direction. A datagram for a
// port without a socket, or beyond the receive buffer, is dropped.
//
// Partitions (Partition, Heal, HealLink) cut links both ways. Datagrams
// into a cut are lost. TCP segments are held, as retransmissions would
// be, and sent when the link heals, unless SetTCPTimeout is set: then a
// connection whose segments are held that long fails on its sending side
// with ETIMEDOUT and is gone (its peer gets a reset when it next sends
// after the heal). Segments already on their way when the cut is made
// arrive. A SYN that meets a cut is lost and sent again, as Linux does,
// after 1 s, then 2 s, 4 s, ...: a connect made during a partition goes
// through after the heal, or fails with ETIMEDOUT after SetConnectTimeout
// (10 s by default) without an answer.
//
// # Hosts: crash, kill, restart
//
// Crash is a power loss: silent, the peers are told nothing. Traffic to a
// down host is lost (TCP segments are held for it as for a partition);
// after Restart, held segments reach a host with no connection and draw
// resets, which is how a peer that keeps sending learns of the crash (one
// that only reads waits, as on a real network, until its own timeout).
// Kill is a process death on a live machine: every connection is reset
// toward its peer, connects to its ports are refused, and the disk keeps
// even unsynced data (the page cache). Either way the incarnation's
// backend dies: its ops in flight complete with an error wrapping
// ErrClosed, then Wait returns ErrClosed and every call fails. Restart
// starts a new incarnation with a fresh backend (Host.Backend).
//
// # Disks
//
// A Disk is files by cleaned path, without directories (any path can be
// created). A file op (KindOpenAt, KindRead, KindWrite and the vectored
// ones, KindFsync, KindStatx, KindFtruncate) takes effect when it
// completes, after a latency drawn from DiskFaults' range. Each file
// keeps its content as of its last fsync: a crash brings it back to that,
// or, with probability TornWrite, to that plus a seeded prefix of the
// later changes, the last one cut at a seeded byte; a file never synced
// vanishes (an fsync of the file makes its existence durable too: there
// is no directory to sync). ReadError and WriteError fail an op with EIO;
// BitFlip flips one bit of what a read returns.
//
// # The backend
//
// Its Caps are CapNativeCompletions, CapNativeMultishot,
// CapNativeBufferGroups, CapPoll, CapCancelFD, CapFileOps and
// CapFtruncate. Errors are *backend.Error values wrapping the package's
// sentinels with the errno a Unix kernel would give (ECONNRESET,
// ECONNREFUSED, EPIPE, ETIMEDOUT, EADDRINUSE, ENOENT, EEXIST, EIO...);
// ErrCanceled, ErrTimeout and ErrNotFound come bare. TrySend and TryRecv
// are served (ErrWouldBlock when the socket must wait, ErrUnsupported on
// a datagram socket), since the runtime's net.Conn adapter uses them.
// Descriptors are numbered from 3 per incarnation and not reused.
//
// Not simulated: Unix-domain sockets (ErrUnsupported), multicast
// (JoinGroup is ErrUnsupported), the RecvArmer interface (the runtime
// then submits SelectBuffer recvs), TIME_WAIT (a port
// is free again at close), IP fragmentation, congestion control, and
// directories, links and permissions on disks.
package netsim
