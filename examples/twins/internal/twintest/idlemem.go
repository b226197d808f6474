package twintest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Clients says what each idle client of IdleConnMemory does before it goes
// quiet, so that the server has served it up to its wait for the next
// request when the memory is measured.
type Clients string

const (
	// KVClients send a GET and read the reply.
	KVClients Clients = "kv"
	// ChatClients read their welcome line.
	ChatClients Clients = "chat"
	// ProxyClients write a byte that the backend (in the client process)
	// reads and answers with a byte, through the proxy.
	ProxyClients Clients = "proxy"
)

const childEnv = "TWINS_IDLE_CHILD"

// Main is the TestMain of the servers' tests: in the client process of
// IdleConnMemory it runs the clients; otherwise it runs the tests, checking
// that they leak no goroutine.
func Main(m *testing.M) {
	if kind := os.Getenv(childEnv); kind != "" {
		if err := runClients(Clients(kind)); err != nil {
			fmt.Fprintln(os.Stderr, "idle clients:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// IdleConns is the number of connections IdleConnMemory holds: 10^4 (or
// $TWINS_IDLE_CONNS), fewer if the descriptor limit does not allow it (each
// connection takes fdsPerConn descriptors in each process).
func IdleConns(fdsPerConn int) int {
	n := 10_000
	if s := os.Getenv("TWINS_IDLE_CONNS"); s != "" {
		if v, err := strconv.Atoi(s); err == nil {
			n = v
		}
	}
	if limit, ok := fdLimit(); ok {
		n = min(n, (limit-256)/fdsPerConn)
	}
	return n
}

// IdleConnMemory measures what a server holds per idle connection: the heap
// and the goroutine stacks (after a collection) with IdleConns(fdsPerConn)
// clients connected and quiet, less what it held before start, divided by
// their number, reported as bytes/conn. fdsPerConn is the number of
// descriptors the server holds per connection (the goroutine proxy's
// io.Copy splices through a pipe per direction: 2 sockets and 2 pipes). The clients live in a child process (this test binary again,
// see Main), so that neither their memory nor their descriptors count; for
// ProxyClients the child also runs the backend, whose address start
// receives. start starts the server and returns its address and a function
// that stops it.
func IdleConnMemory(b *testing.B, kind Clients, fdsPerConn int, start func(backend string) (addr string, stop func())) {
	n := IdleConns(fdsPerConn)
	var per, fds float64
	for range b.N {
		per, fds = idleOnce(b, kind, n, start)
	}
	b.ReportMetric(per, "bytes/conn")
	b.ReportMetric(fds, "fds/conn")
	b.ReportMetric(float64(n), "conns")
}

func idleOnce(b *testing.B, kind Clients, n int, start func(string) (string, func())) (bytesPerConn, fdsPerConn float64) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(kind))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	out := bufio.NewScanner(stdout)
	backend := ""
	if kind == ProxyClients {
		if !out.Scan() {
			b.Fatal("the client process gave no backend address")
		}
		backend = strings.TrimPrefix(out.Text(), "backend ")
	}
	before, fdsBefore := liveBytes(), openFDs()
	addr, stop := start(backend)
	defer stop()
	fmt.Fprintf(stdin, "%s %d\n", addr, n)
	if !out.Scan() || out.Text() != "ready" {
		b.Fatalf("the client process did not connect: %q %v", out.Text(), out.Err())
	}
	time.Sleep(200 * time.Millisecond) // let the last handlers reach their wait
	return float64(liveBytes()-before) / float64(n), float64(openFDs()-fdsBefore) / float64(n)
}

// openFDs counts the process's open descriptors (0 without /proc).
func openFDs() int {
	fds, _ := os.ReadDir("/proc/self/fd")
	return len(fds)
}

func liveBytes() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// runClients is the client process: it connects as told on stdin, says
// "ready", and holds the connections until stdin closes.
func runClients(kind Clients) error {
	var backend net.Listener
	if kind == ProxyClients {
		var err error
		if backend, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
		fmt.Println("backend", backend.Addr())
		go func() {
			for {
				c, err := backend.Accept()
				if err != nil {
					return
				}
				go func() { // answer the probe, then hold the connection
					b := make([]byte, 1)
					if _, err := io.ReadFull(c, b); err == nil {
						_, _ = c.Write([]byte("y"))
					}
					_, _ = c.Read(b)
					c.Close()
				}()
			}
		}()
	}
	in := bufio.NewReader(os.Stdin)
	var addr string
	var n int
	if _, err := fmt.Fscanln(in, &addr, &n); err != nil {
		return err
	}
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		conns = append(conns, c)
		r := bufio.NewReader(c)
		switch kind {
		case KVClients:
			_, err = io.WriteString(c, "GET x\n")
			if err == nil {
				_, err = r.ReadString('\n')
			}
		case ChatClients:
			_, err = r.ReadString('\n')
		case ProxyClients:
			if _, err = c.Write([]byte("x")); err == nil {
				_, err = r.ReadByte()
			}
		}
		if err != nil {
			return fmt.Errorf("connection %d: %w", len(conns), err)
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, in)
	for _, c := range conns {
		c.Close()
	}
	return nil
}
