package progfuzz

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

// Result is the result list of a generated function.
type Result int

const (
	// NoResult is a function without results (a Future[struct{}]).
	NoResult Result = iota
	// IntResult is a function returning int (a Future[int]).
	IntResult
	// IntErrResult is a function returning (int, error) (a
	// Future[Result[int]]).
	IntErrResult
)

// Program is one generated async function.
type Program struct {
	Name   string
	Result Result
	// Named is set when the results are named res (and rerr).
	Named bool
	// Receiver is "", "*Rec", "Rec", "*Box[N]" or "Box[N]": the function
	// is a method of Rec or of the generic Box (instantiated with Num), its
	// receiver named r.
	// Rec, its receiver named r.
	Receiver string
	// Generic is set when the function is generic, func name[N ~int](e
	// *Env, n N), to be instantiated with Num.
	Generic bool
	// Source is the function's declaration, its //blitz:async directive
	// included; it uses the parameters e *Env and n int, the package's
	// import of future and nothing else.
	Source string
	// Awaits counts the await statements written (some may never run).
	Awaits int
	// Helper, if not empty, is the name of an async function
	// func Helper(e *Env, n int) int that Source declares first and the
	// program awaits (future.Await(HelperAsync(e, x))).
	Helper string
	// WildLine is the line of Source (from 1) where GenerateWild put a
	// construct the generator rejects; 0 if there is none.
	WildLine int
	// Imports are the import specs, one a line, that Source needs
	// besides future's: the module's other packages (lib, a/util, b/util)
	// and text/template and html/template, some under other names.
	Imports string
	// Lib, if not empty, is a file of the package lib without its package
	// clause and imports (future's and LibImports), declaring the async
	// function LibHelper, func LibHelper(e Env, n int) int (or (int,
	// error), or generic over N ~int) that Source awaits
	// (future.Await(lib.LibHelperAsync(e, x))).
	Lib       string
	LibHelper string
	// LibImports are the import specs of Lib besides future's, one a
	// line: the async function of lib may use lib's types and the other
	// packages too.
	LibImports string
}

// Generate writes the program of one seed; the same seed gives the same
// program.
func Generate(name string, seed uint64) Program {
	return GenerateFrom(name, rand.NewPCG(seed, 0xb11e))
}

// GenerateFrom writes a program drawing its choices from src.
func GenerateFrom(name string, src rand.Source) Program {
	return generate(name, src, false)
}

// GenerateWild is GenerateFrom that may also write one construct the
// generator may reject (go, select, a local type, future.Try nested in an
// expression, an await in a function literal, in a block, in a deferred
// call's arguments or in a case expression, a range over a map that awaits,
// a deferred recover), at Program.WildLine.
func GenerateWild(name string, src rand.Source) Program {
	return generate(name, src, true)
}

func generate(name string, src rand.Source, wild bool) Program {
	g := &gen{rng: rand.New(src), budget: 14 + int(src.Uint64()%uint64(max(1, MaxStatements-13))), wild: wild}
	g.result = Result(g.rng.IntN(3))
	g.named = g.result != NoResult && g.chance(0.25)
	switch g.rng.IntN(6) {
	case 0:
		g.receiver = "*Rec"
	case 1:
		g.receiver = "Rec"
	case 2:
		g.generic, g.nGen = true, true
	case 3:
		// A method of a generic type.
		g.receiver, g.generic = "*Box[N]", true
		if g.chance(0.5) {
			g.receiver = "Box[N]"
		}
	}
	// One program in two uses the module's other packages.
	g.pkgs = g.chance(0.5)
	if g.pkgs {
		g.choosePkgNames()
	}
	var lib Program
	if g.pkgs && g.chance(0.4) {
		// An async function of lib that the program awaits.
		h := &gen{rng: g.rng, budget: 2 + g.rng.IntN(6), result: IntResult, env: "Env", inLib: true}
		if g.chance(0.3) {
			h.result = IntErrResult
		}
		if g.chance(0.3) {
			h.generic, h.nGen = true, true
		}
		if g.chance(0.5) {
			// It uses lib's own types, and the other packages.
			h.pkgs = true
			h.budget += 4
			h.choosePkgNames()
		}
		lib = h.function(strings.ToUpper(name[:1]) + name[1:] + "h")
		lib.LibImports = h.importSpecs()
		g.libHelper, g.libResult, g.libGeneric = lib.Name, lib.Result, lib.Generic
	}
	var helper Program
	if g.chance(0.3) {
		// A small async function that the program awaits.
		h := &gen{rng: g.rng, budget: 2 + g.rng.IntN(6), result: IntResult}
		helper = h.function(name + "h")
		g.helper = helper.Name
	}
	p := g.function(name)
	if g.helper != "" {
		p.Helper = helper.Name
		p.Source = helper.Source + "\n" + p.Source
		p.Awaits += helper.Awaits
		p.WildLine += strings.Count(helper.Source, "\n") + 1
		if g.wildLine == 0 {
			p.WildLine = 0
		}
	}
	if g.libHelper != "" {
		p.Lib, p.LibHelper, p.LibImports = lib.Source, lib.Name, lib.LibImports
		p.Awaits += lib.Awaits
	}
	p.Imports = g.importSpecs()
	return p
}

// MaxStatements bounds the statements of a program (from 14 up to it).
var MaxStatements = 39

// Cells reports whether a function literal may capture, and & take the
// address of, a variable declared in a loop (each iteration's own
// variable, which the generator keeps in a heap cell).
var Cells = true

// ShadowFuture reports whether a program may declare a variable named
// future (which shadows the package) before a return, outside loops (in
// a loop without awaits the generator rejects it, since the generated
// return there would name the package).
var ShadowFuture = true

// kind is the type of a variable of a generated program.
type kind int

const (
	kInt kind = iota
	kRune
	kStr
	kErr
	kSlice // []int
	kArr   // [3]int
	kAny
	kFunc    // func(int) int
	kPtr     // *int
	kFuncs   // []func() int
	kChan    // chan int, buffered
	kCounter // Counter, a struct with a pointer method
	kMap     // map[int]int
	kGen     // N, the type parameter of a generic program (~int)

	// The other packages' types (in programs that use them).
	kAcc     // lib.Acc: a struct with pointer and value methods
	kScore   // lib.Score: a named int with a method
	kShape   // lib.Shape: an interface (lib.Square or *lib.Rect)
	kTally   // lib.Tally: embeds lib.Acc, *lib.Meta, a/util's Bag, lib.Shape
	kWrap    // Wrapped: embeds lib.Tally, *lib.Cell[string] and Inner
	kLabeled // lib.Labeled: an interface embedding lib.Shape
	kCell    // *lib.Cell[E]
	kPair    // lib.Pair[K, E]
	kStack   // lib.Stack[E]
	kABag    // a/util's Bag
	kBBag    // b/util's Bag
	kID      // a/util's ID
	kName    // b/util's Name
	kTT      // *text/template.Template
	kHT      // *html/template.Template
)

type variable struct {
	name string
	kind kind
	// field marks r.base, the receiver's field: an await may not be
	// assigned to it directly.
	field bool
	// loops is the number of loops around the declaration (inside the
	// function or the innermost function literal): a function literal
	// captures only variables declared outside every loop, since the
	// generator rejects capturing a per-iteration variable.
	loops int
	// readOnly marks a loop counter, which the body must not assign, and
	// a constant.
	readOnly bool
	// isConst marks a local constant: readOnly, and usable in the
	// expression of another constant.
	isConst bool
	// elem and key are the type arguments (indexes of elemTypes) of a
	// variable of a generic type of lib (kCell, kPair, kStack).
	elem, key int
}

type scope struct {
	vars []*variable
	// barrier marks the scope of a function literal's body: lookups
	// through it see only variables that may be captured.
	barrier bool
}

// target is a statement that break or continue may name: a loop or a
// switch.
type target struct {
	loop  bool
	label string
	used  bool
}

type gen struct {
	rng    *rand.Rand
	result Result
	named  bool
	helper string // the async function the program may await
	// env is the type of the parameter e: "*Env", or lib's "Env" for an
	// async function of lib.
	env string
	// pkgs is set when the program uses the other packages, imported
	// under names (by importPaths' keys), used marks those it names.
	pkgs  bool
	names map[string]string
	used  map[string]bool
	// inLib is set for an async function of lib, which names lib's
	// types unqualified (and cannot name Wrapped).
	inLib bool
	// libHelper is lib's async function the program may await.
	libHelper  string
	libResult  Result
	libGeneric bool
	nGen       bool // n is of the type parameter N
	receiver   string
	generic    bool
	lines      []string
	indent     int
	scopes     []*scope
	// targets are the enclosing loops and switches, innermost last;
	// nil inside a function literal's body, whose statements cannot
	// jump out of it.
	targets []*target
	loops   int // loops around the current statement
	inLit   bool
	// inAsyncLit says the statement is in an async function literal
	// (future.Async and kin): it may await, but not return from or jump
	// out of the function.
	inAsyncLit bool
	budget     int // statements left to write
	depth      int // nesting of blocks
	ids        int // statement counter, for distinct log lines and names
	asyncLits  int // async function literals written
	awaits     int
	// wild, when set, makes the program hold one construct the
	// generator rejects, at line wildLine of the source.
	wild     bool
	wildLine int
}

