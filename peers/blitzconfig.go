//go:build linux

package peers

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/blitz-go/blitz"
)

// blitzConfig is c with what the environment asks of every blitz server:
// PEERS_BLITZ_IDLESPIN, a Go duration, as Config.IdleSpin. A value that
// does not parse is an error, so that a server is never measured with the
// default spin under a label that says otherwise ("-1" is not a duration;
// "-1ns" is).
func blitzConfig(c blitz.Config) (blitz.Config, error) {
	if v := os.Getenv("PEERS_BLITZ_IDLESPIN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return c, fmt.Errorf("peers: PEERS_BLITZ_IDLESPIN=%q is not a Go duration (no spin is \"-1ns\"): %w", v, err)
		}
		c.IdleSpin = d
	}
	return c, nil
}

// listenBlitz starts a runtime with cfg (through blitzConfig) and a TCP
// listener of it on addr; the runtime is shut down again if the listener
// cannot be made.
func listenBlitz(addr string, cfg blitz.Config) (*blitz.Runtime, *blitz.TCPListener, error) {
	cfg, err := blitzConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	rt, err := blitz.New(cfg)
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
