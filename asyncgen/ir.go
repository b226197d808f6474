package asyncgen

// The block form, the intermediate form between lower and emission (see
// passes.go). A function is a list of blocks, blocks[i].id == i; block 0
// is where the function starts. Each block is one case of Poll's switch: a
// stretch that runs without waiting, its items in order. An item is one
// of:
//
//   - stmtItem: a statement of the source without awaits, copied (its
//     break and continue statements that leave it become jumps);
//   - awaitStart: the start of an await, which stores the future in a
//     field and goes on at the block that resumes it; always last;
//   - *awaitResume: the first item of that block, which polls the field
//     and assigns, or returns, the value;
//   - branchItem (if), switchItem (a switch's dispatch), gotoItem (a jump)
//     and endItem (the end of the function's body): always last;
//   - loopHead, caseTest and rangeHead: a test that may leave for another
//     block, then go on;
//   - rangeInit, rangeNext, loopNext (cells.go): the hidden steps of loops.
//
// The items refer to the source's syntax trees and types.Info (lower makes
// new syntax where it changes a statement: the linearizer's copies and
// temporaries, with objects of their own); emission rewrites those trees in
// place as it prints them, so whatever reads the form (the dump, the
// checks of check.go) reads it before emission. The invariants the form keeps are listed and checked in
// check.go.

import (
	"go/ast"
	"go/token"
)

// block is a stretch of the function that runs without waiting: one case
// of Poll's switch.
type block struct {
	id       int
	items    []any
	targeted bool
	resume   *awaitResume // the await this block starts by resuming, if any
}

// loopCtx is the innermost lowered loop: where break and continue go.
type loopCtx struct{ brk, cont *block }

type stmtItem struct {
	s  ast.Stmt
	lp *loopCtx
}

type awaitStart struct {
	call   *ast.CallExpr
	field  string
	resume *block
	pos    token.Pos
}

type awaitResume struct {
	lhs    *ast.Ident // nil for an await statement
	define bool
	op     token.Token     // the assignment's token (=, :=, +=, ...)
	ret    bool            // return future.Await(f), or return future.Try(f)
	try    *ast.AssignStmt // x, err := future.Try(f) (or =)
	call   *ast.CallExpr   // the marker call
	field  string
	pos    token.Pos
}

type branchItem struct {
	cond      ast.Expr
	then, els *block
	pos       token.Pos
}

type loopHead struct {
	cond ast.Expr
	exit *block
	pos  token.Pos
}

type gotoItem struct {
	to  *block
	pos token.Pos
}

type endItem struct{ pos token.Pos }

// rangeLoop is a lowered range loop; its items are rangeInit (evaluate the
// range expression once), rangeHead (test, then assign the iteration
// variables) and rangeNext (advance).
type rangeLoop struct {
	s     *ast.RangeStmt
	kind  string // "int", "slice", "array", "string"
	rng   string // field holding the range expression's value; "" for an array not evaluated, or direct
	idx   string // field holding the index; "" when the key is the index (keyIdx)
	next  string // field holding the next index of a string
	arrN  int64  // the length of an array not evaluated
	exit  *block
	x     ast.Expr // the range expression, its awaits replaced by temporaries
	value bool     // the value variable is present and not blank
	named bool     // a string of another type than string, converted to decode it

	// direct: the range expression is a variable that nothing assigns
	// while the loop runs, ranged as it is instead of a copy; keyIdx: the
	// key variable, declared by the loop and never assigned or referenced
	// otherwise than read, is the index (see rangeParts).
	direct, keyIdx bool
}

// evaluated reports whether the loop reads its range expression (into a
// field, or as the variable it is).
func (l *rangeLoop) evaluated() bool { return l.rng != "" || l.direct }

// switchItem dispatches a lowered switch: the tag and the case expressions
// are evaluated in one block, as Go does, and each clause is a block.
type switchItem struct {
	s       ast.Stmt // *ast.SwitchStmt or *ast.TypeSwitchStmt
	tag     ast.Expr // the tag (a type switch: the guard's operand) with its awaits replaced, if it had any
	targets []*block // by clause
	join    *block   // when no clause is default
}

type rangeInit struct{ l *rangeLoop }

type rangeHead struct{ l *rangeLoop }

type rangeNext struct{ l *rangeLoop }

// itemNodes returns the source nodes an item prints.
func itemNodes(it any) []ast.Node {
	switch it := it.(type) {
	case stmtItem:
		return []ast.Node{it.s}
	case awaitStart:
		return []ast.Node{it.call.Args[0]}
	case *awaitResume:
		if it.try != nil {
			return []ast.Node{it.try.Lhs[0], it.try.Lhs[1]}
		}
		if it.lhs != nil {
			return []ast.Node{it.lhs}
		}
	case branchItem:
		return []ast.Node{it.cond}
	case loopHead:
		return []ast.Node{it.cond}
	case caseTest:
		if it.tag != nil {
			return []ast.Node{it.tag, it.expr}
		}
		return []ast.Node{it.expr}
	case switchItem:
		ns := []ast.Node{}
		_, head, body := switchParts(it.s)
		if it.tag != nil {
			head = it.tag
		}
		if head != nil {
			ns = append(ns, head)
		}
		for _, c := range body.List {
			for _, e := range c.(*ast.CaseClause).List {
				ns = append(ns, e)
			}
		}
		return ns
	case rangeInit:
		var ns []ast.Node
		if !it.l.direct {
			// Evaluated into its field, or an array not evaluated but used
			// (_ = x) here, which a local of another case could not be.
			ns = append(ns, it.l.x)
		}
		if it.l.keyIdx {
			ns = append(ns, it.l.s.Key)
		}
		return ns
	case rangeHead:
		var ns []ast.Node
		if it.l.s.Key != nil {
			ns = append(ns, it.l.s.Key)
		}
		if it.l.s.Value != nil {
			ns = append(ns, it.l.s.Value)
		}
		if it.l.direct {
			ns = append(ns, it.l.x)
		}
		return ns
	case rangeNext:
		if it.l.keyIdx {
			return []ast.Node{it.l.s.Key}
		}
	}
	return nil
}
