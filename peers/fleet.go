//go:build linux

package peers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrLimit is the error of an IdleFleet that would cross a limit of the
// system: the open files a process may hold, the loopback ports a
// destination can be reached from.
var ErrLimit = errors.New("peers: over a system limit")

// fdReserve is what a process keeps of its open-file limit for other than
// the connections: standard streams, pipes, the runtime's own (io_uring
// ring, epoll, eventfds), the listener.
const fdReserve = 256

// IdleFleet measures the memory that idle connections cost a server kind
// when there are more of them than one process may hold open: Procs
// server processes of Kind, each on a loopback address of its own
// (127.0.0.2, 127.0.0.3, ...), and as many client processes, client i
// holding its share of Conns open to server i from Sources loopback
// addresses of its own (127.1.i.1, 127.1.i.2, ...). Each connection makes one
// round trip, then stays idle. The servers' resident sets (VmRSS) are read
// before any connection, with half of each share open, and with all of
// them, so that the report tells the growth per connection on average and
// at the margin (from half to all), and the part of the growth that does
// not grow with the connections (a pool made on first use, for instance);
// then once more after a forced garbage collection in each server.
//
// Each destination has its own address, so the client ports are counted
// per server: a share must fit in the local port range
// (/proc/sys/net/ipv4/ip_local_port_range), and in a process's open-file
// limit (RLIMIT_NOFILE's hard limit, to which Go raises the soft one), or
// Run fails with ErrLimit before starting anything. The source addresses
// spread a share further, so that the kernel finds a free port for a
// connection at once rather than after a search through the ports the
// share already took.
type IdleFleet struct {
	// Exe is the program the child processes run: one that hands its
	// arguments to RunChild (peerbench, or a test binary).
	Exe string
	// Env is added to the children's environment.
	Env []string
	// Mode and Kind name the server, as for Start.
	Mode Mode
	Kind string
	// Conns is the total number of connections, Procs the number of
	// server processes (and of client processes) they are spread over.
	Conns, Procs int
	// Sources is the number of source addresses of each client process,
	// 1 to 254; 0 means 64.
	Sources int
	// Settle is how long the servers are left alone before each reading
	// (their collectors, lazily freed pages); 0 means 2s.
	Settle time.Duration
	// Heap adds a reading of each server's live heap and goroutine
	// stacks (after two collections) to each resident-set reading.
	Heap bool
	// Broadcast, if positive, has every server broadcast a text message
	// of Broadcast bytes to its connections once they are all open (mode
	// WS), and times it until every connection has received it.
	Broadcast int
}

// IdleServer is one server process of an IdleFleet run.
type IdleServer struct {
	// Pid and Addr are the process's id and where it listened.
	Pid  int
	Addr string
	// HalfConns and Conns are the connections open to it at the middle
	// reading and at the last.
	HalfConns, Conns int
	// FDs is how many open files it gained from before the connections to
	// the last reading: one per connection it accepted and kept.
	FDs int
	// Before, Half and Full are its VmRSS in bytes before any connection,
	// with HalfConns and with Conns connections; Collected is its VmRSS
	// with Conns connections after a forced garbage collection that
	// returned the freed memory to the kernel: Full without the garbage
	// the collector had not yet reclaimed.
	Before, Half, Full, Collected int64
	// ReadPool is the size of its pool of read buffers (Server.ReadPool),
	// made during the connections: part of the growth once its pages are
	// touched.
	ReadPool int64
	// HeapBefore, HeapHalf and HeapFull are its live heap and stacks at
	// the three readings (with IdleFleet.Heap).
	HeapBefore, HeapHalf, HeapFull int64
}

// IdleReport is the result of an IdleFleet run.
type IdleReport struct {
	Kind    string
	Servers []IdleServer
	// Queued is the time from the broadcast commands to the servers'
	// answers (the message queued or written, as each library does it),
	// Delivered the time until the last connection received it (with
	// IdleFleet.Broadcast).
	Queued, Delivered time.Duration
}

// HeapPerConn is the growth of the servers' live heap and stacks per
// connection from before the connections to the last reading, and at
// the margin (from half to all: without what was made once).
func (r IdleReport) HeapPerConn() (avg, marginal float64) {
	var grew, grewHalf int64
	n := 0
	for _, s := range r.Servers {
		grew += s.HeapFull - s.HeapBefore
		grewHalf += s.HeapFull - s.HeapHalf
		n += s.Conns - s.HalfConns
	}
	return float64(grew) / float64(r.Conns()), float64(grewHalf) / float64(n)
}

// Conns is the number of connections held at the last reading.
func (r IdleReport) Conns() int {
	n := 0
	for _, s := range r.Servers {
		n += s.Conns
	}
	return n
}

// Before is the servers' resident set before the connections, summed.
func (r IdleReport) Before() int64 {
	var n int64
	for _, s := range r.Servers {
		n += s.Before
	}
	return n
}

