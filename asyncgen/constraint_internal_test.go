package asyncgen

import (
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedConstraintMatchesGoBuild compares the generated file's
// build constraint with the go command's reading of its source, through
// go/build's MatchFile on every port Go builds for: the generated file
// (x_linux_async.go, whose name implies nothing) must be compiled exactly
// when its source is.
func TestGeneratedConstraintMatchesGoBuild(t *testing.T) {
	names := []string{
		"x.go", "x_linux.go", "x_android.go", "x_darwin.go", "x_ios.go", "x_solaris.go", "x_illumos.go",
		"x_windows_amd64.go", "x_amd64.go", "x_arm64.go", "x_js_wasm.go", "x_plan9_386.go", "x_test.go",
		"x_linux_test.go", "x_freebsd_arm_test.go", "linux.go", "x_unix.go", "x_linux_sparc.go",
	}
	headers := []string{"", "//go:build foo\n\n", "//go:build unix && !windows\n\n", "//go:build (linux || darwin) && !foo\n\n"}
	// Not t.TempDir: under Wine, removing a file that MatchFile read
	// fails ("Invalid function"), and TempDir's cleanup would fail the
	// test for it. The directory is removed as far as the platform lets.
	dir, err := os.MkdirTemp("", "blitzgen-constraint-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for hi, header := range headers {
		for _, name := range names {
			src := header + "package p\n"
			srcPath := filepath.Join(dir, name)
			if err := os.WriteFile(srcPath, []byte(src), 0o666); err != nil {
				t.Fatal(err)
			}
			f, err := parser.ParseFile(token.NewFileSet(), srcPath, src, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			gen := "gen_async.go"
			genSrc := "package p\n"
			if line := buildConstraint(f, name); line != "" {
				genSrc = line + "\n\n" + genSrc
			}
			if err := os.WriteFile(filepath.Join(dir, gen), []byte(genSrc), 0o666); err != nil {
				t.Fatal(err)
			}
			for _, p := range ports {
				for _, tags := range [][]string{nil, {"foo"}} {
					ctx := build.Default
					ctx.GOOS, ctx.GOARCH, ctx.BuildTags, ctx.CgoEnabled = p[0], p[1], tags, false
					want, err1 := ctx.MatchFile(dir, name)
					got, err2 := ctx.MatchFile(dir, gen)
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if got != want {
						t.Errorf("header %d, %s on %s/%s tags %v: source compiled %v, generated (%q) %v", hi, name, p[0], p[1], tags, want, genSrc, got)
					}
				}
			}
			os.Remove(srcPath)
		}
	}
}
