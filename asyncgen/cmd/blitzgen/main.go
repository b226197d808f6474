// Command blitzgen compiles the async functions of Go packages into
// state-machine futures: for each function whose doc comment holds the
// directive //blitz:async it writes, beside the source file x.go, a file
// x_async.go with a constructor NameAsync returning a future.Future. See the
// package github.com/blitz-go/blitz/asyncgen for what it accepts.
//
// Install it as a tool of your module and run it from go generate:
//
//	go get -tool github.com/blitz-go/blitz/asyncgen/cmd/blitzgen
//
//	//go:generate go tool blitzgen
//
// Its arguments are package patterns, "." when there are none.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/blitz-go/blitz/asyncgen"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: blitzgen [packages]\n")
		flag.PrintDefaults()
	}
	verbose := flag.Bool("v", false, "list the files written")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	written, err := asyncgen.Generate(".", patterns...)
	if *verbose {
		for _, name := range written {
			fmt.Println(name)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
