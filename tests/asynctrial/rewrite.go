package asynctrial

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// FuturePath is the import path of the future package.
const FuturePath = "github.com/blitz-go/blitz/future"

// HelperFile is the file Rewrite adds to the package: the blocking helpers
// of the wrappers and the I/O leaf.
const HelperFile = "asynctrial_helpers.go"

// Options tune Rewrite.
type Options struct {
	// Mark reports whether the function or method key (Name, or
	// Type.Name for a method) of the file (base name) may be marked;
	// nil marks every function that qualifies.
	Mark func(file, key string) bool
	// Known maps the keys of functions to leave unmarked to the reason,
	// a generator bug worked around ("generator bug N: ...").
	Known map[string]string
	// NoIO leaves the calls of io's interface methods as they are,
	// instead of following each with an await of a future that yields
	// once.
	NoIO bool
	// Yield makes every marked function await, first thing, a future
	// that is not ready on its first poll (it wakes its task at once):
	// every await of a marked function then suspends the state machines
	// up to the blocking wrapper, which polls them again from the top,
	// so that each resumes from its fields.
	Yield bool
}

// Report is what Rewrite did.
type Report struct {
	Files   int                 // source files (without tests)
	Lines   int                 // their lines
	Funcs   int                 // functions and methods with a body
	Marked  []string            // the keys of the functions marked async
	Awaits  int                 // calls of marked functions made future.Await
	Tries   int                 // calls of marked functions made future.Try
	IO      int                 // calls of io's interface methods made awaits
	Yields  int                 // yields added (Options.Yield)
	Skipped map[string][]string // why a function was left unmarked: the keys
	// SyncCalls counts the calls of marked functions left synchronous
	// (calling the wrapper), by reason.
	SyncCalls map[string]int
}

