package asyncgen

// Async function literals. A call future.Async(func() T { ... }) (or
// AsyncFallible, AsyncDo) in an async function is a literal whose body may
// await. Before the functions are compiled, each such literal is hoisted,
// in the overlay the package is loaded with (the file on disk is
// untouched), into an async function of its own at the end of its file:
//
//	//blitz:async
//	//blitzgen:literal
//	//line /abs/path/file.go:LINE
//	func outer_func1(x *X, y *Y) T { ...the body, x read as (*x)... }
//
// and the call is replaced by outer_func1Async(&x, &y), padded with
// newlines so that every later line keeps its number. The parameters are
// pointers to the variables the literal captures, so that it shares them
// with the enclosing function exactly as a Go closure does; taking their
// address is what makes the enclosing function's state machine give a loop's
// per-iteration variable a cell of its own (cells.go). The //line directive
// makes the hoisted body's positions, hence its generated //line
// directives and its panics, name the literal's own lines.
//
// The package is then loaded again, and the pass repeats while it finds
// literals: a literal inside an async literal is hoisted in the next round,
// once its parent is an async function of its own.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/tools/go/packages"
)

// literalDirective marks a hoisted literal: its direct-style function
// exists only in the overlay, so its generated code does not refer to it.
const literalDirective = "//blitzgen:literal"

// maxLiteralRounds bounds the rounds of hoisting: a literal nested this
// deep in async literals is refused.
const maxLiteralRounds = 8

// asyncLiteralMarkers are the future package's markers of an async
// function literal.
var asyncLiteralMarkers = map[string]bool{"Async": true, "AsyncFallible": true, "AsyncDo": true}

// isLiteral reports whether fn is a hoisted async function literal.
func isLiteral(fn *ast.FuncDecl) bool {
	if fn.Doc == nil {
		return false
	}
	for _, c := range fn.Doc.List {
		if strings.TrimSpace(c.Text) == literalDirective {
			return true
		}
	}
	return false
}

// asyncLiteralCall reports whether call is a call of one of the markers.
func asyncLiteralCall(info *types.Info, call *ast.CallExpr) bool {
	fn := staticCallee(info, call.Fun)
	return fn != nil && fn.Pkg() != nil && fn.Pkg().Path() == futurePath && asyncLiteralMarkers[fn.Name()]
}

// hoistLiterals rewrites, in overlay, every source file of pkgs that holds
// an async function literal ready to hoist (one not inside another), and
// the stub of its generated file. It reports whether it rewrote any, and
// the literals it refuses.
func hoistLiterals(pkgs []*packages.Package, overlay map[string][]byte, refused map[string]string, last bool) (bool, []error) {
	done := map[string]bool{}
	changed := false
	var errs []error
	for _, pkg := range pkgs {
		if pkg.TypesInfo == nil || sourceTypeErrors(pkg) || strings.HasSuffix(pkg.ID, ".test") {
			continue // the package's errors are reported when it is compiled
		}
		for _, file := range pkg.Syntax {
			name := pkg.Fset.File(file.Pos()).Name()
			if isGenerated(file) || done[name] {
				continue
			}
			done[name] = true
			h := &hoister{pkg: pkg, file: file, name: name}
			src, ferrs := h.rewrite(overlay, last)
			errs = append(errs, ferrs...)
			if src == nil {
				continue
			}
			overlay[name] = src
			fset := token.NewFileSet()
			parsed, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return false, append(errs, fmt.Errorf("blitzgen: %s: hoisting async function literals: %w", name, err))
			}
			if stub, _ := stubFile(fset, parsed); stub != nil {
				overlay[genName(name)] = stub
			}
			// A select over futures in a hoisted literal is rewritten
			// now that it is in an async function.
			if err := selectSugar(fset, parsed, overlay, refused); err != nil {
				return false, append(errs, err)
			}
			changed = true
		}
	}
	return changed, errs
}

