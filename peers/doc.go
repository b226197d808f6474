// Package peers runs blitz's servers beside the servers of the libraries
// it is compared with (Go's net and net/http, gnet, nbio and nbhttp,
// fasthttp) and the load that measures them, so that the comparison in
// BENCHMARKS.md can be taken again with one command:
//
//	go run ./peers/cmd/peerbench -mode echo
//	go run ./peers/cmd/peerbench -mode http
//	go run ./peers/cmd/peerbench -mode ws
//	go run ./peers/cmd/peerbench -mode idle -conns 100000
//
// Each server runs in a process of its own, started by peerbench, and the
// throughput load runs in peerbench's process, or for HTTP in wrk's own
// (RunWrk; peerbench picks wrk when it is on PATH): the server's CPU time
// and memory are read from /proc for the server alone, so throughput is
// reported in total and per core of server CPU. Idle connections are held
// by client processes, spread with the servers over as many processes as
// the open-file limit asks (IdleFleet), and their memory is reported as
// the growth of the servers' resident sets, in all and per connection.
//
// With -rate, the Go load offers a fixed number of round trips (or
// requests) per second instead of going as fast as the server answers
// (RunAt): where every server keeps up, the table's server CPU per round
// trip compares what each costs at the same, partial load, which a closed
// loop cannot show, since a saturated server's idle time is zero.
//
// blitz's echo server comes in two forms: blitz and blitz-epoll hold a
// ReadPooled and a WriteAll future in the connection's state, as a
// handler written with futures does; blitz-poll and blitz-poll-epoll poll
// the stream's own pooled read (PollReadPooled) and write with PollWrite,
// as the runtime's HTTP and WebSocket servers do, so an idle connection
// keeps no future for the write it finished.
//
// The WebSocket servers (mode ws: blitz's websocket package, gorilla,
// coder, gobwas, gws, nbio's websocket) echo and broadcast; TestWSPeerTable measures their
// echo throughput, idle memory and broadcast time side by side
// (PEERS_WS_BENCH=1 go test -run TestWSPeerTable -v ./peers).
//
// Package wsinterop (go test ./peers/wsinterop) checks blitz's websocket
// package against the Go WebSocket libraries gorilla/websocket,
// coder/websocket, gobwas/ws and lxzan/gws, both ways, so that the
// websocket module itself needs none of them.
//
// PEERS_BLITZ_IDLESPIN, a Go duration, sets the blitz servers'
// Config.IdleSpin (negative, such as "-1ns": no spin before parking;
// unset: the default), to measure what the spin costs or saves a shape. A
// value that is not a duration stops the server with an error.
//
// PEERS_SERVER_CPUS, a CPU list as taskset(1) takes it, pins the server
// processes to those CPUs (see StartChild): with peerbench itself under
// taskset on the other CPUs, server and load no longer share cores, and a
// server's CPU per message varies less from run to run.
//
// This module exists only for the comparison: no library module of blitz
// depends on it or on the peers it imports. It runs on Linux.
package peers
