package progfuzzrun

import (
	"github.com/blitz-go/blitz/future"

	. "progfuzzrun/b/util"
	. "text/template"
)

// Found probing the imports the fuzzer's programs use. The code after the
// await, copied into the generated file, names both dot-imported
// packages; the generated file must import both with a dot. It once
// imported one of them only ("undefined: Must"): the generator's imports
// were a map from name to path that recorded every dot import under the
// one name ".", so the last recorded won.

//blitz:async
func twodotimports(e *Env, n int) int {
	future.Await(e.Val(n))
	t := Must(New("t").Parse("<{{.}}>"))
	nm := Name("x")
	e.Note("%v %v", t.Name(), nm)
	return n
}
