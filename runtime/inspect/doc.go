// Package inspect is the old import path of blitz for Go's runtime inspector
// (Prometheus metrics, expvar, the console page), kept for one minor version
// so that existing programs keep building. It moved with the runtime, whose
// package was renamed from runtime to blitz (at github.com/blitz-go/blitz)
// because the name runtime shadowed the standard library's runtime package,
// which servers import beside it (for runtime.GOMAXPROCS,
// runtime.NumGoroutine, runtime.ReadMemStats).
//
// Deprecated: this package moved to github.com/blitz-go/blitz/inspect: import
// "github.com/blitz-go/blitz/inspect" instead. The package keeps its name,
// inspect, so only the import path changes. This package will be removed,
// with the module github.com/blitz-go/blitz/runtime, in the next minor
// version.
//
// Every exported identifier here forwards to the same name in
// github.com/blitz-go/blitz/inspect: functions are wrappers with the same
// signatures, and ErrExpvarName is a copy of the new package's sentinel error,
// which that package never reassigns, so errors.Is matches it from either
// path.
//
// The forwarding declarations are generated from
// github.com/blitz-go/blitz/inspect by `go tool mage forwarders`.
package inspect
