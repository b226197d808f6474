package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestVetSuiteIsGoVets checks that vetSuite is the suite of the go command that builds the project, by
// the names `go tool vet help` lists: a Go release that adds or drops an analyzer fails here until the
// list is updated.
func TestVetSuiteIsGoVets(t *testing.T) {
	out, err := exec.Command("go", "tool", "vet", "help").CombinedOutput()
	if err != nil {
		t.Fatalf("go tool vet help: %v\n%s", err, out)
	}
	_, list, ok := strings.Cut(string(out), "Registered analyzers:")
	if !ok {
		t.Fatalf("go tool vet help printed no list of analyzers:\n%s", out)
	}
	// The list is one indented line per analyzer, "    name  what it checks", up to a blank line.
	var want []string
	for _, line := range strings.Split(strings.TrimLeft(list, "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			break
		}
		want = append(want, strings.Fields(line)[0])
	}
	if len(want) == 0 {
		t.Fatalf("no analyzers in go tool vet help's list:\n%s", out)
	}
	var got []string
	for _, a := range vetSuite {
		got = append(got, a.Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("vetSuite has %v\ngo vet has   %v", got, want)
	}
}

// TestVetFromSourceFindsPlatformFaults vets a small module whose faults show only on other platforms: a
// constant that overflows int on 32-bit targets (a type error) and a Printf misuse in a file built only
// for darwin (a vet diagnostic). Each platform must report its own fault, and linux/amd64 none.
func TestVetFromSourceFindsPlatformFaults(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":          "module example.com/faults\n\ngo 1.25\n",
		"big.go":          "package faults\n\n// Big is fine where int has 64 bits.\nfunc Big() int { return 1 << 40 }\n",
		"print_darwin.go": "package faults\n\nimport \"fmt\"\n\nfunc say() { fmt.Printf(\"%s\\n\", 1) }\n",
		"faults_test.go":  "package faults\n\nimport \"testing\"\n\nfunc TestBig(t *testing.T) { _ = Big() }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		goos, goarch string
		want         string // a fragment of the error; empty for none
	}{
		{"linux", "amd64", ""},
		{"linux", "386", "overflows"},
		{"darwin", "arm64", "fmt.Printf format %s has arg 1 of wrong type int"},
	} {
		env := []string{"GOOS=" + tc.goos, "GOARCH=" + tc.goarch, "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=mod"}
		err := vetFromSource(dir, env, []string{"./..."})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s/%s: %v", tc.goos, tc.goarch, err)
		case tc.want != "" && err == nil:
			t.Errorf("%s/%s: no error, want one with %q", tc.goos, tc.goarch, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s/%s: %v\nwant %q in it", tc.goos, tc.goarch, err, tc.want)
		}
	}
}
