// Package stale is the input of TestStaleGeneratedFileIsIgnored, which
// writes a generated file beside it that no longer compiles.
package stale

import "github.com/blitz-go/blitz/future"

//blitz:async
func Double(f future.Future[int]) int {
	v := future.Await(f)
	return v * 2
}
