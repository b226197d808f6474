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
	awaits := 0
	for seed := range n {
		name := fmt.Sprintf("p%d", seed)
		p, q := Generate(name, seed), Generate(name, seed)
		if p != q {
			t.Fatalf("seed %d gave two programs:\n%s\n%s", seed, p.Source, q.Source)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), name+".go", fileHeader+p.Source, 0); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, p.Source)
		}
		if p.Awaits == 0 {
			t.Fatalf("seed %d: a program without awaits:\n%s", seed, p.Source)
		}
		awaits += p.Awaits
	}
	t.Logf("%d programs, %d awaits", n, awaits)
}
