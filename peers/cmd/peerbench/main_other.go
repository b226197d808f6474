//go:build !linux

// Command peerbench measures blitz's servers beside their peers; it reads
// the servers' CPU time and memory from /proc, so it runs on Linux only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "peerbench: runs on Linux only (it reads the servers' figures from /proc)")
	os.Exit(1)
}
