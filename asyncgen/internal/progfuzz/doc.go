// Package progfuzz fuzzes the blitzgen generator with generated programs.
//
// [Generate] writes, from a seed, an async function over an Env like the
// equivalence harness's (futures whose readiness a seeded schedule decides,
// and a log of side effects): statement sequences, :=, = and op= with
// awaits on the right or nested in expressions, local constants (untyped,
// typed, iota groups, reading each other), awaits as statements,
// future.Try, if/else chains, every for form, range over integers, slices,
// arrays and strings, switch and type switch with fallthrough, labeled
// break and continue, early returns, panics, defer (of calls whose
// arguments are evaluated at the statement, of value and interface methods,
// of literals with or without arguments, of calls that may panic), closures
// called at once or later (capturing each iteration's variables), pointers,
// a struct with a pointer method, slices of arrays, maps, buffered
// channels, block statements, shadowed names (names the generated code uses
// among them), named results, methods, generic functions, methods of a
// generic type, and a second async function that the program awaits. Every
// step notes a side effect; arithmetic stays small and never divides; loops
// are bounded; an expression that awaits holds no other call that writes,
// since Go leaves the order of such calls and variable reads unspecified.
// Every program type-checks.
//
// TestFuzzPrograms writes a batch of programs into a temporary module (its
// own go.mod, reaching the repository's future and waker modules by
// replace; the files placed as a user's are: one in five in a test file,
// one in five in a file named for the GOOS, one in five behind a //go:build
// line, whose generated files must carry the constraint), runs the generator on it (checking the invariants of its
// intermediate form between its passes, asyncgen.Options.Check), writes
// each program's reference (the same source with every await blocking on
// its future) and a driver test, and runs go test there: each program runs generated and as its reference
// over several arguments and readiness schedules (same result or panic,
// same log, every future completed), and is cancelled at every await (the
// log is the reference's cancelled at the same await, the deferred calls
// due included; no future is left pending). It logs how many state
// machines came out with open-coded defers and how many with a slice of
// deferred closures, and fails a run of 30 programs or more without both.
// testdata/corpus holds programs that found bugs and runs with every batch;
// a file that says "// known: <bug>" is skipped until the generator is
// fixed.
//
// Long runs:
//
//	go test -run TestFuzzPrograms -args -progfuzz.n=3000 -progfuzz.seed=1000 -progfuzz.save=/tmp/found
//
// FuzzGenerator is a native fuzz target: the input's bytes drive the same
// generator, which may add one construct the generator may reject; the
// generator must accept the program, writing gofmt-clean code that
// type-checks, or reject that construct with positioned messages.
package progfuzz