// Summary is the report in a few lines.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d files, %d lines, %d functions and methods with a body\n", r.Files, r.Lines, r.Funcs)
	fmt.Fprintf(&b, "marked async: %d; calls made awaits: %d future.Await + %d future.Try; I/O points awaited: %d; yields: %d\n", len(r.Marked), r.Awaits, r.Tries, r.IO, r.Yields)
	for _, k := range sortedKeys(r.Skipped) {
		fmt.Fprintf(&b, "skipped (%s): %d: %s\n", k, len(r.Skipped[k]), strings.Join(r.Skipped[k], ", "))
	}
	for _, k := range sortedKeys(r.SyncCalls) {
		fmt.Fprintf(&b, "calls of marked functions left synchronous (%s): %d\n", k, r.SyncCalls[k])
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Skip categories.
const (
	skipShape     = "results the generator does not take: not none, one, or (T, error)"
	skipGo        = "go statement (not supported)"
	skipSelect    = "select statement (not supported)"
	skipGoto      = "goto statement (not supported)"
	skipLocalType = "local type declaration (not supported)"
	skipRecover   = "deferred call that recovers (not supported: recover would not stop the panic)"
	skipRecovers  = "calls recover itself (a deferred function: behind its wrapper, recover would return nil)"
	skipDirective = "compiler directive (//go:...) in the doc comment"
	skipInit      = "init function"
	skipBlankTP   = "blank type parameter"
	skipFilter    = "outside the subset (short form)"
)

// Reasons a call of a marked function stays a synchronous call of its
// wrapper.
const (
	syncFuncLit  = "in a function literal (an await there is not supported)"
	syncDefer    = "the call of a defer or go statement"
	syncRange    = "in a range loop over a map, channel or function (an await there is not supported)"
	syncLabel    = "in a labeled statement other than a loop or switch"
	syncTryPlace = "(T, error) result used other than as a statement, x, err := / = to variables, or the value of return"
	syncMethExpr = "method expression call"
	syncInit     = "in an if or switch init other than an assignment or expression"
)

type fnInfo struct {
	decl    *ast.FuncDecl
	file    *srcFile
	obj     *types.Func
	key     string
	newName string
	shape   int // 0: no results, 1: one, 2: (T, error)
}

type srcFile struct {
	name   string
	path   string
	src    []byte
	ast    *ast.File
	edits  []edit
	future bool // needs the future import
}

type edit struct {
	off, end int
	text     string
	prio     int
}

type rewriter struct {
	fset   *token.FileSet
	pkg    *types.Package
	info   *types.Info
	files  []*srcFile
	fns    map[*types.Func]*fnInfo
	rep    *Report
	opt    Options
	errTyp types.Type
}

// Rewrite rewrites the package in dir (its files other than tests) in
// place, and adds HelperFile. Each function or method f that the generator
// can take is renamed fAwaitable (with a lower-case first letter) and
// marked //blitz:async, the calls of marked functions inside marked
// functions become awaits of their constructors where the generator allows
// an await, and f is declared again as a wrapper that blocks on
// fAwaitableAsync. The package must type-check with the standard
// library's importer from source.
func Rewrite(dir string, opt Options) (*Report, error) {
	r := &rewriter{fset: token.NewFileSet(), fns: map[*types.Func]*fnInfo{}, opt: opt,
		rep: &Report{Skipped: map[string][]string{}, SyncCalls: map[string]int{}}, errTyp: types.Universe.Lookup("error").Type()}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var asts []*ast.File
	for _, path := range names {
		base := filepath.Base(path)
		if strings.HasSuffix(base, "_test.go") || base == HelperFile || strings.HasSuffix(base, "_async.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(r.fset, path, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		r.files = append(r.files, &srcFile{name: base, path: path, src: src, ast: f})
		asts = append(asts, f)
		r.rep.Files++
		r.rep.Lines += bytes.Count(src, []byte("\n"))
	}
	if len(asts) == 0 {
		return nil, fmt.Errorf("no Go files in %s", dir)
	}
	r.info = &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Implicits:  map[ast.Node]types.Object{},
	}
	// The source importer finds packages with go/build, which runs the go
	// command in build.Default.Dir: the package's directory, so that the
	// packages of its module resolve.
	defer func(old string) { build.Default.Dir = old }(build.Default.Dir)
	build.Default.Dir = dir
	conf := types.Config{Importer: importer.ForCompiler(r.fset, "source", nil)}
	r.pkg, err = conf.Check(asts[0].Name.Name, r.fset, asts, r.info)
	if err != nil {
		return nil, fmt.Errorf("type-checking %s: %w", dir, err)
	}
	for _, obj := range r.info.Defs {
		if obj != nil && obj.Name() == "future" {
			return nil, fmt.Errorf("%s: the package declares the name future, which the rewritten code uses for the future package", r.fset.Position(obj.Pos()))
		}
	}
	for _, name := range []string{"asynctrialBlock", "asynctrialBlockTry", "asynctrialIO", "asynctrialIOValue", "asynctrialYield", "asynctrialYieldNow"} {
		if r.pkg.Scope().Lookup(name) != nil {
			return nil, fmt.Errorf("the package declares %s, a name of %s", name, HelperFile)
		}
	}
	r.choose()
	for _, fi := range r.sortedFns() {
		r.rewriteFn(fi)
	}
	for _, f := range r.files {
		if len(f.edits) == 0 {
			continue
		}
		if f.future {
			f.edits = append(f.edits, edit{off: r.off(f.ast.Name.End()), end: r.off(f.ast.Name.End()), text: "\n\nimport \"" + FuturePath + "\""})
		}
		out, err := apply(f.src, f.edits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if err := os.WriteFile(f.path, out, 0o666); err != nil {
			return nil, err
		}
	}
	for _, fi := range r.sortedFns() {
		r.rep.Marked = append(r.rep.Marked, fi.key)
	}
	for k := range r.rep.Skipped {
		sort.Strings(r.rep.Skipped[k])
	}
	helper := fmt.Sprintf(helperSource, r.pkg.Name())
	if err := os.WriteFile(filepath.Join(dir, HelperFile), []byte(helper), 0o666); err != nil {
		return nil, err
	}
	return r.rep, nil
}

func (r *rewriter) off(p token.Pos) int { return r.fset.Position(p).Offset }

func (r *rewriter) sortedFns() []*fnInfo {
	out := make([]*fnInfo, 0, len(r.fns))
	for _, fi := range r.fns {
		out = append(out, fi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].decl.Pos() < out[j].decl.Pos() })
	return out
}

// key is Name for a function, Type.Name for a method.
func key(fn *ast.FuncDecl) string {
	if t := recvTypeName(fn); t != "" {
		return t + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func recvTypeName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	base := ast.Unparen(fn.Recv.List[0].Type)
	if st, ok := base.(*ast.StarExpr); ok {
		base = st.X
	}
	switch x := base.(type) {
	case *ast.IndexExpr:
		base = x.X
	case *ast.IndexListExpr:
		base = x.X
	}
	if id, ok := base.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// choose decides which functions are marked, and their new names.
func (r *rewriter) choose() {
	for _, f := range r.files {
		for _, d := range f.ast.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			r.rep.Funcs++
			k := key(fn)
			obj, _ := r.info.Defs[fn.Name].(*types.Func)
			if obj == nil {
				continue
			}
			reason := r.skipReason(f, fn, obj)
			if reason == "" {
				if why, ok := r.opt.Known[k]; ok {
					reason = why
				} else if r.opt.Mark != nil && !r.opt.Mark(f.name, k) {
					reason = skipFilter
				}
			}
			if reason != "" {
				r.rep.Skipped[reason] = append(r.rep.Skipped[reason], k)
				continue
			}
			fi := &fnInfo{decl: fn, file: f, obj: obj, key: k, shape: r.shape(obj)}
			fi.newName = r.freshName(fn, obj)
			r.fns[obj] = fi
		}
	}
}

func (r *rewriter) shape(obj *types.Func) int {
	res := obj.Type().(*types.Signature).Results()
	switch {
	case res.Len() == 0:
		return 0
	case res.Len() == 1:
		return 1
	case res.Len() == 2 && types.Identical(res.At(1).Type(), r.errTyp):
		return 2
	}
	return -1
}

// skipReason is why fn cannot be marked, or "".
func (r *rewriter) skipReason(f *srcFile, fn *ast.FuncDecl, obj *types.Func) string {
	if fn.Recv == nil && fn.Name.Name == "init" || fn.Name.Name == "_" {
		return skipInit
	}
	if r.shape(obj) < 0 {
		return skipShape
	}
	if fn.Doc != nil {
		for _, c := range fn.Doc.List {
			if strings.HasPrefix(c.Text, "//go:") {
				return skipDirective
			}
		}
	}
	if tps := fn.Type.TypeParams; tps != nil {
		for _, fl := range tps.List {
			for _, n := range fl.Names {
				if n.Name == "_" {
					return skipBlankTP
				}
			}
		}
	}
	if callsRecover(r.info, fn.Body) {
		return skipRecovers
	}
	reason := ""
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if reason != "" {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.GoStmt:
			reason = skipGo
		case *ast.SelectStmt:
			reason = skipSelect
		case *ast.BranchStmt:
			if n.Tok == token.GOTO {
				reason = skipGoto
			}
		case *ast.DeclStmt:
			if gd, ok := n.Decl.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				reason = skipLocalType
			}
		case *ast.DeferStmt:
			if r.defersRecover(n) {
				reason = skipRecover
			}
		}
		return true
	})
	return reason
}

