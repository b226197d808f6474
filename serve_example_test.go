package blitz_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// ExampleServe runs a server whose handler is the greeter state machine of
// the tcpServer example: Serve accepts, runs one handler task per
// connection, and on the coordinator's trigger stops accepting and waits
// (here up to a second) for the handlers in flight.
func ExampleServe() {
	rt, err := blitz.New(blitz.Config{})
	if err != nil {
		panic(err)
	}
	defer rt.Shutdown(context.Background())
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	addr := l.AddrPort().String()

	stop := blitz.NewCoordinator()
	stopped := stop.WhenTriggered()
	server := blitz.SpawnOn(rt.Handle(), blitz.Serve(l,
		func(s *blitz.TCPStream) future.Future[error] { return &greeter{s: s} },
		blitz.ServeConfig{Stop: stopped, Grace: time.Second}))

	for _, name := range []string{"Ada", "Grace"} { // the clients
		c, err := net.Dial("tcp", addr)
		if err != nil {
			panic(err)
		}
		_, _ = c.Write([]byte(name))
		reply, _ := io.ReadAll(c)
		c.Close()
		fmt.Println(string(reply))
	}

	stop.Trigger() // as a signal handler would
	stats, err := server.Wait(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Printf("accepted %d, completed %d, cancelled %d, error %v\n",
		stats.Accepted, stats.Completed, stats.Cancelled, stats.Err)
	// Output:
	// hello, Ada
	// hello, Grace
	// accepted 2, completed 2, cancelled 0, error <nil>
}