// sourceTypeErrors reports whether pkg has a type error outside its
// generated files (whose stubs' unused imports are errors).
func sourceTypeErrors(pkg *packages.Package) bool {
	for _, e := range pkg.TypeErrors {
		if !isGenName(e.Fset.PositionFor(e.Pos, false).Filename) {
			return true
		}
	}
	return false
}

// hoister hoists the async function literals of one file.
type hoister struct {
	pkg  *packages.Package
	file *ast.File
	name string
	// taken holds the package-level names chosen so far for hoisted
	// literals.
	taken map[string]bool
	// imports holds the imports the hoisted parameters' types need that
	// the file lacks: name by path.
	imports map[string]string
	// src is the text the file was loaded from.
	src   []byte
	edits []textEdit
	errs  []error
}

// rewrite returns the file's source with its ready literals hoisted, nil
// if it has none, and the literals it refuses.
func (h *hoister) rewrite(overlay map[string][]byte, last bool) ([]byte, []error) {
	info := h.pkg.TypesInfo
	src, err := h.source(overlay)
	if err != nil {
		return nil, []error{err}
	}
	h.src = src
	var tail bytes.Buffer
	for _, d := range h.file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		async := isAsync(fn)
		n := 0
		var stack []ast.Node
		ast.Inspect(fn.Body, func(nd ast.Node) bool {
			if nd == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			stack = append(stack, nd)
			call, ok := nd.(*ast.CallExpr)
			if !ok || !asyncLiteralCall(info, call) {
				return true
			}
			switch enclosing := enclosingLiteral(info, stack[:len(stack)-1]); {
			case !async:
				h.refuse(call.Pos(), "future.%s outside an async function is not supported (it is the marker of an async function literal, which only the generator compiles); write it in a function marked //blitz:async, or an async function of its own and its constructor, instead", markerName(info, call))
				return false
			case enclosing == noLiteral:
				// a literal directly in the function: hoisted below
			case enclosing == asyncLiteral:
				// inside another async literal: hoisted in a later round
				if last {
					h.refuse(call.Pos(), "an async function literal nested more than %d deep is not supported; write the inner one as an async function of its own instead", maxLiteralRounds)
				}
				return false
			default:
				h.refuse(call.Pos(), "an async function literal inside a plain function literal is not supported (the plain literal cannot await it); write it in the async function's own body, or make the outer literal async with future.Async, instead")
				return false
			}
			n++
			if decl := h.hoist(fn, call, n); decl != "" {
				tail.WriteString(decl)
			}
			return false
		})
	}
	if len(h.edits) == 0 {
		return nil, h.errs
	}
	if len(h.imports) > 0 {
		paths := make([]string, 0, len(h.imports))
		for p := range h.imports {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var imp strings.Builder
		for _, p := range paths {
			fmt.Fprintf(&imp, "; import %s %q", h.imports[p], p)
		}
		h.edits = append(h.edits, textEdit{h.offset(h.file.Name.End()), h.offset(h.file.Name.End()), imp.String()})
	}
	out := applyEdits(bytes.Clone(src), h.edits)
	if out == nil {
		return nil, append(h.errs, fmt.Errorf("blitzgen: %s changed while it was read", h.name))
	}
	out = append(out, tail.Bytes()...)
	return out, h.errs
}

// The kinds of the innermost function literal around a node
// (enclosingLiteral).
const (
	noLiteral    = iota // none: the node is in the function's own body
	asyncLiteral        // an async literal, a marker's argument
	plainLiteral        // a plain function literal
)

// enclosingLiteral returns the kind of the innermost function literal on
// stack, the path from the function's body down to a node.
func enclosingLiteral(info *types.Info, stack []ast.Node) int {
	for i := len(stack) - 1; i >= 0; i-- {
		lit, ok := stack[i].(*ast.FuncLit)
		if !ok {
			continue
		}
		if i > 0 {
			if call, ok := stack[i-1].(*ast.CallExpr); ok && asyncLiteralCall(info, call) && len(call.Args) == 1 && call.Args[0] == lit {
				return asyncLiteral
			}
		}
		return plainLiteral
	}
	return noLiteral
}

