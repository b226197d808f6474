// Package progfuzz fuzzes the blitzgen generator with generated programs.
//
// [Generate] writes, from a seed, an async function over an Env like the
// equivalence harness's (futures whose readiness a seeded schedule decides,
// and a log of side effects): statement sequences, :=, = and op= with
// awaits on the right or nested in expressions, local constants (untyped,
// typed, iota groups, reading each other), awaits as statements,
// future.Try, if/else chains, every for form, range over integers, slices,
// arrays and strings and over a stream of futures (future.Each, in each
// of its forms), switch and type switch with fallthrough, labeled
// break and continue, early returns, panics, defer (of calls whose
// arguments are evaluated at the statement, of value and interface methods,
// of literals with or without arguments, of calls that may panic), closures
// called at once or later (capturing each iteration's variables), async
// function literals (future.Async, AsyncFallible, AsyncDo) awaited where
// they are made, whose bodies await, loop, defer, panic and read and write
// the variables and local constants they capture (the reference calls the
// literal there), pointers,
// a struct with a pointer method, slices of arrays, maps, buffered
// channels, block statements, shadowed names (names the generated code uses
// among them), named results, methods, generic functions, methods of a
// generic type, and a second async function that the program awaits.
// Half the programs also use the module's other packages: lib, and a/util
// and b/util, two packages both named util, imported with text/template
// and html/template (also both named template), one of each pair under
// another name (b/util and a template package sometimes with a dot), so
// that two packages of one name have variables kept across awaits. Those programs keep variables of
// the packages' types across awaits: structs with pointer and value
// methods, named types, interfaces (one embedding another), structs
// embedding structs by value and by pointer, another package's struct and
// an interface (lib.Tally, and Wrapped in the programs' package, which
// embeds lib.Tally and *lib.Cell[string]), whose promoted fields and
// methods they use, defer and take as method values, and instances of
// lib's generic types (Cell[T], Pair[K, V], Stack[T]) with this package's,
// lib's and a util's types as arguments. They await lib's own async
// functions (a method, a generic function, a method of a generic type,
// reached also as promoted methods of embedding structs, and one that
// awaits another) and an async function generated for the program into
// lib (which may use lib's types, unqualified, and the other packages);
// a local may take an imported package's name before a return. Every
// step notes a side effect; arithmetic stays small and never divides; loops
// are bounded; an expression that awaits holds no other call that writes,
// since Go leaves the order of such calls and variable reads unspecified.
// Every program type-checks.
//
// TestFuzzPrograms writes a batch of programs into a temporary module (its
// own go.mod, reaching the repository's future and waker modules by
// replace, with the packages lib, a/util and b/util; the files placed as a
// user's are: one in five in a test file, one in five in a file named for
// the GOOS, one in five behind a //go:build line, whose generated files
// must carry the constraint), runs the generator on all its packages
// (./..., checking the invariants of its intermediate form between its
// passes, asyncgen.Options.Check), writes
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
// fixed. A corpus file is the program's file; a program with an async
// function in lib has lib's file after a line "// ---- lib ----".
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
