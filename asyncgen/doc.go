// Package asyncgen compiles async functions written in direct style into
// state-machine futures.
//
// A function whose doc comment holds the directive
//
//	//blitz:async
//
// and that waits by calling [github.com/blitz-go/blitz/future.Await] is
// compiled, into a file written beside its source (x.go gives x_async.go),
// into a constructor with the function's parameters that returns a
// [github.com/blitz-go/blitz/future.Future], a struct that holds the
// parameters and the locals that live across an await, a Poll that resumes
// where the function last waited and a Cancel that cancels the future in
// flight. The constructor's name is the function's with the suffix Async:
// from
//
//	//blitz:async
//	func lookup(c *Conn, key string) (string, error) { ... }
//
// the generator writes
//
//	func lookupAsync(c *Conn, key string) future.Future[future.Result[string]]
//
// A method gives a method of the same receiver, (c *Conn) readLine gives
// (c *Conn) readLineAsync, and a generic function a generic constructor with
// the same type parameters.
//
// A function with no results gives a Future[struct{}], one with a result T a
// Future[T], and one with results (T, error) a Future[future.Result[T]], the
// shape of the try-combinators and of a task's join handle. Results may be
// named; a bare return and deferred calls that change them work as in Go.
//
// The function may use statement sequences, if/else, for loops of every
// form, range loops over integers, slices, arrays and strings, switch and
// type switches, labels with break and continue, and return; it awaits with
// future.Await as a statement, as the right-hand side of =, := or op= to a
// variable, or as the value of return, and with future.Try, which awaits a
// Future[Result[T]] and yields (T, error), as a statement, as the right-hand
// side of x, err := or x, err = (either may be _), or as the value of return
// in a function whose results are (T, error):
//
//	n, err := future.Try(conn.Read(buf))
//	if err != nil {
//		return 0, err
//	}
//
// Every future is awaited the same way, whichever package made it: the
// marker takes the future, future.Try(c.Recv()), future.Await(mu.Lock()),
// future.Try(conn.Read(buf)). When the future comes from a call that
// returns a new *T for a future.Movable T (the channels' and syncprim's
// futures), the state machine holds a T by value, copied out of the new
// pointer, and polls it in place: the await allocates nothing once the
// call is inlined. A future kept in a variable and awaited later is held
// as the pointer it is.
//
// A future type held by value, whose pointer is the future, may also be
// awaited through the address of a local (x := NewT(); future.Await(&x));
// when the local is used for nothing but its declaration, assignments and
// that one await, in the statement list of the await with no await
// between, the state machine holds it by value too. Otherwise it lives in
// the state machine as any variable that lives across an await, and is
// awaited through its address.
//
// Either await may also be the init statement of an if, a switch or a for
// loop (if _, err := future.Try(f); err != nil { ... }). future.Await may
// also sit inside a larger expression, return future.Await(f), nil or if
// future.Await(f) > 0 or x := g(future.Await(f)): it is evaluated where Go
// evaluates it, after the calls to its left and before those to its right,
// and the right operand of && and || waits only if Go would evaluate it.
//
// Deferred calls work as in Go: the function and its arguments are evaluated
// at the defer statement, and the calls run last first when the function
// returns (after its results are evaluated), when the future is cancelled
// (after the future it awaits is cancelled) and when a panic leaves Poll
// (then the panic goes on). They cost what they do in Go: when each defer
// statement runs at most once per call (none is in a loop) and there are at
// most 8, the state machine keeps a bit per statement and, in fields, what
// each evaluates at the statement (the receiver, the function value, the
// arguments) unless the call can read it where it is: a constant, or a
// variable that nothing assigns after its declaration. defer s.Close() of a
// parameter s costs a bit and allocates nothing. A deferred function literal
// runs in place, and the variables it names become fields of the state
// machine; one that names the variable of a type switch's clause is kept as
// a closure (an allocation at the defer statement). Otherwise, with a defer
// in a loop or more than 8, every defer statement executed allocates a
// closure, kept in a list. recover cannot stop a panic there, since the
// state machine calls the deferred functions from a function of its own: a
// deferred function literal, or a deferred function or concrete method of
// any package (read from its source), that calls recover is rejected; a
// deferred call through an interface or a function value cannot be seen
// through, and a recover in it returns nil.
//
// future.Cx() in an async function is the Context of the poll running it
// (the generator passes Poll's own), to spawn a task on the same runtime
// without a Handle passed in: blitz.Spawn(future.Cx(), workAsync(x)). A
// spawned task's JoinHandle awaits with future.Try as (value, error); for a
// fallible async function (results (T, error)), blitz.SpawnFallible gives a
// handle that awaits as the function's own (T, error).
//
// Local constants work anywhere in the body, before or after an await: the
// generator declares them at package level, named after the state machine
// (lookupAsyncFuture_limit for a constant limit of lookup), since the code of
// one block of the function may end up in another case of Poll than its
// uses.
//
// An async function waits for whichever of several futures completes first
// with Go's select statement, each case receiving from future.On(f) (the
// select owns f: cancelled if its case loses) or future.OnKeep(f) (f stays
// pending for a later select: an Interval, a signal, a stop):
//
//	for {
//		select {
//		case t := <-future.OnKeep(iv):
//			...
//		case r := <-future.On(jobs.Recv()):
//			...
//		case <-future.OnKeep(stop):
//			return nil
//		}
//	}
//
// The operands are evaluated once, in order, on entering the select; a
// nil future's case is never chosen; default runs when no case is ready at
// once; break leaves the select; the case tried first turns from one
// execution to the next. The state machine keeps one future.Selecting per
// select and reuses its cases, so a select in a loop allocates nothing
// once warm. See future.On.
//
// An async function ranges over a stream whose values come one future at a
// time (a channel of package channels, anything with a method returning a
// Future[Result[T]]) with future.Each, as a goroutine ranges over a Go
// channel:
//
//	for j := range future.Each(jobs.Recv) {
//		...
//	}
//
// Each pass awaits next()'s future; the loop ends at the first error, a
// channel's close. break, continue and labels work as in any loop. When
// next is a method value of a variable that the function never assigns
// (jobs.Recv above), the method is called in each pass and its future held
// by value, so the loop allocates nothing; otherwise next is evaluated
// once, as Go evaluates a range expression. See future.Each.
//
// A function literal that awaits is written as the argument of
// future.Async (results T), future.AsyncFallible ((T, error)) or
// future.AsyncDo (none); the call is the literal's future, to spawn or
// await, in the place of a go statement:
//
//	for range workers {
//		set.Spawn(future.Cx(), future.Async(func() (done []result) {
//			for j := range future.Each(jobs.Recv) {
//				done = append(done, work(j))
//			}
//			return done
//		}))
//	}
//	all, err := future.Try(set.Values())
//
// The literal captures variables as a Go closure does, by reference (each
// iteration's own in a loop), and may hold defers, selects, future.Cx (its
// own Context) and async literals of its own. The generator makes it an
// async function of its own, named after the enclosing one
// (lookupAll_func1, constructor lookupAll_func1Async), whose parameters
// point at the variables it captures; the generated code names the
// literal's own lines. It refuses the marker outside an async function,
// with a function value in place of a literal, and inside a plain function
// literal.
//
// What the generator does not support yet (go, goto, a select over Go's
// channels, an await in a plain function literal, ...) it rejects with the
// position and what to write instead; it never accepts code whose meaning
// it would change.
//
// A generated file is compiled exactly when its source is: it carries the
// source's //go:build line and the constraint its name implies
// (x_linux.go's generated file, x_linux_async.go, says //go:build linux ||
// android). One run generates every file of a package, also those that the
// environment's build leaves out: a file for another GOOS or GOARCH, or for
// a set of tags, is generated in a load that includes it. A generated file
// whose source no longer holds an async function, or is gone, is removed.
// Test files may hold async functions too: x_test.go's generated file is
// x_async_test.go, compiled with the tests.
//
// The command blitzgen runs it from go generate. Add it to a module as a
// tool and name it in a go:generate line of the package:
//
//	go get -tool github.com/blitz-go/blitz/asyncgen/cmd/blitzgen
//	//go:generate go tool blitzgen
//
// The package may already call the constructors the run is about to write
// (the first run on new code): they are type-checked against their
// signatures, which the generator knows from the functions. The generated
// files are gofmt-clean, carry the Code generated header, and map their
// lines back to the source with //line directives, so compile errors and
// panics name the source's lines; commit them with the source.
//
// # Debugging the generator
//
// The generator compiles each function in passes; between lowering and
// printing, the function is a list of blocks, each a case of Poll's switch.
// blitzgen -dump NAME (or [Options.Dump]) prints that form for the async
// function NAME and writes no file. For
//
//	//blitz:async
//	func Lookup(get func(string) future.Future[string], keys []string, d time.Duration) (int, error) {
//		total := 0
//		for i := 0; i < len(keys); i++ {
//			var n int
//			s := future.Await(get(keys[i]))
//			n, err := strconv.Atoi(s)
//			...
//
// blitzgen -dump Lookup prints, among the rest:
//
//	kept:
//	  total field total     int
//	  i     field i         int                                forced
//	  n     local of Poll n int
//	generated fields:
//	  aw1 future.Future[string] awaited future
//	...
//	b1; from b0 b3
//	  live in: get keys d total i
//	  lookup.go:14     loop test    if !(i < len(keys))  -> b4
//	  lookup.go:15     statement    var n int
//	  lookup.go:16     await        aw1 = get(keys[i])  -> b2
//	  live out: get keys d total i
//	b2 resumes aw1; from b1
//	  ...
//
// Each block lists its items with their source lines, the blocks it goes
// on at (->), and the variables live into and out of it; "kept" tells
// where each variable that outlives a block lives: a field of the state
// machine, or a local of Poll when no await separates its writes from its
// reads. blitzgen -check (or [Options.Check]) checks the invariants of
// this form between the passes and reports a broken one as a bug of the
// generator, wrapping [ErrInvariant].
package asyncgen