// defersRecover reports whether d defers a function literal, or a function
// or method of this package, that calls recover.
func (r *rewriter) defersRecover(d *ast.DeferStmt) bool {
	var body *ast.BlockStmt
	switch fun := ast.Unparen(d.Call.Fun).(type) {
	case *ast.FuncLit:
		body = fun.Body
	default:
		callee := staticCallee(r.info, fun)
		if callee == nil {
			return false
		}
		for _, f := range r.files {
			for _, dd := range f.ast.Decls {
				if fd, ok := dd.(*ast.FuncDecl); ok && fd.Name.Pos() == callee.Origin().Pos() {
					body = fd.Body
				}
			}
		}
	}
	return body != nil && callsRecover(r.info, body)
}

func callsRecover(info *types.Info, body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if _, ok := n.(*ast.FuncLit); ok {
			return false
		}
		if call, ok := n.(*ast.CallExpr); ok {
			if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
				if b, ok := info.Uses[id].(*types.Builtin); ok && b.Name() == "recover" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

func staticCallee(info *types.Info, fun ast.Expr) *types.Func {
	fun = ast.Unparen(fun)
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	switch x := fun.(type) {
	case *ast.Ident:
		fn, _ := info.Uses[x].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[x]; ok {
			fn, _ := sel.Obj().(*types.Func)
			return fn
		}
		fn, _ := info.Uses[x.Sel].(*types.Func)
		return fn
	}
	return nil
}

// freshName is the name of the marked function: fAwaitable, with its first
// letter lower-case (the package's API stays as it is), free in the
// package's scope or the receiver's method set, as are its constructor's
// and its state machine's names.
func (r *rewriter) freshName(fn *ast.FuncDecl, obj *types.Func) string {
	base := strings.ToLower(fn.Name.Name[:1]) + fn.Name.Name[1:] + "Awaitable"
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s%d", base, i)
		}
		if r.free(fn, obj, name) && r.free(fn, obj, name+"Async") && r.pkg.Scope().Lookup(machineName(fn, name)) == nil {
			taken := false
			for _, other := range r.fns {
				if other.newName == name && recvTypeName(other.decl) == recvTypeName(fn) {
					taken = true
				}
			}
			if !taken {
				return name
			}
		}
	}
}