func (g *gen) emit(format string, args ...any) {
	g.lines = append(g.lines, strings.Repeat("\t", g.indent)+fmt.Sprintf(format, args...))
}

func (g *gen) id() int { g.ids++; return g.ids }

func (g *gen) chance(p float64) bool { return g.rng.Float64() < p }

func (g *gen) push(barrier bool) { g.scopes = append(g.scopes, &scope{barrier: barrier}) }
func (g *gen) pop()              { g.scopes = g.scopes[:len(g.scopes)-1] }

// declare adds a variable to the innermost scope.
func (g *gen) declare(name string, k kind) *variable {
	v := &variable{name: name, kind: k, loops: g.loops}
	s := g.scopes[len(g.scopes)-1]
	s.vars = append(s.vars, v)
	return v
}

// visible returns the variables of kind k that the current statement may
// use (the innermost declaration of each name; through a function
// literal's barrier only those declared outside every loop).
func (g *gen) visible(k kind, assign bool) []*variable {
	var out []*variable
	seen := map[string]bool{}
	barrier := false
	for i := len(g.scopes) - 1; i >= 0; i-- {
		s := g.scopes[i]
		for j := len(s.vars) - 1; j >= 0; j-- {
			v := s.vars[j]
			if seen[v.name] {
				continue
			}
			seen[v.name] = true
			if v.kind != k || (barrier && v.loops > 0 && !Cells) || (assign && v.readOnly) {
				continue
			}
			out = append(out, v)
		}
		if s.barrier {
			barrier = true
		}
	}
	return out
}

func (g *gen) pick(k kind, assign bool) *variable {
	vs := g.visible(k, assign)
	if len(vs) == 0 {
		return nil
	}
	return vs[g.rng.IntN(len(vs))]
}

