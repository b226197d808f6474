package asyncgen

// The range over a stream. An async function ranges over the values of a
// stream received one future at a time with the marker future.Each, as a
// goroutine ranges over a Go channel:
//
//	for j := range future.Each(jobs.Recv) {
//		BODY
//	}
//
// Before the type-checked load, in the same overlay as the select over
// futures (selectsugar.go), such a loop is rewritten into a loop the later
// passes already compile. When the stream is a method value x.M of a
// variable x that the function declares and never assigns nor addresses
// (the common case), the method is called in each pass, so that a receive
// whose future is Movable is held by value and allocates nothing:
//
//	for { j, blitzgenEachErr1 := future.Try(jobs.Recv()); if blitzgenEachErr1 != nil { break }; {
//		BODY
//	}}
//
// Otherwise the stream is evaluated once, as Go evaluates a range
// expression, left where it is written (so that it may span lines):
//
//	for blitzgenEachNext1 := (next); ; { j, blitzgenEachErr1 := future.Try(blitzgenEachNext1()); ...
//
// With = instead of :=, the value is received into a variable of its own
// and assigned to the key after the check, so that the loop's end leaves
// the key at the last value received, as Go's range does.
//
// The body keeps a block of its own, so that it may declare a variable of
// the loop variable's name as Go's scopes allow; break, continue and a
// label apply to the rewritten loop as they did to the range. Every line
// keeps its number.

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// eachOperand returns next when e is future.Each(next), with or without
// explicit type arguments.
func eachOperand(fut string, e ast.Expr) (ast.Expr, bool) {
	if call, name := futureCall(fut, e); name == "Each" {
		return call.Args[0], true
	}
	return nil, false
}

// rewriteEach returns the edits that rewrite s, a range over
// future.Each(next) in fn, the n-th rewrite of its file (see the top of
// this file).
func rewriteEach(fset *token.FileSet, fut string, n int, fn *ast.FuncDecl, s *ast.RangeStmt, next ast.Expr) []textEdit {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	line := func(p token.Pos) int { return fset.Position(p).Line }
	errVar := "blitzgenEachErr" + strconv.Itoa(n)
	call := ast.Unparen(s.X).(*ast.CallExpr)
	direct := ""
	if line(s.For) == line(s.Body.Lbrace) && stableMethodValue(fn, next) {
		direct = printNode(fset, next)
	}
	recv := direct
	var edits []textEdit
	if direct == "" {
		nextVar := "blitzgenEachNext" + strconv.Itoa(n)
		recv = nextVar
		// The head up to the operand, and the operand's closing parenthesis
		// to the body's brace, are replaced; the operand stays in place.
		edits = append(edits,
			textEdit{off(s.For), off(next.Pos()), "for " + nextVar + " := (" + newlines(fset, s.For, next.Pos())},
			textEdit{off(next.End()), off(call.Rparen) + 1, ")" + newlines(fset, next.End(), call.Rparen)})
	}
	var head, tail string
	switch {
	case s.Key == nil || isBlank(s.Key):
		head = "_, " + errVar + " := "
	case s.Tok == token.DEFINE:
		head = printNode(fset, s.Key) + ", " + errVar + " := "
	default:
		// Received into a variable of its own and assigned after the
		// check: the error that ends the loop must not assign its zero
		// value to the key, which keeps the last value received, as Go's.
		valVar := "blitzgenEachVal" + strconv.Itoa(n)
		head = valVar + ", " + errVar + " := "
		tail = "; " + printNode(fset, s.Key) + " = " + valVar
	}
	head += qualified(fut, "Try") + "(" + recv + "()); if " + errVar + " != nil { break }" + tail + "; {"
	if direct == "" {
		edits = append(edits, textEdit{off(call.Rparen) + 1, off(s.Body.Lbrace) + 1, "; ; { " + head})
	} else {
		edits = append(edits, textEdit{off(s.For), off(s.Body.Lbrace) + 1, "for { " + head})
	}
	return append(edits, textEdit{off(s.Body.Rbrace), off(s.Body.Rbrace) + 1, "}}"})
}

// newlines is as many newlines as the source holds between from and to,
// so that text replacing it keeps the lines after it where they were.
func newlines(fset *token.FileSet, from, to token.Pos) string {
	return strings.Repeat("\n", max(fset.Position(to).Line-fset.Position(from).Line, 0))
}

