package asyncgen

// Keep (pass 7): which variables outlive a block, and whether each is a
// field or a local of Poll (polllocal.go); and the imports of layout
// (pass 9).

import (
	"go/ast"
	"go/types"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// blocksNaming returns, for every local variable of the function that a
// block names (uses or defines), the ids of the blocks that name it, and
// the variables in the order of their first naming.
func (g *gen) blocksNaming() (map[*types.Var]map[int]bool, []*types.Var) {
	used := map[*types.Var]map[int]bool{}
	var order []*types.Var
	for _, b := range g.blocks {
		for _, it := range b.items {
			for _, n := range itemNodes(it) {
				ast.Inspect(n, func(n ast.Node) bool {
					id, ok := n.(*ast.Ident)
					if !ok {
						return true
					}
					obj := g.info.Uses[id]
					if obj == nil {
						obj = g.info.Defs[id]
					}
					if v, ok := g.localVar(obj); ok {
						if used[v] == nil {
							used[v] = map[int]bool{}
							order = append(order, v)
						}
						used[v][b.id] = true
					}
					return true
				})
			}
		}
	}
	return used, order
}

// hoist decides which variables become fields: the parameters, the
// variables of lowered if and for headers, and every local that two blocks
// use (a local used by one block lives and dies between two awaits).
func (g *gen) hoist() {
	used, order := g.blocksNaming()
	g.kept = &kept{
		hoisted:   map[*types.Var]string{},
		pollLocal: map[*types.Var]bool{},
		shared:    map[*types.Var]bool{},
	}
	for v, field := range g.awLocals {
		// Fields already, shared by type (see awaitField); not listed.
		g.hoisted[v] = field
		g.shared[v] = true
	}
	add := func(v *types.Var) {
		if _, ok := g.hoisted[v]; ok || v.Name() == "_" {
			return
		}
		g.hoisted[v] = freshIn(g.fields, v.Name())
		g.hoistList = append(g.hoistList, v)
	}
	// The receiver and the parameters come first and keep their spelling
	// where they can.
	params := g.fn.Type.Params.List
	if g.fn.Recv != nil {
		params = append(g.fn.Recv.List[:1:1], params...)
	}
	for _, f := range params {
		for _, id := range f.Names {
			if v, ok := g.info.Defs[id].(*types.Var); ok {
				add(v)
			}
		}
	}
	// Named results live until the deferred calls after the last return
	// have run: fields. A blank one gets a field of its own.
	for i, id := range g.named {
		v, _ := g.info.Defs[id].(*types.Var)
		if v == nil || id.Name == "_" {
			name := freshIn(g.fields, "result"+strconv.Itoa(i+1))
			g.blankResults = append(g.blankResults, name+" "+g.typeString(g.info.TypeOf(g.namedType(i))))
			g.resFields = append(g.resFields, name)
			continue
		}
		add(v)
		g.resFields = append(g.resFields, g.hoisted[v])
	}
	for _, v := range order {
		if _, done := g.hoisted[v]; done {
			continue // a parameter, a named result or an awaited local
		}
		forced := g.forced[v] || g.shadowsGenerated(v)
		switch {
		case len(used[v]) > 1 && !forced && g.pollLocalOK(v):
			g.addPollLocal(v)
		case len(used[v]) > 1 || forced:
			add(v)
		}
	}
	for _, v := range g.implicit {
		add(v)
	}
}

// localVar returns obj as a variable of the function if it is one that
// hoisting considers: a local, a parameter, a named result, the receiver
// (of the function or of its literals) or a temporary of the linearizer.
func (g *gen) localVar(obj types.Object) (*types.Var, bool) {
	v, ok := obj.(*types.Var)
	if ok && g.synth[v] {
		return v, true // a temporary of the linearizer
	}
	if !ok || v.IsField() || v.Pkg() != g.pkg || v.Parent() == g.pkg.Scope() || v.Parent() == nil {
		return nil, false
	}
	return v, v.Pos() >= g.fn.Pos() && v.Pos() < g.fn.End()
}

// namesInCopied reports whether the generated code of a copied return or
// defer statement may use name: the future package, true, append, and the
// names in printed types (predeclared types, the package's types, imported
// packages).
func (g *gen) namesInCopied(name string) bool {
	switch name {
	case "future", "true", "append":
		return true
	}
	// A return names the result type, as printed (int, error,
	// pkg.Type, future.Result[...]).
	for _, tok := range strings.FieldsFunc(g.resType, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		if tok == name {
			return true
		}
	}
	return false
}

// hasReturnOrDefer reports whether n holds a return or a defer statement
// outside function literals.
func hasReturnOrDefer(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt, *ast.DeferStmt:
			found = true
		}
		return !found
	})
	return found
}

