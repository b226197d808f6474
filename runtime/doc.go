// Package runtime is the old import path of blitz for Go's runtime, kept for
// one minor version so that existing programs keep building. It was renamed
// because the name runtime shadowed the standard library's runtime package,
// which servers import beside it (for runtime.GOMAXPROCS,
// runtime.NumGoroutine, runtime.ReadMemStats), forcing one of the two to be
// imported under another name.
//
// Deprecated: this package moved to github.com/blitz-go/blitz, package blitz:
// import "github.com/blitz-go/blitz" and write blitz.X where you wrote
// runtime.X. This package, the module github.com/blitz-go/blitz/runtime,
// will be removed in the next minor version.
//
// Every exported identifier here forwards to the same name in package blitz:
//
//   - types are aliases (generic ones generic aliases), so a *runtime.Runtime
//     is a *blitz.Runtime, with the same methods, and code using the old and
//     the new path can be mixed freely while migrating;
//   - functions are wrappers with the same signatures, except NetConn,
//     NetListener and NewTLSListener, which are variables holding the blitz
//     functions themselves (their parameters are interfaces with unexported
//     methods that no other package can spell): calls to them compile as
//     before;
//   - constants are the blitz constants;
//   - variables are copies of the blitz variables, made when the program
//     starts. They are all sentinel errors, which package blitz never
//     reassigns, so a copy is the very same error value: errors.Is(err,
//     runtime.ErrShutdown) and errors.Is(err, blitz.ErrShutdown) agree, for
//     errors from either path.
//
// The migration is one line per file:
//
//	import "github.com/blitz-go/blitz/runtime" // before: runtime.New(runtime.Config{})
//	import "github.com/blitz-go/blitz"         // after:  blitz.New(blitz.Config{})
//
// and github.com/blitz-go/blitz/runtime/inspect became
// github.com/blitz-go/blitz/inspect.
//
// The forwarding declarations are generated from package blitz by
// `go tool mage forwarders`.
package runtime