func machineName(fn *ast.FuncDecl, name string) string {
	if t := recvTypeName(fn); t != "" {
		return strings.ToLower(t[:1]) + t[1:] + strings.ToUpper(name[:1]) + name[1:] + "AsyncFuture"
	}
	return name + "AsyncFuture"
}

func (r *rewriter) free(fn *ast.FuncDecl, obj *types.Func, name string) bool {
	recv := obj.Type().(*types.Signature).Recv()
	if recv == nil {
		return r.pkg.Scope().Lookup(name) == nil
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	o, _, _ := types.LookupFieldOrMethod(types.NewPointer(t), true, r.pkg, name)
	return o == nil
}

// rewriteFn renames fi, marks it, makes its calls of marked functions
// awaits and adds its wrapper.
func (r *rewriter) rewriteFn(fi *fnInfo) {
	f := fi.file
	fn := fi.decl
	add := func(e edit) { f.edits = append(f.edits, e) }
	add(edit{off: r.off(fn.Pos()), end: r.off(fn.Pos()), text: "//blitz:async\n", prio: -1 << 30})
	add(edit{off: r.off(fn.Name.Pos()), end: r.off(fn.Name.End()), text: fi.newName})
	if r.opt.Yield {
		add(edit{off: r.off(fn.Body.Lbrace) + 1, end: r.off(fn.Body.Lbrace) + 1, text: "\n\tfuture.Await(asynctrialYieldNow())\n"})
		f.future = true
		r.rep.Yields++
	}

	var stack []ast.Node
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		r.rewriteCall(fi, call, stack)
		return true
	})
	add(edit{off: r.off(fn.End()), end: r.off(fn.End()), text: "\n\n" + r.wrapper(fi), prio: 1 << 30})
}

// rewriteCall makes call an await if it calls a marked function (or an
// I/O method) where the generator takes an await.
func (r *rewriter) rewriteCall(fi *fnInfo, call *ast.CallExpr, stack []ast.Node) {
	f := fi.file
	callee := staticCallee(r.info, call.Fun)
	var target *fnInfo
	io := false
	if callee != nil {
		target = r.fns[callee.Origin()]
		if target == nil && !r.opt.NoIO {
			io = r.isIO(call)
		}
	}
	if target == nil && !io {
		return
	}
	syncCall := func(why string) {
		if target != nil {
			r.rep.SyncCalls[why]++
		}
	}
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		if s, ok := r.info.Selections[sel]; ok && s.Kind() == types.MethodExpr {
			syncCall(syncMethExpr)
			return
		}
	}
	if why := r.syncContext(call, stack); why != "" {
		syncCall(why)
		return
	}
	shape := 0
	if target != nil {
		shape = target.shape
	} else {
		shape = r.shape(callee)
		if shape < 0 {
			return
		}
	}
	parent := stack[len(stack)-2]
	if shape == 2 && !tryPlace(call, parent, fi.shape) {
		syncCall(syncTryPlace)
		return
	}
	marker := "future.Await("
	if shape == 2 {
		marker = "future.Try("
	}
	extent := r.off(call.End()) - r.off(call.Pos())
	open, close := marker, ")"
	switch {
	case io && shape == 2:
		open, close = marker+"asynctrialIO(", "))"
		r.rep.IO++
	case io:
		open, close = marker+"asynctrialIOValue(", "))"
		r.rep.IO++
	default:
		// The callee's name becomes its constructor's.
		id := calleeIdent(call.Fun)
		f.edits = append(f.edits, edit{off: r.off(id.Pos()), end: r.off(id.End()), text: target.newName + "Async"})
		if shape == 2 {
			r.rep.Tries++
		} else {
			r.rep.Awaits++
		}
	}
	f.future = true
	f.edits = append(f.edits,
		edit{off: r.off(call.Pos()), end: r.off(call.Pos()), text: open, prio: -extent - 1},
		edit{off: r.off(call.End()), end: r.off(call.End()), text: close, prio: extent + 1})
}