// markerName is the name of the marker call calls.
func markerName(info *types.Info, call *ast.CallExpr) string {
	return staticCallee(info, call.Fun).Name()
}

// refuse records a refused literal.
func (h *hoister) refuse(p token.Pos, format string, args ...any) {
	h.errs = append(h.errs, &Error{Pos: h.pkg.Fset.Position(p), Msg: fmt.Sprintf(format, args...)})
}

// offset is the byte offset of p in the file.
func (h *hoister) offset(p token.Pos) int { return h.pkg.Fset.PositionFor(p, false).Offset }

// source is the text the file was loaded from.
func (h *hoister) source(overlay map[string][]byte) ([]byte, error) {
	if src, ok := overlay[h.name]; ok {
		return src, nil
	}
	src, err := os.ReadFile(h.name)
	if err != nil {
		return nil, fmt.Errorf("blitzgen: %w", err)
	}
	return src, nil
}

// hoist records the edit that replaces the literal's call, the n-th of
// fn, and returns the hoisted declaration, or "" if it refuses the
// literal.
func (h *hoister) hoist(fn *ast.FuncDecl, call *ast.CallExpr, n int) string {
	info, fset := h.pkg.TypesInfo, h.pkg.Fset
	marker := markerName(info, call)
	lit, ok := ast.Unparen(call.Args[0]).(*ast.FuncLit)
	if !ok {
		h.refuse(call.Pos(), "future.%s of a function value is not supported (it compiles a function literal written in its call); write the literal in the call, future.%s(func() ... { ... }), instead", marker, marker)
		return ""
	}
	caps, consts := captures(info, fn, lit)
	constDecls, ok := h.constDecls(consts)
	if !ok {
		h.refuse(call.Pos(), "an async function literal that uses a local complex constant is not supported; write the constant at package level instead")
		return ""
	}
	name := h.literalName(fn, n)
	tparams, targs := "", ""
	if fn.Recv != nil && len(fn.Recv.List) > 0 && hasTypeParams(fn.Recv.List[0].Type) {
		// A method of a generic type: the hoisted function takes the
		// receiver's type parameters, by the names the method gives them,
		// with the type's constraints.
		var ok bool
		if tparams, targs, ok = h.receiverTypeParams(fn); !ok {
			h.refuse(call.Pos(), "an async function literal in a method whose receiver leaves a type parameter blank (_) is not supported in an async function; write a name for the type parameter in the receiver instead")
			return ""
		}
	} else if fn.Type.TypeParams != nil {
		tparams = "[" + printFields(fset, fn.Type.TypeParams) + "]"
		var names []string
		for _, f := range fn.Type.TypeParams.List {
			for _, id := range f.Names {
				names = append(names, id.Name)
			}
		}
		targs = "[" + strings.Join(names, ", ") + "]"
	}
	fg := newFileGen(h.pkg, h.file, h.name)
	params := make([]string, len(caps))
	args := make([]string, len(caps))
	for i, v := range caps {
		if bad := fg.unnamable(v.Type(), map[types.Type]bool{}); bad != "" {
			h.refuse(call.Pos(), "capturing %s, of type %s (which this package cannot name), is not supported in an async function literal; write its value into a variable of a type the package can name, or the work as an async function of its own, instead", v.Name(), bad)
			return ""
		}
		params[i] = v.Name() + " *" + types.TypeString(v.Type(), h.qualifier)
		args[i] = "&" + v.Name()
	}
	// The call's replacement keeps the call's lines.
	start, end := fset.PositionFor(call.Pos(), false), fset.PositionFor(call.End(), false)
	repl := name + "Async" + targs + "(" + strings.Repeat("\n", end.Line-start.Line) + strings.Join(args, ", ") + ")"
	h.edits = append(h.edits, textEdit{start.Offset, end.Offset, repl})
	return h.declaration(lit, name, tparams, constDecls, params, caps)
}

