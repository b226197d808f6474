package equiv

import (
	"context"
	"errors"
	"testing"

	"github.com/blitz-go/blitz/future"
)

// TestAwaitNilFuture: future.Try of a nil future gives an error that is
// future.ErrNilFuture, and future.Await of one panics with it, instead of
// a nil dereference in the generated Poll.
func TestAwaitNilFuture(t *testing.T) {
	for n := range 8 {
		e := NewEnv(uint64(n))
		var v int
		var err error
		p := catch(func() {
			r, berr := future.Block(context.Background(), nilFuturesAsync(e, n))
			if berr != nil {
				t.Errorf("n=%d: Block: %v", n, berr)
			}
			v, err = r.Get()
		})
		switch {
		case n%2 != 0: // Try of nil
			if p != nil || !errors.Is(err, future.ErrNilFuture) {
				t.Fatalf("n=%d: %v, %v, panic %v; want an error that is ErrNilFuture", n, v, err, p)
			}
		case n%4 == 2: // Await of nil
			if pe, ok := p.(error); !ok || !errors.Is(pe, future.ErrNilFuture) {
				t.Fatalf("n=%d: panic %v (%v, %v); want a panic with ErrNilFuture", n, p, v, err)
			}
		default:
			if p != nil || err != nil {
				t.Fatalf("n=%d: %v, %v, panic %v", n, v, err, p)
			}
		}
	}
}
