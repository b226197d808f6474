package asyncgen_test

import (
	"fmt"
	"log"

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
