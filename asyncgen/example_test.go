package asyncgen_test

import (
	"fmt"
	"log"
	"os"

	"github.com/blitz-go/blitz/asyncgen"
)

// ExampleGenerateFiles generates the async functions of the package in
// testdata/golden without writing anything and prints which files it would
// write. It has no checked output: the generator loads packages through the
// go command, which a test binary run on its own (the Windows one under
// Wine) does not have; TestGolden checks the same call's output.
func ExampleGenerateFiles() {
	out, err := asyncgen.GenerateFiles(".", "./testdata/golden")
	if err != nil {
		log.Fatal(err) // a *asyncgen.Error per refused construct, with its position
	}
	for name, src := range out {
		fmt.Println(name, len(src) > 0)
	}
}

// ExampleOptions prints the intermediate form of Lookup, an async function
// of the package in testdata/golden, checking the generator's invariants
// between its passes on the way. Like ExampleGenerateFiles it has no
// checked output; TestDump checks the same dump.
func ExampleOptions() {
	opts := asyncgen.Options{Check: true, Dump: "Lookup", DumpTo: os.Stdout}
	if _, err := opts.GenerateFiles(".", "./testdata/golden"); err != nil {
		log.Fatal(err) // an error wrapping asyncgen.ErrInvariant is a bug of the generator
	}
}