// ReadPool is the size of the servers' read pools, summed.
func (r IdleReport) ReadPool() int64 {
	var n int64
	for _, s := range r.Servers {
		n += s.ReadPool
	}
	return n
}

// Growth is the servers' resident-set growth from before the connections
// to the last reading, summed.
func (r IdleReport) Growth() int64 {
	var n int64
	for _, s := range r.Servers {
		n += s.Full - s.Before
	}
	return n
}

// CollectedGrowth is the servers' resident-set growth from before the
// connections to after the forced collection, summed.
func (r IdleReport) CollectedGrowth() int64 {
	var n int64
	for _, s := range r.Servers {
		n += s.Collected - s.Before
	}
	return n
}

// PerConnCollected is CollectedGrowth per connection.
func (r IdleReport) PerConnCollected() float64 {
	return float64(r.CollectedGrowth()) / float64(r.Conns())
}

// PerConn is Growth per connection.
func (r IdleReport) PerConn() float64 { return float64(r.Growth()) / float64(r.Conns()) }

// Marginal is the growth per connection from the middle reading to the
// last: the cost of one more connection, without what was made once.
func (r IdleReport) Marginal() float64 {
	var grew int64
	n := 0
	for _, s := range r.Servers {
		grew += s.Full - s.Half
		n += s.Conns - s.HalfConns
	}
	return float64(grew) / float64(n)
}

// Fixed is the part of Growth that Marginal does not explain: what the
// servers made once for the connections, summed.
func (r IdleReport) Fixed() int64 { return r.Growth() - int64(r.Marginal()*float64(r.Conns())) }

