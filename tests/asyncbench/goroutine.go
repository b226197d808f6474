package asyncbench

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/blitz-go/blitz/channels"
)

// handleBlocking is handle for a goroutine: the same computation with
// blocking calls, waiting at the gate with WaitBlocking.
func handleBlocking(c *Conn, g *Gate) (int, error) {
	total := 0
	for {
		v, err := c.ReadBlocking()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return total, err
		}
		switch {
		case v < 0:
			return total, ErrNegative
		case v%2 == 0:
			total += c.WriteBlocking(v / 2)
		default:
			total += v
		}
	}
	g.WaitBlocking()
	c.WriteBlocking(total)
	return total, nil
}

// gatherBlocking is gather for a goroutine.
func gatherBlocking(ctx context.Context, rs []channels.OneshotReceiver[int]) (int, error) {
	sum := 0
	for i, r := range rs {
		v, err := r.RecvBlocking(ctx)
		if err != nil {
			return sum, fmt.Errorf("asyncbench: result %d: %w", i, err)
		}
		sum += v * (i + 1)
	}
	return sum, nil
}
