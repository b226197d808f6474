// Package asynctrial is the real-code trial of the generator: it takes
// packages of ordinary Go (copies of standard library packages), marks as
// many of their functions and methods //blitz:async as the generator takes,
// turns the calls between them into awaits, and keeps each package's API
// and tests as they are by leaving, under each function's name, a
// synchronous wrapper that runs the function's future to completion with
// future.Block. The packages' own tests then run every internal call
// through the generated state machines.
//
// [Rewrite] is the program that does it, with go/ast and go/types. The
// tests (trial_test.go) copy a package from GOROOT into a temporary module,
// rewrite it, run the generator (with its invariant checks), and run go vet
// and the package's tests there:
//
//	go test -short ./asynctrial                          # encoding/json, its tests with -short
//	go test -timeout=60m ./asynctrial -asynctrial        # every package, its tests also with -race
//	go test ./asynctrial -asynctrial -asynctrial.long    # every package's tests without -short (long)
//	go test ./asynctrial -asynctrial -asynctrial.yield   # every await suspends once
//	go test ./asynctrial -asynctrial.keep=/tmp/trial ... # keep the rewritten packages
//
// The packages are encoding/json, go/parser with go/scanner,
// text/template/parse, slices, compress/flate, and regexp with
// regexp/syntax. What a package's tests need of the standard library's
// internal packages is stubbed; each stub says what it stands for.
package asynctrial
