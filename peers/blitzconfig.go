//go:build linux

package peers

import (
	"context"
	"os"
	"time"

	"github.com/blitz-go/blitz"
)

// blitzConfig is c with what the environment asks of every blitz server:
// PEERS_BLITZ_IDLESPIN, a Go duration, as Config.IdleSpin. A value that
// does not parse leaves c as it is.
func blitzConfig(c blitz.Config) blitz.Config {
	if v := os.Getenv("PEERS_BLITZ_IDLESPIN"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			c.IdleSpin = d
		}
	}
	return c
}

// listenBlitz starts a runtime with cfg (through blitzConfig) and a TCP
// listener of it on addr; the runtime is shut down again if the listener
// cannot be made.
func listenBlitz(addr string, cfg blitz.Config) (*blitz.Runtime, *blitz.TCPListener, error) {
	rt, err := blitz.New(blitzConfig(cfg))
	if err != nil {
		return nil, nil, err
	}
	l, err := blitz.ListenTCP(rt.Handle(), addr)
	if err != nil {
		_ = rt.Shutdown(context.Background())
		return nil, nil, err
	}
	return rt, l, nil
}

// blitzPooled is the configuration of the blitz servers that read into
// the runtime's pool (see blitzReadBuffers), on backend ("" for the
// default: io_uring where the kernel allows it).
func blitzPooled(backend string) blitz.Config {
	return blitz.Config{Backend: backend, ReadBufferCount: blitzReadBuffers, ReadBufferSize: blitzReadBufferSize}
}
