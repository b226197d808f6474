// Package unstubbed holds an async function whose results the generator
// does not take, and a caller of its constructor: the package cannot
// type-check, and the run must say why the constructor is undefined.
package unstubbed

//blitz:async
func pair() (int, int) { return 1, 2 }

func use() { _ = pairAsync() }
