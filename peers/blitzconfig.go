//go:build linux

package peers

import (
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
