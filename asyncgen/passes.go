package asyncgen

// The passes. Start here to follow how an async function becomes a state
// machine. Each pass is a named function with one input form and one
// output form; the state it writes is in the struct named beside it, which
// later passes only read (the exceptions are listed with the structs
// below). The pipeline of one function is funcPasses, run in order by
// compileFunc; the passes before and after it work on whole packages and
// files.
//
//	pass        input                          output                                  code
//	----        -----                          ------                                  ----
//	1 load      package patterns               type-checked packages (go/packages),    GenerateFiles, bootstrap.go
//	                                           the stubs of constructors to be written
//	2 collect   a package's files              per file a fileGen; its functions       generateFile
//	                                           marked //blitz:async
//	3 shape     the FuncDecl                   the result's shape (fnCtx.resType,      shape.go
//	                                           resKind, named); rejects others
//	4 name      the FuncDecl                   the namespaces and every name the       shape.go
//	                                           generated code declares (fnCtx)
//	4b consts   the body                       the local constants, renamed and taken  consts.go
//	                                           out of the body (fnCtx.constDecls)
//	4c context  the body                       future.Cx() replaced by Poll's context  cxmarker.go
//	                                           parameter
//	4d select   the body                       nothing: the selects over futures were  selectsugar.go
//	                                           rewritten before the load; a marker
//	                                           left (future.On) is rejected
//	5 survey    the body                       facts lowering needs: awaited locals    awaited.go, opendefer.go
//	                                           (gen.addrOnly), the form of the defers
//	                                           (deferForm); rejects awaits as values
//	6 lower     the body                       blocks of items (funcIR); rejects what  lower.go, nested.go, ir.go
//	                                           it cannot lower
//	7 keep      blocks                         the variables kept across blocks:       keep.go, polllocal.go
//	                                           fields or locals of Poll (kept)
//	8 cells     blocks, kept                   the per-iteration kept variables        cells.go
//	                                           (kept.cells)
//	9 layout    blocks, kept                   the imports the copied code needs, the  keep.go, opendefer.go
//	                                           variables deferred calls read in place
//	                                           (kept.stableVars)
//	10 emit     blocks, kept, deferForm        the function's Go source (emitted),     emit.go, the emit* methods
//	                                           by an emitter
//	11 format   the functions' source          the file: imports, gofmt, //line        generateFile
//	                                           numbers
//
// A pass that rejects a construct records an *Error in gen.errs; the
// pipeline stops after shape, lower and cells if any was recorded (the
// passes after them assume an accepted function), so every message of a
// function comes out in one run.
//
// # Checks
//
// With Options.Check, the invariants a pass establishes are checked right
// after it (check.go): that is the hook the tests use, over the golden
// packages, the equivalence functions and every program of the fuzzer. A
// violation is a bug of the generator, an error that wraps ErrInvariant.
//
// # Dump
//
// With Options.Dump naming a function, its intermediate form is printed
// (dump.go): blocks, items, successors, the variables live into and out of
// each block, the kept variables and the generated fields. It is printed as
// emission receives it, after layout (emission rewrites the items'
// statements in place, in the source's syntax trees), or after the last
// pass that ran if one rejected the function or broke an invariant.
// blitzgen -dump NAME prints it.

