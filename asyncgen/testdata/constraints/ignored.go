//go:build ignore

package constraints

import "github.com/blitz-go/blitz/future"

//blitz:async
func ignored(f future.Future[int]) int { return future.Await(f) }
