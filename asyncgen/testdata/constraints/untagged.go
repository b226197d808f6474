//go:build !foo || bar

package constraints

import "github.com/blitz-go/blitz/future"

//blitz:async
func tagged(f future.Future[int]) int { return future.Await(f) + 2 }
