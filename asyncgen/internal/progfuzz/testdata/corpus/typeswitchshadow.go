package progfuzzrun

import "github.com/blitz-go/blitz/future"

// known: a copied type switch binding new keeps "switch new := a.(type)" while its clauses read fields f.new, f.new2 (new declared and not used)

// The clauses' variables become fields (the name is one the generated code
// uses), but the copied type switch still binds a local and never sets the
// fields.

//blitz:async
func typeswitchshadow(e *Env, n int) int {
	x := future.Await(e.Val(n))
	var a any = x
	switch new := a.(type) {
	case int:
		e.Note("int %d", new)
	default:
		e.Note("other %v", new)
	}
	return x
}
