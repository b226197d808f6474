//go:build !unix

// Command jobs needs a Unix shell (`sh`, `sort`); see main.go.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "jobs: this example runs shell jobs and needs a Unix system")
	os.Exit(1)
}