// pickVar is pick for an assignment that only a variable may take (an
// await's, a range's): not the receiver's field.
func (g *gen) pickVar(k kind) *variable {
	var vs []*variable
	for _, v := range g.visible(k, true) {
		if !v.field {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil
	}
	return vs[g.rng.IntN(len(vs))]
}

// inScope reports whether name is declared in the innermost scope.
func (g *gen) inScope(name string) bool {
	for _, v := range g.scopes[len(g.scopes)-1].vars {
		if v.name == name {
			return true
		}
	}
	return false
}

var pools = map[kind][]string{
	kInt:     {"a", "b", "x", "y", "k", "x2", "v", "f", "utf8", "new", "true", "state", "ready", "cx", "aw1", "prev", "tmp", "tmp2"},
	kStr:     {"s", "t"},
	kErr:     {"err"},
	kSlice:   {"xs", "ys"},
	kArr:     {"arr"},
	kAny:     {"anyv"},
	kFunc:    {"fn"},
	kPtr:     {"p", "q"},
	kGen:     {"g", "h"},
	kFuncs:   {"fns"},
	kChan:    {"ch"},
	kCounter: {"cnt", "c"},
	kMap:     {"m"},
	kAcc:     {"acc", "ac"},
	kScore:   {"sc", "score"},
	kShape:   {"sh", "shape"},
	kTally:   {"tl", "tally"},
	kWrap:    {"w", "wr"},
	kLabeled: {"lb", "lbl"},
	kCell:    {"cl", "cell"},
	kPair:    {"pr", "pair"},
	kStack:   {"st", "stack"},
	kABag:    {"ab", "bag"},
	kBBag:    {"bb", "bag2"},
	kID:      {"id", "ident"},
	kName:    {"nm", "name"},
	kTT:      {"tt", "tx"},
	kHT:      {"ht", "hx"},
}

// outsideLoops are names that the generated code uses itself (a package
// it imports, a predeclared function or constant): a local of that name
// becomes a field, and is rejected in a loop without awaits, whose code is
// copied as it is. The generator declares them outside loops only.
var outsideLoops = map[string]bool{"utf8": true, "new": true, "true": true}

// TypeSwitchShadowBug keeps the names of outsideLoops out of a type
// switch's binding. A copied type switch binding such a name once read
// fields it never set; the generator now refuses the name there (see
// testdata/reject in the asyncgen module), so programs must not use it.
var TypeSwitchShadowBug = true

// newName returns a name for a new variable of kind k in the innermost
// scope: often one that an outer scope already has (shadowing it), never
// one the innermost scope has.
func (g *gen) newName(k kind) string {
	pool := pools[k]
	for range 3 {
		name := pool[g.rng.IntN(len(pool))]
		if outsideLoops[name] && (g.loops > 0 || g.inLit || g.inAsyncLit) {
			continue
		}
		if !g.inScope(name) {
			return name
		}
	}
	return fmt.Sprintf("%s%d", pool[0], g.id())
}

// note records v's value in the log (and uses it, so that the program
// compiles).
func (g *gen) note(v *variable) {
	if v.kind >= kAcc {
		format, args := g.show(v)
		g.emit("e.Note(\"s%d %s %s\", %s)", g.id(), v.name, format, args)
		return
	}
	verb := "%d"
	if v.kind == kStr || v.kind == kErr || v.kind == kAny || v.kind == kSlice || v.kind == kArr || v.kind == kMap {
		verb = "%v"
	}
	if v.kind == kStr {
		verb = "%q"
	}
	if v.kind == kFunc {
		g.emit("e.Note(\"s%d %s()=%%d\", %s(%s))", g.id(), v.name, v.name, g.intExpr(1))
		return
	}
	g.emit("e.Note(\"s%d %s=%s\", %s)", g.id(), v.name, verb, v.name)
}

// intExpr is an int expression without calls or awaits whose value stays
// small: variables, small constants, lengths, + - and multiplication and
// remainder by constants.
func (g *gen) intExpr(depth int) string {
	if depth <= 0 || g.chance(0.3) {
		return g.intAtom()
	}
	a, b := g.intExpr(depth-1), g.intExpr(depth-1)
	switch g.rng.IntN(5) {
	case 0:
		return fmt.Sprintf("%s + %s", a, b)
	case 1:
		return fmt.Sprintf("%s - %s", a, b)
	case 2:
		return fmt.Sprintf("(%s) * %d", a, 2+g.rng.IntN(4))
	case 3:
		return fmt.Sprintf("(%s) %% %d", a, 2+g.rng.IntN(6))
	default:
		return fmt.Sprintf("(%s + %s) %% 97", a, b)
	}
}

func (g *gen) intAtom() string {
	switch g.rng.IntN(8) {
	case 0, 1:
		return fmt.Sprint(g.rng.IntN(10))
	case 2:
		if v := g.pick(kStr, false); v != nil {
			return fmt.Sprintf("len(%s)", v.name)
		}
	case 3:
		if v := g.pick(kSlice, false); v != nil {
			return fmt.Sprintf("len(%s)", v.name)
		}
	case 4:
		if v := g.pick(kArr, false); v != nil {
			return fmt.Sprintf("%s[%d]", v.name, g.rng.IntN(3))
		}
	case 5:
		if v := g.pick(kRune, false); v != nil {
			return fmt.Sprintf("int(%s)", v.name)
		}
	case 6:
		if v := g.pick(kPtr, false); v != nil {
			return "*" + v.name
		}
		if v := g.pick(kGen, false); v != nil {
			return fmt.Sprintf("int(%s)", v.name)
		}
	case 7:
		// Values of the other packages' named types, which no await
		// changes.
		if v := g.pick(kScore, false); v != nil {
			return fmt.Sprintf("int(%s)", v.name)
		}
		if v := g.pick(kID, false); v != nil {
			return fmt.Sprintf("int(%s)", v.name)
		}
		if v := g.pick(kName, false); v != nil {
			return fmt.Sprintf("len(%s)", v.name)
		}
	}
	if v := g.pick(kInt, false); v != nil {
		return v.name
	}
	if g.nGen {
		return "int(n)"
	}
	return "n"
}

// small is an int expression in [0, 97).
func (g *gen) small() string {
	e := g.intExpr(2)
	if g.chance(0.5) {
		return fmt.Sprintf("(%s) %% 97", e)
	}
	return fmt.Sprintf("(%s) %% 7", e)
}

// bound is a small non-negative loop bound.
func (g *gen) bound() string {
	switch g.rng.IntN(4) {
	case 0:
		return fmt.Sprint(g.rng.IntN(4))
	case 1:
		if g.nGen {
			return "int(n) % 4"
		}
		return "n % 4"
	default:
		return fmt.Sprintf("(%s%%3 + 3) %% 4", g.intAtom())
	}
}

var strLits = []string{`""`, `"go"`, `"héllo"`, `"a\xffb"`, `"日本"`, `"xyz"`}

func (g *gen) strExpr() string {
	if v := g.pick(kStr, false); v != nil && g.chance(0.6) {
		if g.chance(0.3) {
			return v.name + " + " + strLits[g.rng.IntN(len(strLits))]
		}
		return v.name
	}
	return strLits[g.rng.IntN(len(strLits))]
}

func (g *gen) cond() string {
	switch g.rng.IntN(9) {
	case 0:
		if v := g.pick(kErr, false); v != nil {
			if g.chance(0.5) {
				return v.name + " != nil"
			}
			return v.name + " == nil"
		}
	case 1:
		if v := g.pick(kStr, false); v != nil {
			return fmt.Sprintf("len(%s) > %d", v.name, g.rng.IntN(4))
		}
	case 2:
		return fmt.Sprintf("%s && %s", g.cond(), g.cond())
	case 3:
		return fmt.Sprintf("(%s || %s)", g.cond(), g.cond())
	case 4:
		return fmt.Sprintf("!(%s)", g.cond())
	}
	ops := []string{"<", ">", "==", "!=", "<=", ">="}
	if g.chance(0.4) {
		return fmt.Sprintf("(%s)%%2 == %d", g.intExpr(1), g.rng.IntN(2))
	}
	return fmt.Sprintf("%s %s %s", g.intExpr(1), ops[g.rng.IntN(len(ops))], g.intExpr(1))
}

// valFuture is a future of an int.
func (g *gen) valFuture() string { return fmt.Sprintf("e.Val(%s)", g.small()) }

func (g *gen) await() string {
	g.awaits++
	if g.helper != "" && g.chance(0.25) {
		return fmt.Sprintf("future.Await(%sAsync(e, %s))", g.helper, g.small())
	}
	if g.pkgs && g.chance(0.2) {
		// An async function of another package.
		if g.libHelper != "" && g.libResult == IntResult && g.chance(0.6) {
			arg := g.small()
			if g.libGeneric && g.chance(0.5) {
				arg = g.q("lib") + "Score(" + arg + ")"
			}
			return fmt.Sprintf("future.Await(%s%sAsync(e, %s))", g.q("lib"), g.libHelper, arg)
		}
		return fmt.Sprintf("future.Await(%sTwiceAsync(e, %s))", g.q("lib"), g.small())
	}
	return "future.Await(" + g.valFuture() + ")"
}

func (g *gen) try(str bool) string {
	g.awaits++
	if str {
		return fmt.Sprintf("future.Try(e.Text(%s))", g.strExpr())
	}
	if g.pkgs && g.chance(0.25) {
		if g.libHelper != "" && g.libResult == IntErrResult && g.chance(0.6) {
			return fmt.Sprintf("future.Try(%s%sAsync(e, %s))", g.q("lib"), g.libHelper, g.small())
		}
		return fmt.Sprintf("future.Try(%sLookupAsync(e, %s))", g.q("lib"), g.strExpr())
	}
	return fmt.Sprintf("future.Try(e.Fallible(%s))", g.small())
}

func (g *gen) function(name string) Program {
	res := map[Result]string{NoResult: "", IntResult: " int", IntErrResult: " (int, error)"}[g.result]
	if g.named {
		res = map[Result]string{IntResult: " (res int)", IntErrResult: " (res int, rerr error)"}[g.result]
	}
	recv, tparams, ntype := "", "", "int"
	if g.receiver != "" {
		recv = "(r " + g.receiver + ") "
	}
	if g.nGen {
		tparams, ntype = "[N ~int]", "N"
	}
	g.emit("//blitz:async")
	env := g.env
	if env == "" {
		env = "*Env"
	}
	g.emit("func %s%s%s(e %s, n %s)%s {", recv, name, tparams, env, ntype, res)
	g.indent++
	g.push(false)
	if g.nGen {
		g.declare("n", kGen)
	} else {
		g.declare("n", kInt)
	}
	if strings.Contains(g.receiver, "Box") {
		g.declare("r.base", kGen).field = true
	} else if g.receiver != "" {
		g.declare("r.base", kInt).field = true
	}
	if g.named {
		g.declare("res", kInt)
		if g.result == IntErrResult {
			g.declare("rerr", kErr)
		}
	}
	// An await first, so that every program waits at least once.
	first, rhs := g.newName(kInt), g.await()
	v := g.declare(first, kInt)
	g.emit("%s := %s", v.name, rhs)
	g.note(v)
	if g.pkgs {
		// Variables of the other packages' types, which the rest of the
		// program uses across its awaits.
		for range 1 + g.rng.IntN(3) {
			k := pkgKinds[g.rng.IntN(len(pkgKinds))]
			if k == kWrap && g.inLib {
				k = kTally
			}
			g.declPkg(k)
			g.budget--
		}
	}
	for g.budget > 0 {
		g.stmt()
	}
	g.finalReturn()
	g.pop()
	g.indent--
	g.emit("}")
	return Program{Name: name, Result: g.result, Named: g.named, Receiver: g.receiver, Generic: g.nGen,
		Source: strings.Join(g.lines, "\n") + "\n", Awaits: g.awaits, WildLine: g.wildLine}
}

// block writes statements until the budget or the block's own length runs
// out, or until a statement that does not fall through.
func (g *gen) block() {
	n := 1 + g.rng.IntN(5)
	for i := 0; i < n && g.budget > 0; i++ {
		if g.stmt() {
			return
		}
	}
}

// nested writes a block one level deeper in its own scope.
func (g *gen) nested(body func()) {
	g.indent++
	g.depth++
	g.push(false)
	if body != nil {
		body()
	}
	g.block()
	g.pop()
	g.depth--
	g.indent--
}

func (g *gen) finalReturn() {
	if g.named && g.chance(0.4) {
		g.emit("return")
		return
	}
	switch g.result {
	case IntResult:
		g.emit("return %s", g.intExpr(2))
	case IntErrResult:
		if v := g.pick(kErr, false); v != nil && g.chance(0.3) {
			g.emit("return %s, %s", g.intExpr(2), v.name)
		} else {
			g.emit("return %s, nil", g.intExpr(2))
		}
	}
}

// ret writes an early return, reporting that the block ends.
func (g *gen) ret() bool {
	if g.named && g.chance(0.3) {
		g.emit("return")
		return true
	}
	switch g.result {
	case NoResult:
		g.emit("return")
	case IntResult:
		if g.chance(0.3) {
			g.emit("return %s", g.await())
		} else {
			g.emit("return %s", g.intExpr(2))
		}
	case IntErrResult:
		switch g.rng.IntN(3) {
		case 0:
			g.emit("return %s", g.try(false))
		case 1:
			if v := g.pick(kErr, false); v != nil {
				g.emit("return %s, %s", g.intExpr(1), v.name)
				break
			}
			fallthrough
		default:
			g.emit("return %s, nil", g.intExpr(2))
		}
	}
	return true
}

// stmt writes one statement and reports whether it does not fall through.
func (g *gen) stmt() bool {
	g.budget--
	if g.wild && g.wildLine == 0 && !g.inLit && !g.inAsyncLit && g.chance(0.15) {
		g.wildStmt()
		return false
	}
	deep := g.depth >= 4
	for {
		switch c := g.rng.IntN(36); {
		case c < 3:
			g.declInt()
		case c < 5:
			g.assignInt()
		case c == 5:
			if !g.inLit {
				g.emit("%s", g.await())
				return false
			}
		case c == 6:
			g.declOther()
		case c == 7:
			g.tryStmt()
		case c == 8 && !deep:
			g.ifStmt()
		case c == 9 && !deep && g.loops < 3:
			g.forStmt()
		case c == 10 && !deep && g.loops < 3:
			g.rangeStmt()
		case c == 11 && !deep:
			g.switchStmt()
		case c == 12 && !deep:
			g.typeSwitch()
		case c == 13:
			if g.jump(false) {
				return false
			}
		case c == 14 && !g.inLit && !g.inAsyncLit && g.depth > 0:
			if g.chance(0.5) {
				g.emit("if %s {", g.cond())
				g.indent++
				g.ret()
				g.indent--
				g.emit("}")
				return false
			}
			if g.budget < 3 || g.chance(0.2) {
				return g.ret()
			}
			continue
		case c == 15 && !g.inLit && !deep:
			if AsyncLiterals && !g.inAsyncLit && !g.inLib && g.receiver != "*Box[N]" && g.receiver != "Box[N]" && g.chance(0.4) {
				g.asyncLit()
			} else {
				g.closure()
			}
		case c == 16:
			g.otherAssign()
		case c == 17 && g.depth > 0:
			return g.jump(true)
		case c == 18:
			g.ptrOrGen()
		case c == 19:
			g.deferStmt()
		case c == 20 && g.depth > 0 && g.chance(0.3):
			// A panic: the deferred calls run, and it leaves the future.
			g.emit("if %s {", g.cond())
			g.emit("\tpanic(%q)", fmt.Sprintf("s%d", g.id()))
			g.emit("}")
		case c == 21:
			g.multi()
		case c == 22 && !g.inLit:
			g.funcs()
		case (c == 24 || c == 25) && !g.inLit && !deep && g.loops < 3:
			g.nestedStmt()
		case c == 26 && !deep:
			// A block statement, which may await; its variables are its
			// own.
			g.emit("{")
			g.nested(nil)
			g.emit("}")
		case c == 27:
			g.chanStmt()
		case c == 28:
			g.counterStmt()
		case c == 29:
			g.mapStmt()
		case c >= 30 && g.pkgs:
			g.pkgStmt()
		case c == 23 && !g.inLit && !g.inAsyncLit && g.loops == 0 && g.depth > 0 && ShadowFuture && g.chance(0.3):
			// A variable named future ends its block (no await may
			// follow it in its scope), with a return that the generated
			// code writes with the package's name. Or one named as an
			// imported package, which the generated code may name there.
			name := "future"
			if g.pkgs && g.chance(0.5) {
				if pn := g.shadowablePkg(); pn != "" {
					name = pn
				}
			}
			g.emit("%s := %s", name, g.small())
			g.emit("e.Note(\"s%d %s=%%d\", %s)", g.id(), name, name)
			switch g.result {
			case NoResult:
				g.emit("return")
			case IntResult:
				g.emit("return %s", name)
			case IntErrResult:
				g.emit("return %s, nil", name)
			}
			return true
		default:
			continue
		}
		return false
	}
}

// awaitOK reports whether the current statement may await.
func (g *gen) awaitOK() bool { return !g.inLit && g.chance(0.45) }

func (g *gen) declInt() {
	if g.chance(0.15) {
		g.declConst()
		return
	}
	name := g.newName(kInt)
	var rhs string
	if g.awaitOK() {
		if g.chance(0.5) {
			rhs = g.await()
		} else {
			rhs = g.awaitExpr(2)
		}
	} else {
		rhs = g.small()
	}
	isAwait := strings.Contains(rhs, "future.")
	switch g.rng.IntN(4) {
	case 0:
		g.emit("var %s = %s", name, rhs)
	case 1:
		if !isAwait {
			g.emit("var %s int", name)
			v := g.declare(name, kInt)
			g.note(v)
			return
		}
		fallthrough
	default:
		g.emit("%s := %s", name, rhs)
	}
	g.note(g.declare(name, kInt))
}

// declConst declares local constants: one, typed or not, or a group with
// iota, whose values read small literals and the constants in scope. The
// generator declares them at package level, renamed; uses after an await
// must still see them.
func (g *gen) declConst() {
	var consts []string
	for _, v := range g.visible(kInt, false) {
		if v.isConst {
			consts = append(consts, v.name)
		}
	}
	expr := func() string {
		if len(consts) > 0 && g.chance(0.5) {
			return fmt.Sprintf("%s + %d", consts[g.rng.IntN(len(consts))], g.rng.IntN(5))
		}
		return fmt.Sprint(g.rng.IntN(9))
	}
	var names []string
	switch g.rng.IntN(3) {
	case 0:
		name := g.newName(kInt)
		g.emit("const %s = %s", name, expr())
		names = append(names, name)
	case 1:
		name := g.newName(kInt)
		g.emit("const %s int = %s", name, expr())
		names = append(names, name)
	default:
		a := g.newName(kInt)
		b := g.newName(kInt)
		for b == a {
			b = fmt.Sprintf("%s%d", a, g.id())
		}
		g.emit("const (")
		g.emit("	%s = iota + %s", a, expr())
		g.emit("	%s", b)
		g.emit(")")
		names = append(names, a, b)
	}
	for _, name := range names {
		v := g.declare(name, kInt)
		v.readOnly, v.isConst = true, true
		g.note(v)
	}
}

func (g *gen) assignInt() {
	v := g.pick(kInt, true)
	if v == nil {
		g.declInt()
		return
	}
	op := []string{"=", "+=", "-=", "="}[g.rng.IntN(4)]
	if g.awaitOK() && (v.field || g.chance(0.4)) {
		// An await in an expression, assigned to any operand.
		g.emit("%s %s %s", v.name, op, g.awaitExpr(2))
	} else if !v.field && g.awaitOK() {
		g.emit("%s %s %s", v.name, op, g.await())
	} else if g.chance(0.2) {
		g.emit("%s %%= %d", v.name, 2+g.rng.IntN(50))
	} else if g.chance(0.2) {
		g.emit("%s++", v.name)
	} else {
		g.emit("%s %s %s", v.name, op, g.small())
	}
	g.note(v)
}

func (g *gen) declOther() {
	switch g.rng.IntN(4) {
	case 0:
		name := g.newName(kStr)
		if g.awaitOK() {
			g.awaits++
			g.emit("%s := future.Await(e.Str(%s))", name, g.strExpr())
		} else {
			g.emit("%s := %s", name, g.strExpr())
		}
		g.note(g.declare(name, kStr))
	case 1:
		name := g.newName(kSlice)
		var elems []string
		for range g.rng.IntN(4) {
			elems = append(elems, g.small())
		}
		g.emit("%s := []int{%s}", name, strings.Join(elems, ", "))
		g.note(g.declare(name, kSlice))
	case 2:
		name := g.newName(kArr)
		g.emit("%s := [3]int{%s, %s, %s}", name, g.small(), g.small(), g.small())
		g.note(g.declare(name, kArr))
	default:
		name := g.newName(kAny)
		if g.chance(0.5) {
			g.emit("var %s any = %s", name, g.strExpr())
		} else {
			g.emit("var %s any = %s", name, g.intExpr(1))
		}
		g.note(g.declare(name, kAny))
	}
}

// otherAssign assigns a variable of a kind other than int.
func (g *gen) otherAssign() {
	switch g.rng.IntN(5) {
	case 0:
		if v := g.pick(kStr, true); v != nil {
			if g.awaitOK() {
				g.awaits++
				g.emit("%s = future.Await(e.Str(%s))", v.name, g.strExpr())
			} else {
				g.emit("%s += %s", v.name, strLits[1+g.rng.IntN(len(strLits)-1)])
			}
			g.note(v)
			return
		}
	case 1:
		if v := g.pick(kSlice, true); v != nil {
			g.emit("%s = append(%s, %s)", v.name, v.name, g.small())
			g.note(v)
			return
		}
	case 2:
		if v := g.pick(kArr, true); v != nil {
			if g.awaitOK() {
				// An await assigned to an element is rejected: through
				// a variable.
				name, rhs := g.newName(kInt), g.await()
				t := g.declare(name, kInt)
				g.emit("%s := %s", t.name, rhs)
				g.emit("%s[%d] = %s", v.name, g.rng.IntN(3), t.name)
			} else {
				g.emit("%s[%d] = %s", v.name, g.rng.IntN(3), g.small())
			}
			g.note(v)
			return
		}
	case 3:
		if v := g.pick(kAny, true); v != nil {
			if g.chance(0.5) {
				g.emit("%s = %s", v.name, g.strExpr())
			} else {
				g.emit("%s = %s", v.name, g.intExpr(1))
			}
			g.note(v)
			return
		}
	case 4:
		if v := g.pick(kFunc, false); v != nil {
			if t := g.pick(kInt, true); t != nil {
				g.emit("%s = %s(%s) %% 997", t.name, v.name, g.intExpr(1))
				g.note(t)
				return
			}
		}
	}
	g.declOther()
}

// tryStmt writes one of the forms of future.Try.
func (g *gen) tryStmt() {
	if g.inLit {
		g.assignInt()
		return
	}
	str := g.chance(0.25)
	vk := kInt
	if str {
		vk = kStr
	}
	switch g.rng.IntN(6) {
	case 0:
		g.emit("%s", g.try(str))
		return
	case 1, 2:
		// v, err := Try: at least one of them new in this scope.
		vname := g.newName(vk)
		ename := "err"
		if g.inScope(ename) && g.chance(0.5) {
			// err is assigned, v declared.
		} else if g.inScope(ename) {
			ename = g.newName(kErr)
		}
		lhsV, lhsE := vname, ename
		if g.chance(0.15) {
			lhsV = "_"
		} else if g.chance(0.15) {
			lhsE = "_"
		}
		if lhsV == "_" && lhsE != "_" && g.inScope(lhsE) {
			lhsE = g.newName(kErr)
		}
		if lhsV == "_" && lhsE == "_" {
			lhsE = ename
		}
		g.emit("%s, %s := %s", lhsV, lhsE, g.try(str))
		if lhsV != "_" {
			g.note(g.declare(lhsV, vk))
		}
		if lhsE != "_" {
			var ev *variable
			if g.inScope(lhsE) {
				for _, x := range g.scopes[len(g.scopes)-1].vars {
					if x.name == lhsE {
						ev = x
					}
				}
			} else {
				ev = g.declare(lhsE, kErr)
			}
			g.note(ev)
		}
	default:
		v, ev := g.pickVar(vk), g.pickVar(kErr)
		if v == nil && ev == nil {
			g.emit("%s", g.try(str))
			return
		}
		lhsV, lhsE := "_", "_"
		if v != nil {
			lhsV = v.name
		}
		if ev != nil {
			lhsE = ev.name
		}
		g.emit("%s, %s = %s", lhsV, lhsE, g.try(str))
		if v != nil {
			g.note(v)
		}
		if ev != nil {
			g.note(ev)
		}
	}
}

// initStmt is an init for an if or a switch, declaring one variable that
// the caller then declares in the statement's scope; it awaits often.
func (g *gen) initStmt() (string, *variable) {
	if g.inLit || g.chance(0.5) {
		return "", nil
	}
	switch g.rng.IntN(3) {
	case 0:
		name := g.newName(kInt)
		return fmt.Sprintf("%s := %s; ", name, g.await()), &variable{name: name, kind: kInt}
	case 1:
		name := g.newName(kErr)
		return fmt.Sprintf("_, %s := %s; ", name, g.try(false)), &variable{name: name, kind: kErr}
	default:
		name := g.newName(kInt)
		return fmt.Sprintf("%s := %s; ", name, g.small()), &variable{name: name, kind: kInt}
	}
}

func (g *gen) ifStmt() {
	g.push(false) // the init's scope
	init, iv := g.initStmt()
	cond := g.cond()
	if iv != nil {
		g.scopes[len(g.scopes)-1].vars = append(g.scopes[len(g.scopes)-1].vars, &variable{name: iv.name, kind: iv.kind, loops: g.loops})
		if iv.kind == kErr && g.chance(0.7) {
			cond = iv.name + " != nil"
		} else if iv.kind == kInt && g.chance(0.7) {
			cond = fmt.Sprintf("%s%%2 == 0", iv.name)
		}
	}
	if iv != nil && !regexp.MustCompile(`\b`+iv.name+`\b`).MatchString(cond) {
		cond = fmt.Sprintf("%s && %s", g.use(iv), cond)
	}
	g.emit("if %s%s {", init, cond)
	g.nested(func() { g.useInit(iv) })
	for g.chance(0.3) {
		g.emit("} else if %s {", g.cond())
		g.nested(func() { g.useInit(iv) })
	}
	if g.chance(0.5) {
		g.emit("} else {")
		g.nested(func() { g.useInit(iv) })
	}
	g.emit("}")
	g.pop()
}

// use is a condition that reads v and is true.
func (g *gen) use(v *variable) string {
	if v.kind == kErr {
		return fmt.Sprintf("(%s == nil || %s != nil)", v.name, v.name)
	}
	return fmt.Sprintf("%s != %s+1", v.name, v.name)
}

// useInit notes the init's variable in a branch (so that it is used).
func (g *gen) useInit(iv *variable) {
	if iv != nil && g.chance(0.6) {
		g.note(&variable{name: iv.name, kind: iv.kind})
	}
}

// label returns a label for a loop or switch, used only if the body names
// it.
func (g *gen) label() string { return fmt.Sprintf("L%d", g.id()) }

// loop writes a loop's or switch's header (with its label if the body used it)
// and body.
func (g *gen) loop(header string, isLoop bool, pre func()) {
	t := &target{loop: isLoop, label: g.label()}
	at := len(g.lines)
	g.emit("%s {", header)
	g.targets = append(g.targets, t)
	if isLoop {
		g.loops++
	}
	g.nested(pre)
	if isLoop {
		g.loops--
	}
	g.targets = g.targets[:len(g.targets)-1]
	g.emit("}")
	if t.used {
		g.lines = append(g.lines[:at], append([]string{strings.Repeat("\t", g.indent) + t.label + ":"}, g.lines[at:]...)...)
	}
}

// jump writes a break or continue to an enclosing loop or switch, under
// an if unless bare; it reports whether it wrote anything.
func (g *gen) jump(bare bool) bool {
	if len(g.targets) == 0 {
		return false
	}
	cont := g.chance(0.4)
	// The innermost target, or a labeled outer one.
	i := len(g.targets) - 1
	labeled := g.chance(0.4)
	if labeled {
		i = g.rng.IntN(len(g.targets))
	}
	if cont {
		for i >= 0 && !g.targets[i].loop {
			i--
			labeled = true
		}
		if i < 0 {
			return false
		}
	}
	t := g.targets[i]
	word := "break"
	if cont {
		word = "continue"
	}
	if labeled || (cont && i != g.innermostLoop()) {
		t.used = true
		word += " " + t.label
	}
	if bare {
		g.emit("%s", word)
		return true
	}
	g.emit("if %s {", g.cond())
	g.indent++
	g.emit("e.Note(\"s%d %s\")", g.id(), word)
	g.emit("%s", word)
	g.indent--
	g.emit("}")
	return true
}

func (g *gen) innermostLoop() int {
	for i := len(g.targets) - 1; i >= 0; i-- {
		if g.targets[i].loop {
			return i
		}
	}
	return -1
}

func (g *gen) forStmt() {
	switch g.rng.IntN(3) {
	case 0:
		g.push(false)
		i := g.loopVarName()
		g.loop(fmt.Sprintf("for %s := 0; %s < %s; %s++", i, i, g.bound(), i), true, func() {
			v := g.declare(i, kInt)
			v.readOnly = true
			// The clause's variable belongs to the loop: declared in
			// the body's scope for capture purposes.
			g.note(v)
		})
		g.pop()
	case 1:
		c := fmt.Sprintf("c%d", g.id())
		g.emit("%s := 0", c)
		cv := g.declare(c, kInt)
		cv.readOnly = true
		g.loop(fmt.Sprintf("for %s < %s", c, g.bound()), true, func() {
			g.emit("%s++", c)
		})
	default:
		c := fmt.Sprintf("c%d", g.id())
		g.emit("%s := 0", c)
		cv := g.declare(c, kInt)
		cv.readOnly = true
		b := g.bound()
		g.loop("for", true, func() {
			g.emit("%s++", c)
			g.emit("if %s > %s {", c, b)
			g.emit("\tbreak")
			g.emit("}")
		})
	}
}

func (g *gen) rangeStmt() {
	g.push(false)
	defer g.pop()
	if !g.inLit && g.chance(0.15) {
		g.eachStmt()
		return
	}
	switch g.rng.IntN(6) {
	case 0, 1:
		// over an int
		if g.chance(0.2) {
			g.loop(fmt.Sprintf("for range %s", g.bound()), true, nil)
			return
		}
		if v := g.pickVar(kInt); v != nil && g.chance(0.3) {
			g.loop(fmt.Sprintf("for %s = range %s", v.name, g.bound()), true, func() { g.note(v) })
			return
		}
		i := g.loopVarName()
		g.loop(fmt.Sprintf("for %s := range %s", i, g.bound()), true, func() {
			g.note(g.declare(i, kInt))
		})
	case 2:
		xs := g.pick(kSlice, false)
		x := "[]int{1, 2, 3}"
		if xs != nil {
			x = xs.name
		}
		i, v := g.loopVarName(), g.loopVarName()
		for v == i {
			v = fmt.Sprintf("v%d", g.id())
		}
		a, b := g.pickVar(kInt), g.pickVar(kInt)
		switch g.rng.IntN(4) {
		case 3:
			if a == nil || b == nil || a == b {
				g.loop(fmt.Sprintf("for range %s", x), true, nil)
				break
			}
			// Existing variables as the iteration variables.
			g.loop(fmt.Sprintf("for %s, %s = range %s", a.name, b.name, x), true, func() {
				g.note(a)
				g.note(b)
			})
		case 0:
			g.loop(fmt.Sprintf("for %s, %s := range %s", i, v, x), true, func() {
				g.note(g.declare(i, kInt))
				g.note(g.declare(v, kInt))
			})
		case 1:
			g.loop(fmt.Sprintf("for _, %s := range %s", v, x), true, func() {
				g.note(g.declare(v, kInt))
			})
		default:
			g.loop(fmt.Sprintf("for %s := range %s", i, x), true, func() {
				g.note(g.declare(i, kInt))
			})
		}
	case 3:
		arr := g.pick(kArr, false)
		if arr == nil {
			g.loop(fmt.Sprintf("for range %s", g.bound()), true, nil)
			return
		}
		i, v := g.loopVarName(), g.loopVarName()
		for v == i {
			v = fmt.Sprintf("v%d", g.id())
		}
		if g.chance(0.5) {
			g.loop(fmt.Sprintf("for %s, %s := range %s", i, v, arr.name), true, func() {
				g.note(g.declare(i, kInt))
				g.note(g.declare(v, kInt))
			})
		} else {
			g.loop(fmt.Sprintf("for %s := range %s", i, arr.name), true, func() {
				g.note(g.declare(i, kInt))
			})
		}
	default:
		s := g.strExpr()
		i, r := g.loopVarName(), fmt.Sprintf("r%d", g.id())
		if g.chance(0.3) {
			g.loop(fmt.Sprintf("for %s := range %s", i, s), true, func() {
				g.note(g.declare(i, kInt))
			})
			return
		}
		g.loop(fmt.Sprintf("for %s, %s := range %s", i, r, s), true, func() {
			g.note(g.declare(i, kInt))
			g.note(g.declare(r, kRune))
		})
	}
}

// eachStmt ranges over a stream of futures (future.Each over an Env's
// Stream, or over a variable holding one), in each of the loop's forms.
func (g *gen) eachStmt() {
	stream := fmt.Sprintf("e.Stream(%s)", g.bound())
	if g.chance(0.3) {
		// A variable of func type, kept across the loop's awaits.
		name := fmt.Sprintf("next%d", g.id())
		g.emit("%s := %s", name, stream)
		stream = name
	}
	each := fmt.Sprintf("future.Each(%s)", stream)
	switch g.rng.IntN(4) {
	case 0:
		g.loop("for range "+each, true, nil)
	case 1:
		if v := g.pickVar(kInt); v != nil {
			g.loop(fmt.Sprintf("for %s = range %s", v.name, each), true, func() { g.note(v) })
			return
		}
		fallthrough
	default:
		v := g.loopVarName()
		g.loop(fmt.Sprintf("for %s := range %s", v, each), true, func() { g.note(g.declare(v, kInt)) })
	}
}

func (g *gen) switchStmt() {
	g.push(false)
	defer g.pop()
	init, iv := g.initStmt()
	tagged := g.chance(0.6)
	header := "switch " + init
	mod := 2 + g.rng.IntN(3)
	if tagged {
		tag := fmt.Sprintf("(%s) %% %d", g.intExpr(1), mod)
		if iv != nil && iv.kind == kInt && g.chance(0.7) {
			tag = fmt.Sprintf("%s %% %d", iv.name, mod)
		}
		header += tag
	} else if init != "" {
		header = "switch " + init
		header = strings.TrimSuffix(header, " ")
	} else {
		header = "switch"
	}
	if iv != nil {
		g.scopes[len(g.scopes)-1].vars = append(g.scopes[len(g.scopes)-1].vars, &variable{name: iv.name, kind: iv.kind, loops: g.loops})
	}
	t := &target{label: g.label()}
	at := len(g.lines)
	g.emit("%s {", header)
	g.targets = append(g.targets, t)
	nclauses := 1 + g.rng.IntN(3)
	// Case values: distinct constants below mod (a tagged switch).
	vals := g.rng.Perm(mod)
	next := 0
	for c := 0; c < nclauses; c++ {
		last := c == nclauses-1
		if tagged {
			if next >= len(vals) {
				break
			}
			k := 1 + g.rng.IntN(2)
			var cs []string
			for ; k > 0 && next < len(vals); k-- {
				cs = append(cs, fmt.Sprint(vals[next]))
				next++
			}
			if !g.inLit && g.chance(0.2) {
				// A case expression that awaits, evaluated only if no
				// case before it matched.
				g.awaits++
				cs = append(cs, fmt.Sprintf("future.Await(e.Val(%d))", 10+g.id()))
			}
			g.emit("case %s:", strings.Join(cs, ", "))
			last = last || next >= len(vals)
		} else {
			if !g.inLit && g.chance(0.2) {
				g.emit("case %s:", g.awaitCond())
			} else {
				g.emit("case %s:", g.cond())
			}
		}
		first := c == 0
		g.nested(func() {
			if first && iv != nil {
				// The init's variable must be used somewhere.
				g.note(&variable{name: iv.name, kind: iv.kind})
				return
			}
			g.useInit(iv)
		})
		if !last && g.chance(0.3) && !g.endsJump() {
			g.emit("\tfallthrough")
		}
	}
	if g.chance(0.5) {
		g.emit("default:")
		g.nested(func() { g.useInit(iv) })
	}
	g.targets = g.targets[:len(g.targets)-1]
	g.emit("}")
	if t.used {
		g.lines = append(g.lines[:at], append([]string{strings.Repeat("\t", g.indent) + t.label + ":"}, g.lines[at:]...)...)
	}
}

// endsJump reports whether the last line written is a bare jump or
// return, after which fallthrough may not follow.
func (g *gen) endsJump() bool {
	last := strings.TrimSpace(g.lines[len(g.lines)-1])
	for _, w := range []string{"break", "continue", "return", "fallthrough"} {
		if last == w || strings.HasPrefix(last, w+" ") {
			return true
		}
	}
	return false
}

func (g *gen) typeSwitch() {
	a := g.pick(kAny, false)
	if a == nil {
		g.declOther()
		return
	}
	g.push(false)
	defer g.pop()
	bind := g.chance(0.7)
	name := g.newName(kInt)
	if outsideLoops[name] && TypeSwitchShadowBug {
		name = fmt.Sprintf("tv%d", g.id())
	}
	t := &target{label: g.label()}
	at := len(g.lines)
	if bind {
		g.emit("switch %s := %s.(type) {", name, a.name)
	} else {
		g.emit("switch %s.(type) {", a.name)
	}
	g.targets = append(g.targets, t)
	clauses := []struct {
		cases string
		k     kind
	}{{"int", kInt}, {"string", kStr}, {"bool, float64", kAny}, {"nil", kAny}, {"error", kErr}}
	for _, i := range g.rng.Perm(len(clauses))[:1+g.rng.IntN(3)] {
		cl := clauses[i]
		g.emit("case %s:", cl.cases)
		g.nested(func() {
			if bind {
				v := g.declare(name, cl.k)
				g.note(v)
			}
		})
	}
	if g.chance(0.5) {
		g.emit("default:")
		g.nested(func() {
			if bind {
				g.note(g.declare(name, kAny))
			}
		})
	}
	g.targets = g.targets[:len(g.targets)-1]
	g.emit("}")
	if t.used {
		g.lines = append(g.lines[:at], append([]string{strings.Repeat("\t", g.indent) + t.label + ":"}, g.lines[at:]...)...)
	}
}

// closure writes a function literal, called at once or stored in a
// variable and called now and later. Its body captures only variables
// declared outside every loop and does not await.
func (g *gen) closure() {
	saveT, saveLoops, saveDepth, saveBudget := g.targets, g.loops, g.depth, g.budget
	// The literal's body gets a small budget of its own.
	g.targets, g.loops, g.inLit, g.budget = nil, 0, true, min(g.budget, 1+g.rng.IntN(4))
	defer func() {
		g.targets, g.loops, g.depth, g.inLit = saveT, saveLoops, saveDepth, false
		g.budget = saveBudget - 2
	}()
	if g.chance(0.4) {
		g.emit("func() {")
		g.indent++
		g.push(true)
		g.block()
		g.pop()
		g.indent--
		g.emit("}()")
		return
	}
	name := g.newName(kFunc)
	k := fmt.Sprintf("p%d", g.id())
	g.emit("%s := func(%s int) int {", name, k)
	g.indent++
	g.push(true)
	g.declare(k, kInt)
	g.emit("e.Note(\"s%d %s(%%d)\", %s)", g.id(), name, k)
	g.block()
	g.emit("return %s", g.intExpr(2))
	g.pop()
	g.indent--
	g.emit("}")
	g.targets, g.loops, g.inLit = saveT, saveLoops, false
	v := g.declare(name, kFunc)
	v.loops = saveLoops
	g.note(v)
}

// AsyncLiterals makes the programs hold async function literals
// (future.Async, AsyncFallible, AsyncDo), each awaited where it is made;
// the reference calls the literal there.
var AsyncLiterals = true

// asyncLit writes an async function literal, awaited where it is made: a
// body that may await, declare, loop, defer and panic, and that reads and
// writes the variables it captures.
func (g *gen) asyncLit() {
	saveT, saveLoops, saveDepth, saveBudget := g.targets, g.loops, g.depth, g.budget
	g.targets, g.loops, g.inAsyncLit, g.budget = nil, 0, true, min(g.budget, 2+g.rng.IntN(5))
	defer func() {
		g.targets, g.loops, g.depth, g.inAsyncLit = saveT, saveLoops, saveDepth, false
		g.budget = saveBudget - 2
	}()
	g.asyncLits++
	id := g.id()
	var v, errName string
	switch g.rng.IntN(3) {
	case 0:
		v = g.newName(kInt)
		g.emit("%s := future.Await(future.Async(func() int {", v)
	case 1:
		g.emit("future.Await(future.AsyncDo(func() {")
	default:
		v, errName = g.newName(kInt), fmt.Sprintf("err%d", id)
		g.emit("%s, %s := future.Try(future.AsyncFallible(func() (int, error) {", v, errName)
	}
	g.indent++
	g.push(true)
	g.emit("e.Note(\"s%d async literal %%d\", %s)", id, g.intExpr(2))
	g.block()
	switch {
	case errName != "" && g.chance(0.4):
		g.emit("return future.Try(e.Fallible(%s))", g.intExpr(1))
	case errName != "":
		g.emit("if %s {", g.cond())
		g.emit("\treturn %s, ErrOdd", g.intExpr(1))
		g.emit("}")
		g.emit("return %s, nil", g.intExpr(2))
	case v != "":
		g.emit("return %s", g.intExpr(2))
	}
	g.pop()
	g.indent--
	g.emit("}))")
	g.targets, g.loops, g.inAsyncLit = saveT, saveLoops, false
	if v != "" {
		g.note(g.declare(v, kInt))
	}
	if errName != "" {
		g.emit("e.Note(\"s%d err=%%v\", %s)", g.id(), errName)
	}
}

// ptrOrGen declares or assigns a pointer, or a variable of the type
// parameter.
func (g *gen) ptrOrGen() {
	if g.generic && g.chance(0.6) {
		if v := g.pick(kGen, true); v != nil && g.chance(0.6) {
			if g.awaitOK() {
				t, rhs := g.newName(kInt), g.await()
				g.declare(t, kInt)
				g.emit("%s := %s", t, rhs)
				g.emit("%s = N(%s)", v.name, t)
			} else {
				g.emit("%s += N(%s)", v.name, g.small())
			}
			g.note(v)
			return
		}
		name := g.newName(kGen)
		if g.chance(0.4) {
			g.emit("var %s N", name)
		} else {
			g.emit("%s := N(%s)", name, g.small())
		}
		g.note(g.declare(name, kGen))
		return
	}
	if p := g.pick(kPtr, false); p != nil && g.chance(0.6) {
		g.emit("*%s %s %s", p.name, []string{"=", "+="}[g.rng.IntN(2)], g.small())
		g.emit("e.Note(\"s%d *%s=%%d\", *%s)", g.id(), p.name, p.name)
		return
	}
	// The address of a variable declared outside every loop (a variable
	// of an iteration may not have its address taken).
	var targets []*variable
	for _, v := range g.visible(kInt, true) { // not a loop counter
		if (v.loops == 0 || Cells) && !v.field {
			targets = append(targets, v)
		}
	}
	if len(targets) == 0 {
		g.assignInt()
		return
	}
	t := targets[g.rng.IntN(len(targets))]
	name := g.newName(kPtr)
	g.emit("%s := &%s", name, t.name)
	g.declare(name, kPtr)
	g.emit("e.Note(\"s%d *%s=%%d\", *%s)", g.id(), name, name)
}

// deferStmt writes a defer: of a call whose arguments are evaluated now,
// of a function literal that reads variables when it runs (or takes an
// argument evaluated now), of a function variable, of a Counter's value
// method (its receiver copied now) directly or through an interface, or of
// a call that may panic.
func (g *gen) deferStmt() {
	id := g.id()
	switch g.rng.IntN(7) {
	case 4:
		if c := g.pick(kCounter, false); c != nil {
			if g.chance(0.5) {
				g.emit("defer %s.Show(e, %s)", c.name, g.intExpr(1))
			} else {
				g.emit("defer Shower(%s).Show(e, %s)", c.name, g.intExpr(1))
			}
			return
		}
		g.emit("defer Boom(e, %s)", g.intExpr(2))
		return
	case 5:
		g.emit("defer Boom(e, %s)", g.intExpr(2))
		return
	case 6:
		g.emit("defer func(k int) { e.Note(\"s%d deferred k=%%d now %%d\", k, %s) }(%s)", id, g.intExpr(1), g.intExpr(2))
		return
	case 0:
		if f := g.pick(kFunc, false); f != nil {
			g.emit("defer %s(%s)", f.name, g.intExpr(1))
			return
		}
		fallthrough
	case 1:
		g.emit("defer e.Note(\"s%d deferred %%d %%v\", %s, %s)", id, g.intExpr(2), g.cond())
	default:
		// The literal sees the variables as they are when it runs; it may
		// change a named result, after the return set it.
		saveT, saveLoops, saveDepth, saveBudget, saveLit := g.targets, g.loops, g.depth, g.budget, g.inLit
		g.targets, g.loops, g.inLit, g.budget = nil, 0, true, min(g.budget, g.rng.IntN(3))
		g.emit("defer func() {")
		g.indent++
		g.push(true)
		g.emit("e.Note(\"s%d deferred %%d\", %s)", id, g.intExpr(2))
		g.block()
		if g.named && g.chance(0.5) {
			g.emit("res += %s", g.small())
			g.emit("e.Note(\"s%d res=%%d\", res)", g.id())
		}
		g.pop()
		g.indent--
		g.emit("}()")
		g.targets, g.loops, g.depth, g.inLit, g.budget = saveT, saveLoops, saveDepth, saveLit, saveBudget-1
	}
}

// multi writes an assignment or declaration of two variables at once.
func (g *gen) multi() {
	a, b := g.pick(kInt, true), g.pick(kInt, true)
	switch g.rng.IntN(4) {
	case 0:
		if a != nil && b != nil && a != b {
			// A swap, Go's parallel assignment.
			g.emit("%s, %s = %s, %s", a.name, b.name, b.name, a.name)
			g.note(a)
			g.note(b)
			return
		}
		fallthrough
	case 1:
		// x, y := ..., with y already declared in this scope (assigned)
		// or new.
		x := g.newName(kInt)
		var y *variable
		for _, v := range g.scopes[len(g.scopes)-1].vars {
			if v.kind == kInt && !v.readOnly && !v.field && v.name != "n" && g.chance(0.5) {
				y = v
			}
		}
		rx, ry := g.small(), g.small()
		if y == nil {
			y = g.declare(g.newName(kInt), kInt)
			for y.name == x {
				y.name = fmt.Sprintf("k%d", g.id())
			}
		}
		g.emit("%s, %s := %s, %s", x, y.name, rx, ry)
		g.note(g.declare(x, kInt))
		g.note(y)
	case 2:
		x, y := g.newName(kInt), fmt.Sprintf("m%d", g.id())
		if g.chance(0.5) {
			g.emit("var %s, %s int", x, y)
		} else {
			g.emit("var %s, %s = %s, %s", x, y, g.small(), g.small())
		}
		g.note(g.declare(x, kInt))
		g.note(g.declare(y, kInt))
	default:
		if a == nil {
			g.declInt()
			return
		}
		s := g.pick(kStr, true)
		if s == nil || a.field || s.field {
			g.assignInt()
			return
		}
		g.emit("%s, %s = %s, %s", a.name, s.name, g.small(), g.strExpr())
		g.note(a)
		g.note(s)
	}
}

// funcs declares a slice of closures, appends a closure to it (capturing
// the variables of this iteration, if in a loop) or calls the closures it
// holds, in a loop that may await.
func (g *gen) funcs() {
	fns := g.pick(kFuncs, true)
	if fns == nil {
		name := g.newName(kFuncs)
		g.emit("var %s []func() int", name)
		v := g.declare(name, kFuncs)
		g.emit("e.Note(\"s%d len(%s)=%%d\", len(%s))", g.id(), name, name)
		fns = v
	}
	if g.chance(0.6) {
		saveT, saveLoops, saveDepth, saveBudget := g.targets, g.loops, g.depth, g.budget
		g.targets, g.loops, g.inLit, g.budget = nil, 0, true, min(g.budget, g.rng.IntN(3))
		g.emit("%s = append(%s, func() int {", fns.name, fns.name)
		g.indent++
		g.push(true)
		g.emit("e.Note(\"s%d closure %%d\", %s)", g.id(), g.intExpr(2))
		g.block()
		g.emit("return %s", g.intExpr(2))
		g.pop()
		g.indent--
		g.emit("})")
		g.targets, g.loops, g.depth, g.inLit, g.budget = saveT, saveLoops, saveDepth, false, saveBudget-1
		return
	}
	fc := fmt.Sprintf("fc%d", g.id())
	if g.chance(0.5) {
		g.emit("for _, %s := range %s {", fc, fns.name)
		g.emit("\te.Note(\"s%d call %%d\", %s())", g.id(), fc)
		g.emit("}")
		return
	}
	// A loop that awaits between the calls.
	k := fmt.Sprintf("k%d", g.id())
	g.emit("for _, %s := range %s {", fc, fns.name)
	g.emit("\t%s := %s", k, g.awaitOf(fc+"()"))
	g.emit("\te.Note(\"s%d call %%d\", %s)", g.id(), k)
	g.emit("}")
}

// awaitOf is an await of Val(x).
func (g *gen) awaitOf(x string) string {
	g.awaits++
	return fmt.Sprintf("future.Await(e.Val(%s))", x)
}

// wildStmt writes a statement the generator rejects, and where.
func (g *gen) wildStmt() {
	g.wildLine = len(g.lines) + 1
	k := g.newName(kInt)
	switch g.rng.IntN(10) {
	case 0:
		// future.Try nested in an expression.
		g.emit("%s := first(%s)", k, g.try(false))
	case 1:
		g.emit("switch %s {", g.small())
		g.emit("case %s:", g.await())
		g.emit("}")
		return
	case 2:
		g.emit("go func() {}()")
		return
	case 3:
		g.emit("select {")
		g.emit("default:")
		g.emit("}")
		return
	case 4:
		g.emit("{")
		g.emit("\t%s", g.await())
		g.emit("}")
		return
	case 5:
		g.emit("defer e.Note(\"%%d\", %s)", g.await())
		return
	case 6:
		g.emit("for %s := range map[int]int{1: 2} {", k)
		g.emit("\t%s", g.await())
		g.emit("\te.Note(\"%%d\", %s)", k)
		g.emit("}")
		return
	case 7:
		g.emit("func() {")
		g.emit("\t%s", g.await())
		g.emit("}()")
		return
	case 8:
		g.emit("type T%d int", g.id())
		return
	default:
		g.emit("defer func() { recover() }()")
		return
	}
	g.note(g.declare(k, kInt))
}

// awaitExpr is an int expression holding awaits (no other calls, so that
// the order of evaluation Go leaves unspecified does not matter): awaits
// of expressions that may themselves await, sums, remainders, and
// && or || whose right operand awaits.
func (g *gen) awaitExpr(depth int) string {
	if depth <= 0 || g.chance(0.3) {
		if g.chance(0.3) && depth > 0 {
			g.awaits++
			return fmt.Sprintf("future.Await(e.Val((%s) %% 97))", g.awaitExpr(depth-1))
		}
		return g.await()
	}
	switch g.rng.IntN(5) {
	case 0:
		return fmt.Sprintf("%s + %s", g.awaitExpr(depth-1), g.intExpr(1))
	case 1:
		return fmt.Sprintf("%s - %s", g.intExpr(1), g.awaitExpr(depth-1))
	case 2:
		return fmt.Sprintf("(%s + %s) %% 97", g.awaitExpr(depth-1), g.awaitExpr(depth-1))
	case 3:
		return fmt.Sprintf("(%s) %% %d", g.awaitExpr(depth-1), 2+g.rng.IntN(6))
	default:
		// The right operand of && runs only if the left one holds.
		return fmt.Sprintf("boolInt(%s)", g.awaitCond())
	}
}

// awaitCond is a condition holding awaits.
func (g *gen) awaitCond() string {
	ops := []string{"<", ">", "==", "!=", "<=", ">="}
	c := fmt.Sprintf("%s %s %s", g.awaitExpr(1), ops[g.rng.IntN(len(ops))], g.intExpr(1))
	switch g.rng.IntN(3) {
	case 0:
		return fmt.Sprintf("%s && %s", g.cond(), c)
	case 1:
		return fmt.Sprintf("(%s || %s)", g.cond(), c)
	}
	return c
}

// nestedStmt writes a statement whose expressions hold awaits.
func (g *gen) nestedStmt() {
	switch g.rng.IntN(9) {
	case 0:
		g.emit("e.Note(\"s%d nested %%d %%d\", %s, %s)", g.id(), g.intExpr(1), g.awaitExpr(2))
	case 1:
		g.emit("if %s {", g.awaitCond())
		g.nested(nil)
		if g.chance(0.5) {
			g.emit("} else if %s {", g.awaitCond())
			g.nested(nil)
		}
		g.emit("}")
	case 2:
		if xs := g.pick(kSlice, true); xs != nil {
			g.emit("%s = append(%s, %s)", xs.name, xs.name, g.awaitExpr(1))
			g.note(xs)
			return
		}
		name := g.newName(kSlice)
		g.emit("%s := []int{%s, %s}", name, g.awaitExpr(1), g.intExpr(1))
		g.note(g.declare(name, kSlice))
	case 3:
		if arr := g.pickVar(kArr); arr != nil {
			// The index is evaluated with the right-hand side.
			g.emit("%s[(%s%%3+3)%%3] = %s", arr.name, g.intExpr(1), g.awaitExpr(1))
			g.note(arr)
			return
		}
		name := g.newName(kArr)
		g.emit("%s := [3]int{%s, %s, %s}", name, g.intExpr(1), g.awaitExpr(1), g.small())
		g.note(g.declare(name, kArr))
	case 4:
		// A switch's tag.
		g.push(false)
		t := &target{label: g.label()}
		at := len(g.lines)
		g.emit("switch (%s) %% 3 {", g.awaitExpr(1))
		g.targets = append(g.targets, t)
		for _, c := range g.rng.Perm(3)[:1+g.rng.IntN(2)] {
			if c == 0 {
				g.emit("case 0:")
			} else {
				g.emit("case %d, -%d:", c, c)
			}
			g.nested(nil)
		}
		g.targets = g.targets[:len(g.targets)-1]
		g.emit("}")
		if t.used {
			g.lines = append(g.lines[:at], append([]string{strings.Repeat("\t", g.indent) + t.label + ":"}, g.lines[at:]...)...)
		}
		g.pop()
	case 5:
		if a := g.pick(kAny, false); a != nil && g.chance(0.5) {
			// A type switch whose guard awaits.
			g.emit("switch %s := any(%s).(type) {", "tv", g.awaitExpr(1))
			g.emit("case int:")
			g.emit("\te.Note(\"s%d tv=%%d\", tv)", g.id())
			g.emit("case string:")
			g.emit("\te.Note(\"s%d tv=%%q\", tv)", g.id())
			g.emit("}")
			return
		}
		g.emit("e.Note(\"s%d nested %%v\", %s)", g.id(), g.awaitCond())
	case 6:
		// A loop whose condition awaits, before each test.
		g.push(false)
		i := g.loopVarName()
		g.loop(fmt.Sprintf("for %s := 0; %s < %s; %s++", i, i, g.awaitBound(), i), true, func() {
			v := g.declare(i, kInt)
			v.readOnly = true
			g.note(v)
		})
		g.pop()
	case 7:
		// A post statement that awaits (at least 1, so the loop ends).
		g.push(false)
		i := g.loopVarName()
		g.awaits++
		g.loop(fmt.Sprintf("for %s := 0; %s < %s; %s += future.Await(e.Val(%d))", i, i, g.bound(), i, 1+g.rng.IntN(2)), true, func() {
			v := g.declare(i, kInt)
			v.readOnly = true
			g.note(v)
		})
		g.pop()
	default:
		// A range over an integer that awaits, once before the loop.
		g.push(false)
		i := g.loopVarName()
		g.loop(fmt.Sprintf("for %s := range %s", i, g.awaitBound()), true, func() {
			g.note(g.declare(i, kInt))
		})
		g.pop()
	}
}

// awaitBound is a loop bound in [-3, 3] that awaits.
func (g *gen) awaitBound() string {
	g.awaits++
	return fmt.Sprintf("future.Await(e.Val(%s)) %% 4", g.bound())
}

// loopVarName is newName for a variable that a loop's header declares
// (inside the loop).
func (g *gen) loopVarName() string {
	g.loops++
	defer func() { g.loops-- }()
	return g.newName(kInt)
}

// chanStmt makes a buffered channel, sends to it (the value may await)
// while it has room, or receives from it while it holds values: nothing
// blocks.
func (g *gen) chanStmt() {
	ch := g.pick(kChan, false)
	if ch == nil {
		name := g.newName(kChan)
		g.emit("%s := make(chan int, %d)", name, 1+g.rng.IntN(4))
		g.declare(name, kChan)
		g.emit("e.Note(\"s%d len(%s)=%%d\", len(%s))", g.id(), name, name)
		return
	}
	if g.chance(0.5) {
		v := g.small()
		if g.awaitOK() {
			v = g.awaitExpr(1)
		}
		g.emit("if len(%s) < cap(%s) {", ch.name, ch.name)
		g.emit("\t%s <- %s", ch.name, v)
		g.emit("}")
		g.emit("e.Note(\"s%d len(%s)=%%d\", len(%s))", g.id(), ch.name, ch.name)
		return
	}
	g.emit("if len(%s) > 0 {", ch.name)
	g.emit("\te.Note(\"s%d received %%d\", <-%s)", g.id(), ch.name)
	g.emit("}")
}

// counterStmt declares a Counter, calls its pointer method (on the
// variable itself, which a per-iteration variable must keep in a cell),
// defers the call (binding the receiver's address at the defer), takes a
// method value, or slices an array and writes through the slice.
func (g *gen) counterStmt() {
	c := g.pick(kCounter, true)
	switch {
	case c == nil:
		name := g.newName(kCounter)
		if g.chance(0.5) {
			g.emit("var %s Counter", name)
		} else {
			g.emit("%s := Counter{n: %s}", name, g.small())
		}
		g.emit("e.Note(\"s%d %s=%%d\", %s.n)", g.id(), name, name)
		g.declare(name, kCounter)
	case g.chance(0.4):
		g.emit("e.Note(\"s%d %s.Add=%%d\", %s.Add(%s))", g.id(), c.name, c.name, g.small())
	case g.chance(0.3):
		g.emit("defer %s.Add(%s)", c.name, g.small())
	case g.chance(0.4):
		m := fmt.Sprintf("add%d", g.id())
		g.emit("%s := %s.Add", m, c.name)
		g.emit("e.Note(\"s%d %s=%%d\", %s(%s))", g.id(), m, m, g.small())
	default:
		arr := g.pickVar(kArr)
		if arr == nil {
			g.emit("e.Note(\"s%d %s.n=%%d\", %s.n)", g.id(), c.name, c.name)
			return
		}
		// A slice of the array aliases it.
		sl := fmt.Sprintf("sl%d", g.id())
		g.emit("%s := %s[1:]", sl, arr.name)
		g.emit("%s[0] = %s", sl, g.small())
		g.emit("e.Note(\"s%d %s=%%v\", %s)", g.id(), arr.name, arr.name)
	}
}

// mapStmt declares a map, sets an element (the value and the key may
// await), deletes one, or sums the values in a loop without awaits (in any
// order: the sum does not depend on it).
func (g *gen) mapStmt() {
	m := g.pick(kMap, true)
	switch {
	case m == nil:
		name := g.newName(kMap)
		g.emit("%s := map[int]int{%d: %s}", name, g.rng.IntN(5), g.small())
		g.note(g.declare(name, kMap))
	case g.chance(0.5):
		k, v := g.small(), g.small()
		if g.awaitOK() {
			if g.chance(0.5) {
				k = fmt.Sprintf("(%s) %% 5", g.awaitExpr(1))
			} else {
				v = g.awaitExpr(1)
			}
		}
		g.emit("%s[%s] = %s", m.name, k, v)
		g.note(m)
	case g.chance(0.5):
		g.emit("delete(%s, %s)", m.name, g.small())
		g.note(m)
	default:
		tot, v := fmt.Sprintf("tot%d", g.id()), fmt.Sprintf("mv%d", g.id())
		g.emit("%s := 0", tot)
		g.emit("for _, %s := range %s {", v, m.name)
		g.emit("\t%s += %s", tot, v)
		g.emit("}")
		g.emit("e.Note(\"s%d %s=%%d\", %s)", g.id(), tot, tot)
	}
}