// Run starts the processes, opens the connections, reads the figures,
// and ends every process it started, whether it fails or not; ctx bounds
// the waits for the children.
func (f IdleFleet) Run(ctx context.Context) (rep IdleReport, err error) {
	rep.Kind = f.Kind
	if f.Procs < 1 || f.Procs > 250 || f.Conns < 2*f.Procs {
		return rep, fmt.Errorf("peers: idle fleet of %d connections over %d processes: want 1 to 250 processes and at least 2 connections each", f.Conns, f.Procs)
	}
	share := (f.Conns + f.Procs - 1) / f.Procs
	if most, err := MaxShare(); err != nil {
		return rep, err
	} else if share > most {
		return rep, fmt.Errorf("%w: %d connections per process, over the %d the open-file limit (less %d other files) and the local port range allow: use more processes", ErrLimit, share, most, fdReserve)
	}
	sources := f.Sources
	if sources == 0 {
		sources = 64
	}
	if sources < 1 || sources > 254 {
		return rep, fmt.Errorf("peers: idle fleet with %d source addresses per client: want 1 to 254", sources)
	}
	settle := f.Settle
	if settle == 0 {
		settle = 2 * time.Second
	}
	var servers, clients []*Proc
	defer func() {
		// Clients first: their closing ends the servers' connections.
		err = errors.Join(err, stopAll(clients), stopAll(servers))
		if err != nil {
			err = fmt.Errorf("%s: %w", f.Kind, err)
		}
	}()
	for i := range f.Procs {
		p, srv, err := StartServer(ctx, f.Exe, f.Env, f.Mode, f.Kind, fmt.Sprintf("127.0.0.%d:0", 2+i))
		if err != nil {
			return rep, err
		}
		servers = append(servers, p)
		n := f.Conns / f.Procs
		if i < f.Conns%f.Procs {
			n++
		}
		rep.Servers = append(rep.Servers, IdleServer{Pid: p.Pid(), Addr: srv.Addr, HalfConns: n / 2, Conns: n, ReadPool: srv.ReadPool})
	}
	time.Sleep(settle)
	fds := make([]int, len(servers))
	for i, p := range servers {
		s := &rep.Servers[i]
		if s.Before, err = RSS(p.Pid()); err != nil {
			return rep, err
		}
		if f.Heap {
			if s.HeapBefore, err = readHeap(ctx, p); err != nil {
				return rep, err
			}
		}
		if fds[i], err = openFiles(p.Pid()); err != nil {
			return rep, err
		}
	}
	for i, s := range rep.Servers {
		p, err := StartChild(f.Exe, f.Env, "dial", "-mode", string(f.Mode), "-addr", s.Addr,
			"-from", fmt.Sprintf("127.1.%d.1", i), "-sources", strconv.Itoa(sources))
		if err != nil {
			return rep, err
		}
		clients = append(clients, p)
	}
	none, half, all := make([]int, f.Procs), make([]int, f.Procs), make([]int, f.Procs)
	for i, s := range rep.Servers {
		half[i], all[i] = s.HalfConns, s.Conns
	}
	if err := dialAll(ctx, clients, none, half); err != nil {
		return rep, err
	}
	time.Sleep(settle)
	for i, p := range servers {
		if rep.Servers[i].Half, err = RSS(p.Pid()); err != nil {
			return rep, err
		}
		if f.Heap {
			if rep.Servers[i].HeapHalf, err = readHeap(ctx, p); err != nil {
				return rep, err
			}
		}
	}
	if err := dialAll(ctx, clients, half, all); err != nil {
		return rep, err
	}
	time.Sleep(settle)
	for i, p := range servers {
		s := &rep.Servers[i]
		if s.Full, err = RSS(p.Pid()); err != nil {
			return rep, err
		}
		n, err := openFiles(p.Pid())
		if err != nil {
			return rep, err
		}
		if s.FDs = n - fds[i]; s.FDs < s.Conns {
			return rep, fmt.Errorf("peers: server %d holds %d more open files with %d connections", s.Pid, s.FDs, s.Conns)
		}
		if f.Heap {
			if s.HeapFull, err = readHeap(ctx, p); err != nil {
				return rep, err
			}
		}
	}
	if f.Broadcast > 0 {
		if rep.Queued, rep.Delivered, err = broadcast(ctx, servers, clients, f.Broadcast); err != nil {
			return rep, err
		}
	}
	for i, p := range servers {
		if err := p.Send("gc"); err != nil {
			return rep, fmt.Errorf("peers: server %d: %w", p.Pid(), err)
		}
		if _, err := p.Await(ctx, "collected"); err != nil {
			return rep, err
		}
		if rep.Servers[i].Collected, err = RSS(p.Pid()); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// readHeap asks server p for its live heap.
func readHeap(ctx context.Context, p *Proc) (int64, error) {
	if err := p.Send("heap"); err != nil {
		return 0, fmt.Errorf("peers: server %d: %w", p.Pid(), err)
	}
	line, err := p.Await(ctx, "heap ")
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(line, 10, 64)
}

// broadcast has the clients listen, then every server broadcast a
// message of size bytes, and times it: until the servers answered
// (queued), and until the last connection received it (delivered).
func broadcast(ctx context.Context, servers, clients []*Proc, size int) (queued, delivered time.Duration, err error) {
	for _, c := range clients {
		if err := c.Send("recv"); err != nil {
			return 0, 0, fmt.Errorf("peers: client %d: %w", c.Pid(), err)
		}
	}
	for _, c := range clients {
		if _, err := c.Await(ctx, "listening"); err != nil {
			return 0, 0, err
		}
	}
	time.Sleep(100 * time.Millisecond) // the readers reach their reads
	start := time.Now()
	for _, p := range servers {
		if err := p.Send(fmt.Sprintf("broadcast %d", size)); err != nil {
			return 0, 0, fmt.Errorf("peers: server %d: %w", p.Pid(), err)
		}
	}
	for _, p := range servers {
		if _, err := p.Await(ctx, "broadcasted"); err != nil {
			return 0, 0, err
		}
	}
	queued = time.Since(start)
	var last int64
	for _, c := range clients {
		line, err := c.Await(ctx, "received ")
		if err != nil {
			return 0, 0, err
		}
		t, err := strconv.ParseInt(line, 10, 64)
		if err != nil || t == 0 {
			return 0, 0, fmt.Errorf("peers: client %d did not receive the broadcast (%q)", c.Pid(), line)
		}
		last = max(last, t)
	}
	return queued, time.Unix(0, last).Sub(start), nil
}

// dialAll brings client i's connections from from[i] to to[i], every
// client at once, and checks the count each reports.
func dialAll(ctx context.Context, clients []*Proc, from, to []int) error {
	for i, c := range clients {
		if err := c.Send(fmt.Sprintf("dial %d", to[i]-from[i])); err != nil {
			return fmt.Errorf("peers: client %d: %w", c.Pid(), err)
		}
	}
	for i, c := range clients {
		got, err := c.Await(ctx, "dialed ")
		if err != nil {
			return err // Run's stopAll tells how the child exited
		}
		if want := strconv.Itoa(to[i]); got != want {
			return fmt.Errorf("peers: client %d holds %s connections, want %s", c.Pid(), got, want)
		}
	}
	return nil
}

// stopAll stops every process at once and waits for them all.
func stopAll(ps []*Proc) error {
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Stop(); err != nil {
				errs[i] = fmt.Errorf("child %d: %w", p.Pid(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// MaxShare is the most connections one process of an IdleFleet may hold
// on this system: its open-file limit, less what it keeps for other files,
// or the local port range, whichever is lower.
func MaxShare() (int, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, err
	}
	files := int(min(lim.Max, 1<<30)) - fdReserve
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, fmt.Errorf("peers: malformed ip_local_port_range %q", b)
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("peers: malformed ip_local_port_range %q", b)
	}
	return min(files, hi-lo+1), nil
}

// MinProcs is the fewest processes an IdleFleet of conns connections can
// run on this system (see MaxShare).
func MinProcs(conns int) (int, error) {
	share, err := MaxShare()
	if err != nil {
		return 0, err
	}
	if share < 2 {
		return 0, fmt.Errorf("%w: a process may hold %d connections", ErrLimit, share)
	}
	return (conns + share - 1) / share, nil
}

// openFiles counts process pid's open files.
func openFiles(pid int) (int, error) {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(es), err
}