// shadowsGenerated reports whether local v has a name that the generated
// code may use in v's scope (a predeclared identifier such as new, true or
// len, the future package, an imported package, a type of the package), so
// that it must be a field, which shadows nothing. A variable of a function
// literal is the literal's own; one declared in a loop that is copied as it
// is (without awaits) cannot become a field without losing its iteration's
// identity, so it is rejected.
func (g *gen) shadowsGenerated(v *types.Var) bool {
	name := v.Name()
	conflict := name == "future" || name == "utf8" || types.Universe.Lookup(name) != nil
	if tn, ok := g.pkg.Scope().Lookup(name).(*types.TypeName); ok && tn != nil {
		conflict = true
	}
	for _, n := range g.byPath {
		conflict = conflict || n == name
	}
	if !conflict || g.synth[v] {
		return false
	}
	if g.copiedTypeSwitchVar(v) {
		g.reject(v.Pos(), "a type switch variable named %s is not supported in an async function (the generated code uses the name %s); write another name instead", name, name)
		return false
	}
	inside := func(n ast.Node) bool { return v.Pos() >= n.Pos() && v.Pos() < n.End() }
	shadows := true
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		if !shadows || n == nil || !inside(n) {
			return shadows
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			shadows = false
		case *ast.ForStmt, *ast.RangeStmt:
			lowered := false
			for _, l := range g.loops {
				lowered = lowered || l == n
			}
			if !lowered {
				// Copied as it is: the generated code in it is that of its
				// returns and defers, which name future, true, append and
				// types.
				if g.namesInCopied(name) && hasReturnOrDefer(n) {
					g.reject(v.Pos(), "a variable named %s in a loop without awaits that returns or defers is not supported in an async function (the generated code uses the name %s); write another name instead", name, name)
				}
				shadows = false
			}
		}
		return shadows
	})
	return shadows
}

// copiedTypeSwitchVar reports whether v is the variable of a clause of a
// type switch that is copied as it is (one without awaits): its binding
// stays in the copied switch, so it cannot become a field.
func (g *gen) copiedTypeSwitchVar(v *types.Var) bool {
	for n, obj := range g.info.Implicits {
		if _, clause := n.(*ast.CaseClause); clause && obj == v {
			return !slices.Contains(g.implicit, v)
		}
	}
	return false
}

// inLoop reports whether v is declared inside a lowered loop, where Go
// gives each iteration its own variable but the struct has one field.
func (g *gen) inLoop(v *types.Var) bool {
	for _, l := range g.loops {
		if v.Pos() >= l.Pos() && v.Pos() < l.End() {
			return true
		}
	}
	return false
}

// collectImports imports what the printed source refers to by package name.
func (g *gen) collectImports() {
	// The function and the local constants it declares at package level.
	nodes := []ast.Node{g.fn}
	for _, gd := range g.constDecls {
		nodes = append(nodes, gd)
	}
	skip := map[*ast.Ident]bool{}
	for _, root := range nodes {
		g.skipUnprinted(root, skip)
	}
	dots := map[string]bool{}
	for _, is := range g.file.Imports {
		if is.Name != nil && is.Name.Name == "." {
			p, _ := strconv.Unquote(is.Path.Value)
			dots[p] = true
		}
	}
	for _, root := range nodes {
		g.collectImportsIn(root, skip, dots)
	}
}

// skipUnprinted adds to skip the identifiers of root that name no package
// in the printed code: the package of future.Await (the call is not
// printed) and every selector's field or method name.
func (g *gen) skipUnprinted(root ast.Node, skip map[*ast.Ident]bool) {
	ast.Inspect(root, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok {
			if call, ok := g.isAwait(e); ok {
				fun := ast.Unparen(call.Fun)
				if ix, ok := fun.(*ast.IndexExpr); ok {
					fun = ix.X
				}
				switch fun := fun.(type) {
				case *ast.SelectorExpr:
					if id, ok := fun.X.(*ast.Ident); ok {
						skip[id] = true
					}
				case *ast.Ident:
					skip[fun] = true // Await of a dot import of future
				}
			}
		}
		if sel, ok := n.(*ast.SelectorExpr); ok {
			skip[sel.Sel] = true
		}
		return true
	})
}

// collectImportsIn adds the imports that the identifiers of root name
// (except those in skip) to the file's.
func (g *gen) collectImportsIn(root ast.Node, skip map[*ast.Ident]bool, dots map[string]bool) {
	ast.Inspect(root, func(n ast.Node) bool {
		id, ok := n.(*ast.Ident)
		if !ok || skip[id] {
			return true
		}
		switch obj := g.info.Uses[id].(type) {
		case *types.PkgName:
			g.imports[obj.Name()] = obj.Imported().Path()
		case nil:
		default:
			if p := obj.Pkg(); p != nil && dots[p.Path()] && obj.Parent() == p.Scope() {
				g.imports[dotKey(p.Path())] = p.Path()
			}
		}
		return true
	})
}