// receiverTypeParams returns the type parameter list of the generic
// receiver of the method fn, "[K comparable, V any]", and its arguments,
// "[K, V]"; false if one is blank.
func (h *hoister) receiverTypeParams(fn *ast.FuncDecl) (tparams, targs string, ok bool) {
	obj, _ := h.pkg.TypesInfo.Defs[fn.Name].(*types.Func)
	if obj == nil {
		return "", "", false
	}
	rtp := obj.Type().(*types.Signature).RecvTypeParams()
	decls := make([]string, rtp.Len())
	names := make([]string, rtp.Len())
	for i := range rtp.Len() {
		tp := rtp.At(i)
		if tp.Obj().Name() == "_" {
			return "", "", false
		}
		names[i] = tp.Obj().Name()
		decls[i] = names[i] + " " + types.TypeString(tp.Constraint(), h.qualifier)
	}
	return "[" + strings.Join(decls, ", ") + "]", "[" + strings.Join(names, ", ") + "]", true
}

// declaration is the hoisted function of lit, named name.
//
// Its body is the literal's, as a block inside the function's body: the
// literal's own declarations may shadow the variables it captures (a
// parameter could not be redeclared in the body's scope). The local
// constants of the enclosing function it uses are declared before that
// block, on the same line.
func (h *hoister) declaration(lit *ast.FuncLit, name, tparams, constDecls string, params []string, caps []*types.Var) string {
	fset := h.pkg.Fset
	body := h.bodyText(lit, caps)
	results := ""
	if lit.Type.Results != nil && len(lit.Type.Results.List) > 0 {
		if len(lit.Type.Results.List) == 1 && len(lit.Type.Results.List[0].Names) == 0 {
			results = " " + printNode(fset, lit.Type.Results.List[0].Type)
		} else {
			results = " (" + printFields(fset, lit.Type.Results) + ")"
		}
	}
	lb := fset.Position(lit.Body.Lbrace)
	file := lb.Filename
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return fmt.Sprintf("\n\n%s\n%s\n//line %s:%d\nfunc %s%s(%s)%s {%s%s}\n",
		Directive, literalDirective, file, lb.Line, name, tparams, strings.Join(params, ", "), results, constDecls, body)
}

// bodyText is the text of lit's body with each use of a captured variable
// read through its pointer.
func (h *hoister) bodyText(lit *ast.FuncLit, caps []*types.Var) string {
	info, fset := h.pkg.TypesInfo, h.pkg.Fset
	src := h.src
	captured := map[types.Object]bool{}
	for _, v := range caps {
		captured[v] = true
	}
	base := fset.PositionFor(lit.Body.Lbrace, false).Offset
	var edits []textEdit
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && captured[info.Uses[id]] {
			off := fset.PositionFor(id.Pos(), false).Offset - base
			edits = append(edits, textEdit{off, off + len(id.Name), "(*" + id.Name + ")"})
		}
		return true
	})
	end := fset.PositionFor(lit.Body.Rbrace, false).Offset + 1
	return string(applyEdits(bytes.Clone(src[base:end]), edits))
}

// applyEdits applies edits, which do not overlap, to src (which it may
// reuse) and returns the result, nil if an edit lies outside src.
func applyEdits(src []byte, edits []textEdit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start > edits[j].start })
	for _, e := range edits {
		if e.end > len(src) || e.start > e.end || e.start < 0 {
			return nil
		}
		src = append(src[:e.start], append([]byte(e.text), src[e.end:]...)...)
	}
	return src
}