// stableMethodValue reports whether next is a method value x.M (or
// (*x).M, the form of a variable that an async literal captures) whose x
// is a variable that fn declares once (a parameter, a result, the receiver
// or a local) and that nothing in fn assigns, increments or addresses,
// whole or in part (x = ..., x.f = ..., &x, &x.f): calling x.M() in each
// pass is then what calling the method value evaluated once would do. The
// check is syntactic and conservative: any such use of a variable of that
// name anywhere in fn counts. The one case it cannot see, a method with a
// value receiver on a variable that a pointer method changes, is refused
// after the load (rejectEachCopies).
func stableMethodValue(fn *ast.FuncDecl, next ast.Expr) bool {
	sel, ok := ast.Unparen(next).(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x := receiverIdent(sel.X)
	if x == nil || x.Name == "_" {
		return false
	}
	declarations, touched := 0, false
	declare := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, f := range fl.List {
			for _, id := range f.Names {
				if id.Name == x.Name {
					declarations++
				}
			}
		}
	}
	declare(fn.Recv)
	declare(fn.Type.Params)
	declare(fn.Type.Results)
	written := func(e ast.Expr) {
		if id := rootIdent(e); id != nil && id.Name == x.Name {
			touched = true
		}
	}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == x.Name && n.Tok == token.DEFINE {
					declarations++
					continue
				}
				written(l)
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				if id.Name == x.Name {
					declarations++
				}
			}
		case *ast.FuncLit:
			declare(n.Type.Params)
			declare(n.Type.Results)
		case *ast.IncDecStmt:
			written(n.X)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				written(n.X)
			}
		case *ast.RangeStmt:
			if n.Tok == token.ASSIGN {
				written(n.Key)
				if n.Value != nil {
					written(n.Value)
				}
			} else if n.Tok == token.DEFINE {
				written(n.Key) // a declaration of the name: not the same variable
				if n.Value != nil {
					written(n.Value)
				}
			}
		}
		return true
	})
	return declarations == 1 && !touched
}

// receiverIdent is x when e is x or (*x).
func receiverIdent(e ast.Expr) *ast.Ident {
	e = ast.Unparen(e)
	if st, ok := e.(*ast.StarExpr); ok {
		e = ast.Unparen(st.X)
	}
	id, _ := e.(*ast.Ident)
	return id
}

// rootIdent is the variable at the root of e: x for x, x.f, x[i], (*x).f,
// x.f[i].g; nil for anything else (a call's result, a literal).
func rootIdent(e ast.Expr) *ast.Ident {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			return x
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		default:
			return nil
		}
	}
}

// rejectEachCopies refuses a range over future.Each(x.M) that the rewrite
// turned into calls of x.M() in each pass (stableMethodValue) where M has
// a value receiver and x is a variable of a non-pointer type: Go copies x
// once into the method value, and a pointer method called on x in the
// loop would change what the later calls see. Part of pass 4d.
func (g *gen) rejectEachCopies() {
	ast.Inspect(g.fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Lhs) != 2 || len(as.Rhs) != 1 {
			return true
		}
		if id, ok := as.Lhs[1].(*ast.Ident); !ok || !strings.HasPrefix(id.Name, "blitzgenEachErr") {
			return true
		}
		try, ok := ast.Unparen(as.Rhs[0]).(*ast.CallExpr)
		if !ok || len(try.Args) != 1 {
			return true
		}
		call, ok := ast.Unparen(try.Args[0]).(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
		if !ok {
			return true
		}
		s := g.info.Selections[sel]
		if s == nil || s.Kind() != types.MethodVal {
			return true
		}
		recv := s.Obj().Type().(*types.Signature).Recv()
		if recv == nil {
			return true
		}
		if _, ptrRecv := recv.Type().(*types.Pointer); ptrRecv {
			return true
		}
		switch s.Recv().Underlying().(type) {
		case *types.Pointer, *types.Interface:
			return true
		}
		g.reject(sel.Pos(), "a range over future.Each of a method with a value receiver on a variable of type %s is not supported in an async function (Go copies the variable into the method value once; a pointer method called in the loop would change it for later receives); write the method value into a variable before the loop (next := %s) and range over future.Each(next) instead", g.typeString(s.Recv()), printNode(g.fset, sel))
		return true
	})
}
