//go:build linux

package peers

import (
	"fmt"
	"sort"
)

// Mode is what a server serves and how the load exercises it.
type Mode string

// The modes.
const (
	// Echo servers write back what they read; the load makes 64-byte round
	// trips.
	Echo Mode = "echo"
	// HTTP servers answer GET / with a short body; the load makes
	// keep-alive requests, one at a time per connection.
	HTTP Mode = "http"
	// WS servers are WebSocket servers that echo each message and can
	// broadcast one to all their connections (Server.Broadcast); the load
	// makes round trips of WSPayload-byte binary messages.
	WS Mode = "ws"
)

// Server is a running server: Addr is where it listens, Stop ends it.
// ReadPool is the size in bytes of the pool of read buffers its
// connections share, made on the first read (0: it has none). Broadcast,
// set by the WS servers, sends a text message of size bytes to every
// open connection; it returns once the message is on its way (queued or
// written, as the library does it).
type Server struct {
	Addr      string
	ReadPool  int64
	Stop      func() error
	Broadcast func(size int) error
}

// starter starts one kind of server listening on addr ("127.0.0.1:0"
// picks a port).
type starter func(addr string) (*Server, error)

// kinds holds every server kind, by mode and name.
var kinds = map[Mode]map[string]starter{
	Echo: {
		"go-net":           startGoNetEcho,
		"blitz":            func(a string) (*Server, error) { return startBlitzEcho(a, "", blitzEcho) },
		"blitz-epoll":      func(a string) (*Server, error) { return startBlitzEcho(a, "epoll", blitzEcho) },
		"blitz-poll":       func(a string) (*Server, error) { return startBlitzEcho(a, "", blitzPollEcho) },
		"blitz-poll-epoll": func(a string) (*Server, error) { return startBlitzEcho(a, "epoll", blitzPollEcho) },
		"gnet":             startGnetEcho,
		"nbio":             startNbioEcho,
	},
	HTTP: {
		"net-http":          startNetHTTP,
		"blitz-netlistener": startBlitzNetListenerHTTP,
		"blitz-http":        startBlitzHTTP,
		"nbhttp":            startNbHTTP,
		"fasthttp":          startFastHTTP,
	},
	WS: {
		"blitz-ws":       func(a string) (*Server, error) { return startBlitzWS(a, "") },
		"blitz-ws-epoll": func(a string) (*Server, error) { return startBlitzWS(a, "epoll") },
		// The same connections served without an HTTP server: blitz.Serve,
		// and in each connection's task UpgradeStream, then the echo.
		"blitz-ws-stream":       func(a string) (*Server, error) { return startBlitzWSStream(a, "") },
		"blitz-ws-stream-epoll": func(a string) (*Server, error) { return startBlitzWSStream(a, "epoll") },
		"gorilla":               startGorillaWS,
		"coder":                 startCoderWS,
		"gobwas":                startGobwasWS,
		"gws":                   startGwsWS,
		"nbio-ws":               startNbioWS,
	},
}

// Kinds returns the server kinds of mode m, sorted.
func Kinds(m Mode) []string {
	var names []string
	for k := range kinds[m] {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Start starts the server kind of mode m on addr.
func Start(m Mode, kind, addr string) (*Server, error) {
	s, ok := kinds[m][kind]
	if !ok {
		return nil, fmt.Errorf("peers: no %s server named %q (have %v)", m, kind, Kinds(m))
	}
	return s(addr)
}