// captures returns the variables of fn that lit uses, and its local
// constants that lit uses, in the order of their first use.
func captures(info *types.Info, fn *ast.FuncDecl, lit *ast.FuncLit) ([]*types.Var, []*types.Const) {
	var vars []*types.Var
	var consts []*types.Const
	seen := map[types.Object]bool{}
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok {
			return true
		}
		obj := info.Uses[id]
		if obj == nil || seen[obj] {
			return true
		}
		if p := obj.Pos(); p < fn.Pos() || p >= fn.End() || (p >= lit.Pos() && p < lit.End()) {
			return true // not the enclosing function's
		}
		switch obj := obj.(type) {
		case *types.Var:
			if !obj.IsField() {
				seen[obj] = true
				vars = append(vars, obj)
			}
		case *types.Const:
			seen[obj] = true
			consts = append(consts, obj)
		}
		return true
	})
	return vars, consts
}

// constDecls declares consts again, by value and with their types, for the
// hoisted function: " const a T = v; const b = w;" ("" for none). It
// reports false for a complex constant, which it does not write.
func (h *hoister) constDecls(consts []*types.Const) (string, bool) {
	var b strings.Builder
	for _, c := range consts {
		v, ok := untypedLiteral(c.Val(), c.Type())
		if !ok {
			return "", false
		}
		typ := ""
		if basic, ok := c.Type().(*types.Basic); !ok || basic.Info()&types.IsUntyped == 0 {
			typ = " " + types.TypeString(c.Type(), h.qualifier)
		}
		fmt.Fprintf(&b, " const %s%s = %s;", c.Name(), typ, v)
	}
	return b.String(), true
}

// untypedLiteral writes v as a constant expression of v's kind, untyped: an
// untyped rune stays a rune literal and an untyped float a float.
func untypedLiteral(v constant.Value, t types.Type) (string, bool) {
	switch v.Kind() {
	case constant.Bool:
		return v.String(), true
	case constant.String:
		return strconv.Quote(constant.StringVal(v)), true
	case constant.Int:
		if basic, ok := t.(*types.Basic); ok && basic.Kind() == types.UntypedRune {
			if r, exact := constant.Int64Val(v); exact && r >= 0 && r <= unicode.MaxRune && (r < 0xD800 || r > 0xDFFF) {
				return fmt.Sprintf("'\\U%08x'", r), true
			}
			return "", false
		}
		return v.ExactString(), true
	case constant.Float:
		num, den, frac := strings.Cut(v.ExactString(), "/")
		if !frac {
			return "(" + num + ".0)", true
		}
		return "(" + num + ".0/" + den + ")", true
	}
	return "", false
}

// hasTypeParams reports whether a receiver type expression has type
// parameters.
func hasTypeParams(e ast.Expr) bool {
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	switch e.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return true
	}
	return false
}

// literalName chooses the name of fn's n-th hoisted literal, one the
// package does not declare: outer_funcN, Type_method_funcN for a method.
func (h *hoister) literalName(fn *ast.FuncDecl, n int) string {
	if h.taken == nil {
		h.taken = map[string]bool{}
	}
	base := fn.Name.Name
	if t := recvTypeName(fn); t != "" {
		base = t + "_" + base
	}
	scope := h.pkg.Types.Scope()
	for i := n; ; i++ {
		name := base + "_func" + strconv.Itoa(i)
		if h.taken[name] || scope.Lookup(name) != nil || scope.Lookup(name+"Async") != nil || scope.Lookup(name+"AsyncFuture") != nil {
			continue
		}
		h.taken[name] = true
		return name
	}
}

// qualifier names the packages of a hoisted literal's parameter types as
// the file imports them, adding an import for the others.
func (h *hoister) qualifier(p *types.Package) string {
	if p == h.pkg.Types {
		return ""
	}
	for _, is := range h.file.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		if path != p.Path() {
			continue
		}
		switch {
		case is.Name == nil:
			return p.Name()
		case is.Name.Name == ".":
			return ""
		case is.Name.Name != "_":
			return is.Name.Name
		}
	}
	if h.imports == nil {
		h.imports = map[string]string{}
	}
	if name, ok := h.imports[p.Path()]; ok {
		return name
	}
	name := "blitzgenImport" + strconv.Itoa(len(h.file.Imports)+len(h.imports)+1)
	h.imports[p.Path()] = name
	return name
}
