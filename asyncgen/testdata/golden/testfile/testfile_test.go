package testfile

import (
	"context"
	"testing"

	"github.com/blitz-go/blitz/future"
)

//blitz:async
func doubled(f future.Future[int]) int {
	return Double(future.Await(f))
}

func TestDoubled(t *testing.T) {
	v, err := future.Block(context.Background(), doubledAsync(future.Ready(21)))
	if err != nil || v != 42 {
		t.Fatalf("%v, %v", v, err)
	}
}