// isIO reports whether call calls a method of one of io's interfaces
// through an interface.
func (r *rewriter) isIO(call *ast.CallExpr) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	s, ok := r.info.Selections[sel]
	if !ok || s.Kind() != types.MethodVal || !types.IsInterface(s.Recv()) {
		return false
	}
	return s.Obj().Pkg() != nil && s.Obj().Pkg().Path() == "io"
}

func calleeIdent(fun ast.Expr) *ast.Ident {
	fun = ast.Unparen(fun)
	switch x := fun.(type) {
	case *ast.IndexExpr:
		fun = x.X
	case *ast.IndexListExpr:
		fun = x.X
	}
	switch x := fun.(type) {
	case *ast.Ident:
		return x
	case *ast.SelectorExpr:
		return x.Sel
	}
	panic("no callee identifier")
}

// syncContext is why an await cannot replace call where it is, or "".
func (r *rewriter) syncContext(call *ast.CallExpr, stack []ast.Node) string {
	for i := len(stack) - 2; i >= 0; i-- {
		switch s := stack[i].(type) {
		case *ast.FuncLit:
			return syncFuncLit
		case *ast.DeferStmt:
			if s.Call == call {
				return syncDefer
			}
		case *ast.GoStmt:
			if s.Call == call {
				return syncDefer
			}
		case *ast.RangeStmt:
			if !r.rangeTakesAwait(s) {
				return syncRange
			}
		case *ast.LabeledStmt:
			switch s.Stmt.(type) {
			case *ast.ForStmt, *ast.RangeStmt, *ast.SwitchStmt, *ast.TypeSwitchStmt:
			default:
				return syncLabel
			}
		case *ast.IfStmt:
			if s.Init != nil && contains(s.Init, call) && !plainInit(s.Init) {
				return syncInit
			}
		case *ast.SwitchStmt:
			if s.Init != nil && contains(s.Init, call) && !plainInit(s.Init) {
				return syncInit
			}
		case *ast.TypeSwitchStmt:
			if s.Init != nil && contains(s.Init, call) && !plainInit(s.Init) {
				return syncInit
			}
		case *ast.ForStmt:
			if s.Init != nil && contains(s.Init, call) && !plainInit(s.Init) {
				return syncInit
			}
		}
	}
	return ""
}

func contains(n ast.Node, x ast.Node) bool { return n.Pos() <= x.Pos() && x.End() <= n.End() }

func plainInit(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.AssignStmt, *ast.ExprStmt:
		return true
	}
	return false
}

// rangeTakesAwait reports whether the generator takes an await in s: a
// range over an integer, a string, a slice, an array or a pointer to one.
func (r *rewriter) rangeTakesAwait(s *ast.RangeStmt) bool {
	t := r.info.TypeOf(s.X)
	if t == nil {
		return true // range n with an untyped constant
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&(types.IsInteger|types.IsString) != 0
	case *types.Slice, *types.Array:
		return true
	case *types.Pointer:
		_, ok := u.Elem().Underlying().(*types.Array)
		return ok
	}
	return false
}

// tryPlace reports whether a future.Try of call may stand where call is,
// under parent, in a function of shape fnShape: a statement, the right-hand
// side of x, err := or = to variables, or the value of return.
func tryPlace(call *ast.CallExpr, parent ast.Node, fnShape int) bool {
	switch p := parent.(type) {
	case *ast.ExprStmt:
		return true
	case *ast.AssignStmt:
		if len(p.Lhs) != 2 || len(p.Rhs) != 1 {
			return false
		}
		for _, l := range p.Lhs {
			if _, ok := ast.Unparen(l).(*ast.Ident); !ok {
				return false
			}
		}
		return true
	case *ast.ReturnStmt:
		return len(p.Results) == 1 && fnShape == 2
	}
	return false
}

