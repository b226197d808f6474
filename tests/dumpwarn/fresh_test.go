package dumpwarn

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/blitz-go/blitz/asyncgen"
)

// TestGeneratedIsFresh: waits_async.go is what blitzgen writes from waits.go
// now, so the benchmarks measure the generator as it is. When it fails, run
// go generate in this directory.
func TestGeneratedIsFresh(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("loading packages needs the go command:", err)
	}
	out, err := asyncgen.GenerateFiles(".", ".")
	if err != nil {
		t.Fatal(err)
	}
	name, err := filepath.Abs("waits_async.go")
	if err != nil {
		t.Fatal(err)
	}
	want, ok := out[name]
	if !ok || len(out) != 1 {
		t.Fatalf("generated %d files, want only %s", len(out), name)
	}
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate in this directory", name)
	}
}
