package asyncgen

import (
	"go/ast"
	"go/types"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// The checks of check.go hold on every function the tests generate
// (TestGolden, TestEquivGeneratedIsFresh and the fuzzer run with Check);
// these tests break the form of one function on purpose, after the pass
// that makes it, and expect the check to say so.

// compileTo runs the passes of the async function name of testdata/golden
// up to pass last, included. The package is loaded anew each time: emission
// rewrites the syntax trees it compiles.
func compileTo(t *testing.T, name, last string) *gen {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("needs the go command: %v", err)
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo, Dir: "testdata/golden"}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range pkgs {
		for _, file := range pkg.Syntax {
			for _, d := range file.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Name.Name != name || !isAsync(fn) {
					continue
				}
				g := newGen(newFileGen(pkg, file, pkg.Fset.File(file.Pos()).Name()), fn)
				for _, p := range funcPasses {
					p.run(g)
					if len(g.errs) > 0 {
						t.Fatalf("pass %s: %v", p.name, g.errs)
					}
					if p.check != nil {
						if msgs := p.check(g); len(msgs) > 0 {
							t.Fatalf("pass %s of the unbroken form: %v", p.name, msgs)
						}
					}
					if p.name == last {
						return g
					}
				}
			}
		}
	}
	t.Fatalf("no async function %s", name)
	return nil
}

// expect fails unless one of msgs contains want.
func expect(t *testing.T, msgs []string, want string) {
	t.Helper()
	for _, m := range msgs {
		if strings.Contains(m, want) {
			return
		}
	}
	t.Errorf("the check did not report %q; it reported %q", want, msgs)
}

// localNamed returns the variable of g's function named name.
func localNamed(t *testing.T, g *gen, name string) *types.Var {
	t.Helper()
	for id, obj := range g.info.Defs {
		if v, ok := obj.(*types.Var); ok && id.Name == name && v.Pos() >= g.fn.Pos() && v.Pos() < g.fn.End() {
			return v
		}
	}
	t.Fatalf("no variable %s", name)
	return nil
}

func TestCheckBlocksReportsAFallThrough(t *testing.T) {
	g := compileTo(t, "Lookup", "lower")
	b0 := g.blocks[0]
	b0.items = b0.items[:len(b0.items)-1] // the jump to the loop's head
	expect(t, checkBlocks(g), "block 0 ends in a statement, which falls through")
}

func TestCheckBlocksReportsAJumpOutOfTheFunction(t *testing.T) {
	g := compileTo(t, "Lookup", "lower")
	b0 := g.blocks[0]
	b0.items[len(b0.items)-1] = gotoItem{to: &block{id: 7, targeted: true}}
	expect(t, checkBlocks(g), "block 0: a jump jumps to block 7, which is not the function's")
}

func TestCheckBlocksReportsAJumpBeforeTheEnd(t *testing.T) {
	g := compileTo(t, "Lookup", "lower")
	b0 := g.blocks[0]
	b0.items = append([]any{b0.items[len(b0.items)-1]}, b0.items...)
	expect(t, checkBlocks(g), "block 0: a jump at item 1 of 4, before the end of the block")
}

func TestCheckBlocksReportsAnAwaitResumedElsewhere(t *testing.T) {
	g := compileTo(t, "Lookup", "lower")
	for _, b := range g.blocks {
		if b.resume != nil {
			b.resume.field = "aw9"
		}
	}
	expect(t, checkBlocks(g), "an await of field aw1 resumed from field aw9")
}

func TestCheckKeptReportsAVariableLiveAcrossBlocksInACase(t *testing.T) {
	g := compileTo(t, "Lookup", "keep")
	total := localNamed(t, g, "total")
	delete(g.hoisted, total)
	expect(t, checkKept(g), "total is live into block 1 but is a local of one case")
}

func TestCheckKeptReportsALocalOfPollLiveAcrossAnAwait(t *testing.T) {
	g := compileTo(t, "Lookup", "keep")
	g.pollLocal[localNamed(t, g, "total")] = true
	expect(t, checkKept(g), "total is live across the await block 2 resumes but is a local of Poll")
}

func TestCheckKeptReportsAReadBeforeAWrite(t *testing.T) {
	g := compileTo(t, "Lookup", "keep")
	b0 := g.blocks[0]
	b0.items = b0.items[1:] // total := 0
	expect(t, checkKept(g), "total is live into block 0: read before it is written")
}

func TestCheckCellsReportsACellOutsideALoop(t *testing.T) {
	g := compileTo(t, "Lookup", "cells")
	g.cells[localNamed(t, g, "total")] = "total2"
	expect(t, checkCells(g), "total is a cell but is declared in no lowered loop")
}

func TestCheckEmittedReportsAStateThatIsNoCase(t *testing.T) {
	g := compileTo(t, "Lookup", "emit")
	g.out.code = strings.Replace(g.out.code, "f.state = 4\n", "f.state = 7\n", 1)
	expect(t, checkEmitted(g), "Poll sets state 7, which is not one of its cases")
}

func TestCheckEmittedReportsAFieldTwice(t *testing.T) {
	g := compileTo(t, "Lookup", "emit")
	g.out.code = strings.Replace(g.out.code, "total int\n", "total int\ntotal string\n", 1)
	expect(t, checkEmitted(g), "the struct has a second total")
}
