package asyncgen

// The consts pass: the function's local constants, declared at package
// level beside the state machine.
//
// A local const declaration sits in the block it was written in, but the
// code of that block may end up in one case of Poll while a use of the
// constant, after an await, lands in another: the use would not compile.
// Constants have no state, so they need no field: each local constant
// (outside function literals, which are copied whole) is declared once at
// package level, under a name made from the state machine's and its own
// (lookupAsyncFuture_limit for limit), and every use in the function is
// renamed to it. A group keeps its shape, so iota and implicit repetition
// keep their meaning; a constant's type and untypedness are its
// declaration's. A constant expression can read a local variable only
// through len, cap or unsafe.Sizeof/Alignof/Offsetof (len(buf) of an
// array buf is a constant): such a group is declared with the values the
// type checker computed instead of its expressions.

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/ast/astutil"
)

// hoistConsts is pass 4b (consts): it moves the local const declarations
// out of the body into g.constDecls, renaming the constants.
func (g *gen) hoistConsts() {
	renamed := map[types.Object]string{}
	var decls []*ast.GenDecl
	astutil.Apply(g.fn.Body, func(c *astutil.Cursor) bool {
		switch n := c.Node().(type) {
		case *ast.FuncLit:
			return false // its constants stay in it, with it
		case *ast.DeclStmt:
			gd, ok := n.Decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				return true
			}
			for _, spec := range gd.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if obj := g.info.Defs[id]; obj != nil && id.Name != "_" {
						renamed[obj] = freshIn(g.pkgNames(), g.typeName+"_"+id.Name)
						g.names[renamed[obj]] = true
					}
				}
			}
			decls = append(decls, gd)
			_, labeled := c.Parent().(*ast.LabeledStmt)
			switch uses := g.localVarsRead(gd); {
			case len(uses) > 0:
				// The variables stay used where the declaration was, as
				// Go counts len(arr) a use of arr.
				c.Replace(g.blankUseOf(uses, n.Pos()))
			case labeled:
				c.Replace(&ast.EmptyStmt{Semicolon: n.Pos(), Implicit: true})
			default:
				c.Delete()
			}
			return false
		}
		return true
	}, nil)
	if len(decls) == 0 {
		return
	}
	// Rename the constants where they are declared and wherever they are
	// used, function literals included (they see the function's scope).
	rename := func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if name, ok := renamed[g.info.Defs[id]]; ok {
				id.Name = name
			} else if name, ok := renamed[g.info.Uses[id]]; ok {
				id.Name = name
			}
		}
		return true
	}
	ast.Inspect(g.fn.Body, rename)
	for _, gd := range decls {
		ast.Inspect(gd, rename)
	}
	for _, gd := range decls {
		if len(g.localVarsRead(gd)) > 0 && !g.constValues(gd) {
			return
		}
	}
	g.constDecls = decls
}

// pkgNames returns the names declared at package level by the source
// files (not by generated files, whose names this run makes again), with
// those the file's async functions took so far, as a set for freshIn.
func (g *fileGen) pkgNames() map[string]bool {
	if g.pkgLevel == nil {
		g.pkgLevel = map[string]bool{}
		scope := g.pkg.Scope()
		for _, name := range scope.Names() {
			if !isGenName(g.fset.Position(scope.Lookup(name).Pos()).Filename) {
				g.pkgLevel[name] = true
			}
		}
	}
	return g.pkgLevel
}

// localVarsRead returns the identifiers in gd's values that name a local
// variable (through len, cap or unsafe's functions), in source order.
func (g *gen) localVarsRead(gd *ast.GenDecl) []*ast.Ident {
	var ids []*ast.Ident
	ast.Inspect(gd, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := g.info.Uses[id].(*types.Var); ok && v.Parent() != g.pkg.Scope() && !v.IsField() {
				ids = append(ids, id)
			}
		}
		return true
	})
	return ids
}

// blankUseOf is the statement _, ... = x, ... that uses the variables the
// identifiers ids name, with identifiers of its own that the type
// information knows.
func (g *gen) blankUseOf(ids []*ast.Ident, pos token.Pos) ast.Stmt {
	as := &ast.AssignStmt{TokPos: pos, Tok: token.ASSIGN}
	for _, id := range ids {
		use := &ast.Ident{NamePos: pos, Name: id.Name}
		g.info.Uses[use] = g.info.Uses[id]
		g.info.Types[use] = g.info.Types[id]
		as.Lhs = append(as.Lhs, &ast.Ident{NamePos: pos, Name: "_"})
		as.Rhs = append(as.Rhs, use)
	}
	return as
}

// constValues rewrites gd's specs to give each constant its computed
// value and type explicitly (name T = value), or rejects gd if a value has
// no exact literal form here.
func (g *gen) constValues(gd *ast.GenDecl) bool {
	// One spec per constant: with the values explicit, no spec repeats
	// another's expressions, and none reads iota.
	var specs []ast.Spec
	for _, spec := range gd.Specs {
		for _, id := range spec.(*ast.ValueSpec).Names {
			c, _ := g.info.Defs[id].(*types.Const)
			lit, ok := constLiteral(c)
			if !ok {
				g.reject(id.Pos(), "a local constant computed from a local variable is supported only with an integer, boolean or string value; declare it at package level instead")
				return false
			}
			specs = append(specs, &ast.ValueSpec{
				Names:  []*ast.Ident{id},
				Type:   &ast.Ident{NamePos: id.Pos(), Name: g.typeString(c.Type())},
				Values: []ast.Expr{&ast.BasicLit{ValuePos: id.Pos(), Kind: token.STRING, Value: lit}},
			})
		}
	}
	gd.Specs = specs
	return true
}

// constLiteral is c's value as Go source, for the kinds whose value has
// one exact form.
func constLiteral(c *types.Const) (string, bool) {
	if c == nil {
		return "", false
	}
	v := c.Val()
	switch v.Kind() {
	case constant.Int:
		return v.ExactString(), true
	case constant.Bool:
		return strconv.FormatBool(constant.BoolVal(v)), true
	case constant.String:
		return strconv.Quote(constant.StringVal(v)), true
	}
	return "", false
}

// printConsts is the package-level declarations of the hoisted constants.
func (g *emitter) printConsts() string {
	var out string
	for _, gd := range g.constDecls {
		out += g.print(&ast.GenDecl{Tok: token.CONST, Lparen: 1, Specs: gd.Specs, Rparen: 1}) + "\n\n"
	}
	return out
}
