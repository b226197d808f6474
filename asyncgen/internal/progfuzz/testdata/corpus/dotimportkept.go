package progfuzzrun

import (
	"github.com/blitz-go/blitz/future"

	. "progfuzzrun/b/util"
)

// From seed 2177 (reduced; also seeds 2119, 2268). The copied Name("go")
// makes the generated file dot-import b/util, and the qualifier that
// prints the kept field's type once returned the name under which the
// generated file's imports held the path: ".", giving "name ..Name" and
// "blitzgen: formatting the generated code: expected 'IDENT', found '.'"
// (with Options.Check, an invariant broken after pass emit).

//blitz:async
func dotimportkept(e *Env, n int) {
	name := Name("go")
	future.Await(e.Val(n))
	e.Note("name=%q", name)
}
