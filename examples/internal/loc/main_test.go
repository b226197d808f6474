package main

import (
	"strings"
	"testing"
)

// TestCount counts a small file by hand: blank and comment lines are not
// code, directives are, the package clause and imports count only in the
// total, and main and serve are the accept loop's.
func TestCount(t *testing.T) {
	src := `// Package doc.
package main

//go:generate go tool blitzgen

import "fmt"

// handle is the handler.
//
//blitz:async
func handle() {
	// a comment
	fmt.Println("x") // code with a comment
}

type acceptLoop struct{}

func (a *acceptLoop) Poll() {}

func main() {

	handle()
}
`
	got, err := Count("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// handler: //go:generate, //blitz:async, func, Println, } = 5;
	// serve: type, Poll, func main, handle(), } = 5; total adds package and
	// import: 5 + 5 + 2 = 12.
	want := Counts{Handler: 5, Serve: 5, Total: 12}
	if got != want {
		t.Fatalf("Count = %+v, want %+v", got, want)
	}
}

// TestTwinsTable counts the programs of examples/twins and logs the table
// that go run ./examples/internal/loc -twins prints (go test -v -run
// TwinsTable shows it): each of the seven programs has both versions.
func TestTwinsTable(t *testing.T) {
	twins, err := Twins("../../twins")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tw := range twins {
		names = append(names, tw.Name)
		if tw.Async.Total == 0 || tw.Goroutines.Total == 0 || tw.Async.Main == 0 || tw.Goroutines.Main == 0 {
			t.Errorf("%s: %+v", tw.Name, tw)
		}
	}
	if got := strings.Join(names, " "); got != "chat fanout kv pool proxy retry ticker" {
		t.Errorf("programs: %s", got)
	}
	var b strings.Builder
	if err := printTwins(&b, "../../twins"); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}
