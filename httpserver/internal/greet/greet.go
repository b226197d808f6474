// Package greet holds an async function that answers HTTP requests as a
// task, for the tests and examples of httpserver: blitzgen compiles Greet
// into GreetAsync (greet_async.go), a future the server polls.
package greet

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// Greet waits d on the runtime's timers, without a goroutine, then
// answers with a greeting for the name the request asks for and the size
// of the body it sent.
//
//blitz:async
func Greet(w http.ResponseWriter, r *http.Request, d time.Duration) {
	future.Await(blitz.Sleep(d))
	body, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "hello, %s (%d bytes)\n", r.URL.Query().Get("name"), len(body))
}