// wrapper is the synchronous function under fi's original name.
func (r *rewriter) wrapper(fi *fnInfo) string {
	fn := fi.decl
	src := fi.file.src
	text := func(n ast.Node) string { return string(src[r.off(n.Pos()):r.off(n.End())]) }
	var b strings.Builder
	fmt.Fprintf(&b, "// %s runs %sAsync to completion (the asynctrial wrapper).\n", fn.Name.Name, fi.newName)
	b.WriteString("func ")
	callee := fi.newName + "Async"
	if fn.Recv != nil {
		rf := fn.Recv.List[0]
		name := "recv"
		if len(rf.Names) > 0 && rf.Names[0].Name != "_" {
			name = rf.Names[0].Name
		}
		fmt.Fprintf(&b, "(%s %s) ", name, text(rf.Type))
		callee = name + "." + callee
	}
	b.WriteString(fn.Name.Name)
	if tps := fn.Type.TypeParams; tps != nil {
		b.WriteString(text(tps))
		var names []string
		for _, fl := range tps.List {
			for _, n := range fl.Names {
				names = append(names, n.Name)
			}
		}
		callee += "[" + strings.Join(names, ", ") + "]"
	}
	var params, args []string
	i := 0
	for _, fl := range fn.Type.Params.List {
		_, variadic := fl.Type.(*ast.Ellipsis)
		names := fl.Names
		if len(names) == 0 {
			names = []*ast.Ident{{Name: "_"}}
		}
		for _, n := range names {
			name := n.Name
			if name == "_" {
				name = fmt.Sprintf("p%d", i)
			}
			i++
			params = append(params, name+" "+text(fl.Type))
			if variadic {
				name += "..."
			}
			args = append(args, name)
		}
	}
	fmt.Fprintf(&b, "(%s)", strings.Join(params, ", "))
	if res := fn.Type.Results; res != nil {
		b.WriteString(" " + text(res))
	}
	call := fmt.Sprintf("%s(%s)", callee, strings.Join(args, ", "))
	switch fi.shape {
	case 0:
		fmt.Fprintf(&b, " {\n\tasynctrialBlock(%s)\n}", call)
	case 1:
		fmt.Fprintf(&b, " {\n\treturn asynctrialBlock(%s)\n}", call)
	case 2:
		fmt.Fprintf(&b, " {\n\treturn asynctrialBlockTry(%s)\n}", call)
	}
	return b.String()
}

// apply applies the edits to src: in order of offset, then of prio at the
// same offset; replacements must not overlap.
func apply(src []byte, edits []edit) ([]byte, error) {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].off != edits[j].off {
			return edits[i].off < edits[j].off
		}
		return edits[i].prio < edits[j].prio
	})
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		if e.off < at {
			return nil, fmt.Errorf("overlapping edits at offset %d", e.off)
		}
		out.Write(src[at:e.off])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(src[at:])
	return out.Bytes(), nil
}

const helperSource = `// Code written by the asynctrial rewriter: the blocking helpers of the
// synchronous wrappers, and the future that I/O points await.

package %s

import (
	"context"

	"github.com/blitz-go/blitz/future"
)

// asynctrialBlock runs f to completion on the calling goroutine.
func asynctrialBlock[T any](f future.Future[T]) T {
	v, err := future.Block(context.Background(), f)
	if err != nil {
		panic(err)
	}
	return v
}

// asynctrialBlockTry runs f to completion and returns its value and error.
func asynctrialBlockTry[T any](f future.Future[future.Result[T]]) (T, error) {
	return asynctrialBlock(f).Get()
}

// asynctrialYield completes with v on its second poll: its first wakes
// the task and returns not ready, so that every I/O point suspends the
// state machines once.
type asynctrialYield[T any] struct {
	v       T
	yielded bool
}

func (y *asynctrialYield[T]) Poll(cx *future.Context) (T, bool) {
	if !y.yielded {
		y.yielded = true
		cx.Waker().Wake()
		var zero T
		return zero, false
	}
	return y.v, true
}

// asynctrialIO is the future of an I/O call's outcome (v, err), done.
func asynctrialIO[T any](v T, err error) future.Future[future.Result[T]] {
	return &asynctrialYield[future.Result[T]]{v: future.Result[T]{Value: v, Err: err}}
}

// asynctrialIOValue is the future of an I/O call's value, done.
func asynctrialIOValue[T any](v T) future.Future[T] {
	return &asynctrialYield[T]{v: v}
}

// asynctrialYieldNow is a future that yields once.
func asynctrialYieldNow() future.Future[struct{}] {
	return &asynctrialYield[struct{}]{}
}
`
