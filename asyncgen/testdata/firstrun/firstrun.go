// Package firstrun calls the constructors of its async functions before
// any generated file exists: a package as a user first writes it.
package firstrun

import (
	"strings"
	"time"

	"github.com/blitz-go/blitz/future"
	fut "github.com/blitz-go/blitz/future"
)

// Greeter greets by method.
type Greeter struct{ prefix string }

//blitz:async
func greet(name string, _ time.Duration) string {
	future.Await(future.Ready(struct{}{}))
	return "hello, " + name
}

//blitz:async
func (g *Greeter) Greet(names ...string) (string, error) {
	var out []string
	for _, n := range names {
		s := future.Await(greetAsync(n, time.Millisecond))
		out = append(out, g.prefix+s)
	}
	return strings.Join(out, "; "), nil
}

//blitz:async
func first[T any](fs []fut.Future[T]) (v T) {
	for _, f := range fs {
		v = future.Await(f)
		return v
	}
	return v
}

//blitz:async
func all(g *Greeter) {
	s, err := future.Try(g.GreetAsync("a", "b"))
	if err != nil {
		return
	}
	_ = future.Await(firstAsync([]fut.Future[string]{future.Ready(s)}))
}

// Run spawns nothing: it only refers to the constructors.
func Run(g *Greeter) (fut.Future[future.Result[string]], fut.Future[struct{}]) {
	return g.GreetAsync("x"), allAsync(g)
}
