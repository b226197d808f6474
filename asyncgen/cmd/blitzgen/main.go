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
//
// Two flags serve to debug the generator. -dump NAME prints the
// intermediate form of the async functions named NAME (the function's name,
// its constructor's, or Type.Method) and writes no file:
//
//	blitzgen -dump fetchAsync ./pkg
//
// -check checks the invariants of the intermediate form between the
// generator's passes, and fails on the first that does not hold (a bug of
// the generator); it writes what it would write without it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/blitz-go/blitz/asyncgen"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: blitzgen [-v] [-check] [-dump name] [packages]\n")
		flag.PrintDefaults()
	}
	verbose := flag.Bool("v", false, "list the files written")
	check := flag.Bool("check", false, "check the generator's intermediate form between its passes")
	dump := flag.String("dump", "", "print the intermediate form of the async `function` of this name, and write nothing")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	opts := asyncgen.Options{Check: *check, Dump: *dump, DumpTo: os.Stdout}
	var written []string
	var err error
	if *dump != "" {
		_, err = opts.GenerateFiles(".", patterns...)
	} else {
		written, err = opts.Generate(".", patterns...)
	}
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
