package constraints

import "github.com/blitz-go/blitz/future"

// plat has a body per platform; each generated file must keep to its own.
//
//blitz:async
func plat(f future.Future[int]) int { return future.Await(f) + len("plat_linux") }
