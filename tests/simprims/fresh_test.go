package simprims

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/blitz-go/blitz/asyncgen"
)

// TestGeneratedIsFresh: every *_async.go here is what blitzgen writes from
// its source now, and blitzgen writes no other file, so that the tests run
// the generator as it is. When it fails, run go generate in this directory.
// (The package has a generated file per workload, so it checks them all
// where gentest.CheckFresh checks one.) It is skipped under the race
// detector, where loading and compiling the package takes half a minute
// of the budget of CI's -race -short run: the output does not depend on
// it, and the runs without -race (mage short, standalone, oldest) check
// it.
func TestGeneratedIsFresh(t *testing.T) {
	if raceEnabled && testing.Short() {
		t.Skip("checked by the runs without -race")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("loading packages needs the go command:", err)
	}
	out, err := asyncgen.GenerateFiles(".", ".")
	if err != nil {
		t.Fatal(err)
	}
	have, err := filepath.Glob("*_async.go")
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(have) {
		t.Errorf("blitzgen writes %d files, the directory holds %d", len(out), len(have))
	}
	for name, want := range out {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v (run go generate in this directory)", filepath.Base(name), err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate in this directory", filepath.Base(name))
		}
	}
}