import (
	"cmp"
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// funcPass is one pass of the pipeline of a function.
type funcPass struct {
	name string
	run  func(g *gen)
	// stop: the pipeline ends after this pass if a construct was rejected.
	stop bool
	// check returns the invariants of the pass's output that do not hold,
	// one message each; nil if it has none to check. Run only when
	// Options.Check is set and nothing was rejected.
	check func(g *gen) []string
}

// funcPasses is the pipeline of one async function, in order (see the top
// of this file).
var funcPasses = []funcPass{
	{name: "shape", run: (*gen).shape, stop: true},
	{name: "name", run: (*gen).nameMachine},
	{name: "consts", run: (*gen).hoistConsts, stop: true},
	{name: "context", run: (*gen).replaceCx, stop: true},
	{name: "select", run: (*gen).rejectSelectMarkers, stop: true},
	{name: "survey", run: (*gen).survey},
	{name: "lower", run: (*gen).lower, stop: true, check: checkBlocks},
	{name: "keep", run: (*gen).hoist, check: checkKept},
	{name: "cells", run: (*gen).markCells, stop: true, check: checkCells},
	{name: "layout", run: (*gen).layout},
	{name: "emit", run: (*gen).emitFunc, check: checkEmitted},
}

// compileFunc runs funcPasses over fn and returns its generated code (the
// type, constructor, Poll and Cancel, not yet formatted), with the checks
// and the dump that opts asks for. Called by generateFile, once per async
// function of the file, in source order.
func (fg *fileGen) compileFunc(fn *ast.FuncDecl, opts *run) (string, error) {
	g := newGen(fg, fn)
	unnamed := len(fg.unnamed)
	last := ""
	var bad error
	dump := opts.dumps(g)
	for _, p := range funcPasses {
		if p.name == "emit" && dump {
			// Emission rewrites the items' statements in place (the
			// source's syntax trees): the form is dumped as it receives it.
			dumpFunc(opts.dumpTo(), g, last)
			dump = false
		}
		p.run(g)
		last = p.name
		if opts.Check && p.check != nil && len(g.errs) == 0 {
			if msgs := p.check(g); len(msgs) > 0 {
				bad = invariantError(g, p.name, msgs)
				break
			}
		}
		if p.stop && len(g.errs) > 0 {
			break
		}
	}
	if dump {
		dumpFunc(opts.dumpTo(), g, last)
	}
	if bad != nil {
		return "", bad
	}
	if len(fg.unnamed) > unnamed && len(g.errs) == 0 {
		g.rejectUnnamed(fg.unnamed[unnamed])
	}
	if len(g.errs) > 0 {
		if errs := slices.DeleteFunc(g.errs, func(e error) bool { return e == errToldAlready }); len(errs) > 0 {
			return "", errors.Join(errs...)
		}
		return "", errToldAlready
	}
	return g.out.code, nil
}

// errToldAlready refuses a function for a construct whose refusal was
// reported before its compilation (an async function literal left as
// written): it stops the function without a second message.
var errToldAlready = errors.New("blitzgen: refused, and reported, before compilation")

// newGen returns the state of fn's compilation before its first pass.
func newGen(fg *fileGen, fn *ast.FuncDecl) *gen {
	return &gen{fnCtx: &fnCtx{fileGen: fg, fn: fn}, deferForm: &deferForm{}}
}

// The state of one function's compilation, split by the passes that write
// it. gen holds all of it for the passes up to layout; emission gets an
// emitter, built from the parts it reads (fnCtx, deferForm, funcIR, kept)
// and its own state, so it cannot reach the lowering's.

// fnCtx is what every pass of one function reads: its declaration, the
// shape of its results, the names of the state machine and of the
// identifiers the generated code declares, and the namespaces in which
// passes reserve names. Its helper methods (fnctx.go) read only it and the
// file's fileGen.
type fnCtx struct {
	*fileGen
	fn *ast.FuncDecl

	// Written by shape, read by every later pass.
	resType string       // T of Future[T]
	resKind int          // 0 none, 1 one value, 2 (T, error)
	named   []*ast.Ident // the named results, if they are

	// The namespaces, made by name: names holds the identifiers of the
	// function and those declared in Poll, fields the struct's field and
	// method names. Every pass from name on reserves names in them
	// (fresh, freshIn); none removes one.
	names  map[string]bool
	fields map[string]bool

	// Written by name, read by later passes: the identifiers the
	// generated code declares (the receiver, Poll's context parameter,
	// the error and value of a returned result, the poll result and the
	// loop label), and the names of the state machine.
	recv, cx, errName, ready, value, label string

	// Written by consts, read by layout and emission: the local const
	// declarations, taken out of the body and renamed, to be declared at
	// package level.
	constDecls []*ast.GenDecl

	typeName string // the state machine's type
	ctorName string // the constructor
	selfType string // typeName with its type arguments
	selfRef  string // an expression naming the direct-style function (a method expression for a method)
	tparams  string // the type parameter list of a generic function or of a method's receiver: "[T any, U comparable]"; "" if none
	targs    string // the type parameters as arguments: "[T, U]"
}

// deferForm is how the function's defer statements run. Written by survey
// (findDeferSites); read by lower (an open-coded site's literal) and by
// emission, which also sets each site's call.
type deferForm struct {
	// defers is the field that holds the deferred calls: the slice of
	// closures, or the bits of an open-coded function; "" if the function
	// has no defer statement. deferFn names the temporary that holds a
	// deferred call's function.
	defers  string
	deferFn string
	// Open-coded defers (opendefer.go): the sites by the position of
	// their defer keyword, and in source order; nil in the general form.
	siteAt   map[token.Pos]*deferSite
	siteList []*deferSite
}

// funcIR is the block form of the function (ir.go). Written by lower;
// read by keep, cells, layout and emission (which marks the blocks it
// jumps to as targeted, and no more).
type funcIR struct {
	blocks      []*block            // by id: blocks[i].id == i
	labels      map[string]*loopCtx // lowered loops and switches by label
	implicit    []*types.Var        // the variables of lowered type switches' clauses
	loops       []ast.Node          // lowered loops, for per-iteration checks
	synth       map[*types.Var]bool // the linearizer's temporaries
	forced      map[*types.Var]bool // variables that must be fields (declared out of their scope, named by an open-coded literal)
	rangeFields []string            // generated fields ("name type") of lowered range loops

	// The fields of awaited futures (awaited.go).
	awFields map[string]string     // the key of a future's type (see awaitField) -> its field
	awOrder  []string              // the keys, in the order of their fields
	awType   map[string]string     // field -> its type, as printed
	awZero   map[string]string     // field -> the value that empties it
	awValue  map[string]bool       // the fields that hold a future by value (an awaited local, or moved)
	awMoved  map[string]bool       // the fields that hold a copy of a new Movable future, assigned at the await
	awIface  map[string]bool       // the fields of an interface type, Future[V] (nil when the user awaits nil)
	awCount  int                   // the awN fields named so far
	awLocals map[*types.Var]string // locals awaited through their address, held as fields of their own type: the field
}

// kept is where the variables live that outlive one block. Written by
// keep (hoist) and completed by cells (cells) and layout (stableVars);
// read by emission.
type kept struct {
	// hoisted: the variables that are not locals of one case, by their
	// field, or their name as a local of Poll; hoistList the fields in
	// order, pollList the locals of Poll in order.
	hoisted   map[*types.Var]string
	pollLocal map[*types.Var]bool // hoisted variables that are locals of Poll (see polllocal.go)
	shared    map[*types.Var]bool // hoisted variables kept in the field of the future they are awaited as (awaited.go)
	hoistList []*types.Var
	pollList  []*types.Var

	resFields    []string // the fields of the named results
	blankResults []string // generated fields ("name type") of blank named results

	cells      map[*types.Var]string // per-iteration variables kept by reference: the name of a copy of their pointer (cells)
	stableVars map[*types.Var]bool   // see stable (layout)
}

// gen is the state of the passes from shape to layout, and the output of
// emission. The parts are nil until the pass that makes them: funcIR
// until lower, kept until keep.
type gen struct {
	*fnCtx
	*deferForm
	*funcIR
	*kept

	errs []error // the constructs rejected, by every pass up to cells

	// Written by survey, read by lower (awaitField).
	addrOnly     map[*types.Var]bool // locals used only by declarations, assignments and one await of their address
	addrAssigned map[*types.Var]bool // those of them assigned besides their declaration

	// Lowering's own.
	cur    *block // the block being filled
	label0 string // the label of the loop or switch being lowered

	out *emitted // written by emit
}

// emitted is the output of emission for one function.
type emitted struct {
	code  string // the type, constructor, Poll, runDefers and Cancel
	cases []int  // the blocks emitted as cases of Poll's switch, in order
}

// emitter is the state of emission: what it reads from the earlier passes,
// and what it writes as it prints.
type emitter struct {
	*fnCtx
	*deferForm
	*funcIR
	*kept

	labelUse    bool                // the poll label is the target of a continue
	pollIdent   map[*ast.Ident]bool // the identifiers the rewrite made for locals of Poll
	cellDerefs  map[ast.Expr]bool   // the (*f.x) the rewrite made for cells, never nil pointers
	captures    []*types.Var        // the cells the item being emitted refers to from function literals
	deferArg    []string            // the temporaries of deferred calls' arguments
	deferFields []string            // generated fields ("name type // ...") of open-coded defers' values
	cases       []int               // the blocks emitted as cases
	sites       []string            // the await sites' registrations, in order (awaitSite)
	sitesVar    string              // the name of their array (sitesName)
}

// shape is pass 3: the function must have a body and a result list the
// generator shapes.
func (g *gen) shape() {
	if g.fn.Body == nil {
		g.reject(g.fn.Pos(), "an async function needs a body")
	}
	g.resultShape()
}

// survey is pass 5: what lowering needs to know about the whole body
// before it starts.
func (g *gen) survey() {
	g.findAddrOnly()
	g.findDeferSites()
	g.rejectAwaitValues()
}

// lower is pass 6: the body into blocks, from block 0.
func (g *gen) lower() {
	g.funcIR = &funcIR{
		forced:   map[*types.Var]bool{},
		awFields: map[string]string{},
		awType:   map[string]string{},
		awZero:   map[string]string{},
		awValue:  map[string]bool{},
		awMoved:  map[string]bool{},
		awIface:  map[string]bool{},
		awLocals: map[*types.Var]string{},
	}
	g.cur = g.newBlock()
	g.cur.targeted = true
	if !g.lowerList(g.fn.Body.List, nil) {
		g.add(endItem{pos: g.fn.Body.Rbrace})
	}
}

// layout is pass 9: the imports the printed code needs, and for
// open-coded defers the variables read in place.
func (g *gen) layout() {
	g.collectImports()
	if g.siteAt != nil {
		g.findStable()
	}
}

// emitFunc is pass 10: an emitter prints the function from the parts of
// g it reads.
func (g *gen) emitFunc() {
	e := &emitter{
		fnCtx: g.fnCtx, deferForm: g.deferForm, funcIR: g.funcIR, kept: g.kept,
		pollIdent: map[*ast.Ident]bool{},
	}
	code := e.emit()
	g.out = &emitted{code: code, cases: e.cases}
}

func (g *gen) reject(p token.Pos, format string, args ...any) {
	g.errs = append(g.errs, &Error{Pos: g.pos(p), Msg: fmt.Sprintf(format, args...)})
}

// rejectUnnamed refuses the function whose state machine must hold a value
// of type bad, which this package cannot name, at the first variable of
// the function whose type holds it.
func (g *gen) rejectUnnamed(bad string) {
	// Emission rewrote the body's identifiers in place: the variables are
	// found through the type information, by position.
	pos, name := g.fn.Name.Pos(), ""
	for id, obj := range g.info.Defs {
		v, ok := obj.(*types.Var)
		if !ok || id.Pos() < g.fn.Pos() || id.Pos() >= g.fn.End() || (name != "" && id.Pos() > pos) {
			continue
		}
		if g.unnamable(v.Type(), map[types.Type]bool{}) == bad {
			pos, name = id.Pos(), id.Name
		}
	}
	what := "a value"
	if name != "" {
		what = "a variable " + name
	}
	g.reject(pos, "%s of type %s, which its package does not export, is not supported in an async function (the state machine, declared in this package, cannot name the type); write var %s I = ... with an exported type or interface I that it satisfies instead", what, bad, cmp.Or(name, "x"))
}
