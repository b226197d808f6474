package gentest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/blitz-go/blitz/asyncgen"
)

// CheckFresh checks that the generated file named generated, in the
// current directory, is what blitzgen writes from the package there now,
// and that it is the only file blitzgen writes, so that the tests run the
// generator as it is. When it fails, run go generate in the directory.
// Without the go command (which loading packages needs) it skips.
func CheckFresh(t *testing.T, generated string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("loading packages needs the go command:", err)
	}
	out, err := asyncgen.GenerateFiles(".", ".")
	if err != nil {
		t.Fatal(err)
	}
	name, err := filepath.Abs(generated)
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
