package progfuzz

import (
	"fmt"
	"go/parser"
	"go/token"
	"testing"
)

// TestGenerateIsDeterministic checks that a seed gives one program, and
// that the programs parse (TestFuzzPrograms type-checks them; this runs
// without the go command too).
func TestGenerateIsDeterministic(t *testing.T) {
	n := uint64(500)
	if testing.Short() {
		n = 100
	}
	awaits, pkgs, libs := 0, 0, 0
	for seed := range n {
		name := fmt.Sprintf("p%d", seed)
		p, q := Generate(name, seed), Generate(name, seed)
		if p != q {
			t.Fatalf("seed %d gave two programs:\n%s\n%s", seed, p.Source, q.Source)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), name+".go", header(p)+p.Source, 0); err != nil {
			t.Fatalf("seed %d: %v\n%s%s", seed, err, header(p), p.Source)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), name+"_ref_test.go", Reference(p), 0); err != nil {
			t.Fatalf("seed %d: reference: %v\n%s", seed, err, Reference(p))
		}
		if p.Lib != "" {
			if _, err := parser.ParseFile(token.NewFileSet(), "lib/"+name+".go", libHeader(p)+p.Lib, 0); err != nil {
				t.Fatalf("seed %d: lib: %v\n%s", seed, err, p.Lib)
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "lib/"+name+"_ref.go", libReference(p), 0); err != nil {
				t.Fatalf("seed %d: lib: %v\n%s", seed, err, p.Lib)
			}
			libs++
		}
		if p.Imports != "" {
			pkgs++
		}
		if p.Awaits == 0 {
			t.Fatalf("seed %d: a program without awaits:\n%s", seed, p.Source)
		}
		awaits += p.Awaits
	}
	t.Logf("%d programs, %d awaits; %d import other packages, %d have an async function of their own in lib", n, awaits, pkgs, libs)
	if pkgs == 0 || libs == 0 {
		t.Errorf("no program imports other packages (%d) or has an async function in lib (%d)", pkgs, libs)
	}
}
