package asyncgen

import (
	"cmp"
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// The build constraint of a generated file. x.go's generated file is
// x_async.go, and x_linux.go's x_linux_async.go, whose name implies no
// constraint (its last element is async): so the generated file states
// both the source's //go:build line and what the source's name implies,
// and is compiled exactly when its source is. Generating under two build
// configurations (GOOS=windows, -tags) then writes each configuration's
// files, which never meet in one build.

// buildConstraint returns the //go:build line for the generated file of
// file, named name, or "" if its source is in every build.
func buildConstraint(file *ast.File, name string) string {
	var exprs []constraint.Expr
	for _, cg := range file.Comments {
		if cg.Pos() > file.Package {
			break
		}
		for _, c := range cg.List {
			if constraint.IsGoBuild(c.Text) {
				if x, err := constraint.Parse(c.Text); err == nil {
					exprs = append(exprs, x)
				}
			}
		}
	}
	if x := nameConstraint(name); x != nil {
		exprs = append(exprs, x)
	}
	if len(exprs) == 0 {
		return ""
	}
	x := exprs[0]
	for _, y := range exprs[1:] {
		x = &constraint.AndExpr{X: x, Y: y}
	}
	return "//go:build " + x.String()
}

// nameConstraint is the constraint the go command reads in a file's name
// (name_GOOS.go, name_GOARCH.go, name_GOOS_GOARCH.go, and the same before
// _test.go), nil if none.
func nameConstraint(name string) constraint.Expr {
	base := strings.TrimSuffix(filepath.Base(name), ".go")
	base = strings.TrimSuffix(base, "_test")
	parts := strings.Split(base, "_")
	if len(parts) < 2 {
		return nil // the go command ignores a suffix that is the whole name
	}
	n := len(parts)
	last := parts[n-1]
	if n >= 3 && knownOS[parts[n-2]] && knownArch[last] {
		return &constraint.AndExpr{X: osTag(parts[n-2]), Y: &constraint.TagExpr{Tag: last}}
	}
	if knownOS[last] {
		return osTag(last)
	}
	if knownArch[last] {
		return &constraint.TagExpr{Tag: last}
	}
	return nil
}

// osTag is the constraint of a GOOS in a file name: linux also admits
// android, solaris illumos and darwin ios, as the go command reads them.
// (Its tag matching reads the single tag the same way; the generated line
// spells the pair out for its reader.)
func osTag(goos string) constraint.Expr {
	t := &constraint.TagExpr{Tag: goos}
	switch goos {
	case "linux":
		return &constraint.OrExpr{X: t, Y: &constraint.TagExpr{Tag: "android"}}
	case "solaris":
		return &constraint.OrExpr{X: t, Y: &constraint.TagExpr{Tag: "illumos"}}
	case "darwin":
		return &constraint.OrExpr{X: t, Y: &constraint.TagExpr{Tag: "ios"}}
	}
	return t
}

// knownOS and knownArch are the GOOS and GOARCH values the go command
// recognises in file names (its go/build lists).
var knownOS = setOf("aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js",
	"linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos")

var knownArch = setOf("386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips",
	"mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv",
	"riscv64", "s390", "s390x", "sparc", "sparc64", "wasm")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// buildConfig is a build configuration the generator loads packages in:
// the zero value is the environment's own; otherwise a GOOS and GOARCH,
// and the tags to set.
type buildConfig struct {
	goos, goarch, tags string
}

func (c buildConfig) String() string {
	s := "GOOS=" + c.goos + " GOARCH=" + c.goarch
	if c.tags != "" {
		s += " -tags=" + c.tags
	}
	return s
}

// env is the environment of a load in c: nil (the process's) for the
// zero configuration.
func (c buildConfig) env() []string {
	if c.goos == "" {
		return nil
	}
	return append(os.Environ(), "GOOS="+c.goos, "GOARCH="+c.goarch, "CGO_ENABLED=0")
}

// flags are the build flags of a load in c.
func (c buildConfig) flags() []string {
	if c.tags == "" {
		return nil
	}
	return []string{"-tags=" + c.tags}
}

// configFor returns a build configuration that compiles the source file
// name, which the environment's leaves out: the first, in an order that
// changes as little as it can (the environment's GOOS and GOARCH first, then
// the fewest tags), in which go/build's MatchFile takes the file. It
// reports false if none does: a file only for the ignore tag, for cgo, or
// for a port Go does not have.
func configFor(name string) (buildConfig, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return buildConfig{}, false
	}
	x := nameConstraint(name)
	if line := buildConstraint(f, ""); line != "" {
		y, err := constraint.Parse(line)
		if err != nil {
			return buildConfig{}, false
		}
		if x == nil {
			x = y
		} else {
			x = &constraint.AndExpr{X: x, Y: y}
		}
	}
	if x == nil {
		return buildConfig{}, false
	}
	var custom []string
	x.Eval(func(tag string) bool {
		if !knownOS[tag] && !knownArch[tag] && !impliedTag(tag) && !slices.Contains(custom, tag) {
			custom = append(custom, tag)
		}
		return false
	})
	slices.Sort(custom)
	if len(custom) > 8 {
		return buildConfig{}, false
	}
	hostOS, hostArch := cmp.Or(os.Getenv("GOOS"), runtime.GOOS), cmp.Or(os.Getenv("GOARCH"), runtime.GOARCH)
	pairs := slices.Clone(ports)
	rank := func(p [2]string) int {
		switch {
		case p[0] == hostOS && p[1] == hostArch:
			return 0
		case p[1] == hostArch:
			return 1
		case p[0] == hostOS:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(pairs, func(a, b [2]string) int { return rank(a) - rank(b) })
	subsets := make([]int, 1<<len(custom))
	for i := range subsets {
		subsets[i] = i
	}
	slices.SortStableFunc(subsets, func(a, b int) int { return bits.OnesCount(uint(a)) - bits.OnesCount(uint(b)) })
	dir, base := filepath.Split(name)
	for _, p := range pairs {
		for _, set := range subsets {
			var tags []string
			for i, t := range custom {
				if set&(1<<i) != 0 {
					tags = append(tags, t)
				}
			}
			// The go command's own reading of the name and the
			// //go:build line decides.
			ctx := build.Default
			ctx.GOOS, ctx.GOARCH, ctx.BuildTags, ctx.CgoEnabled = p[0], p[1], tags, false
			if ok, err := ctx.MatchFile(dir, base); err != nil || !ok {
				continue
			}
			c := buildConfig{goos: p[0], goarch: p[1], tags: strings.Join(tags, ",")}
			if c.goos == hostOS && c.goarch == hostArch && c.tags == "" {
				return buildConfig{}, false // the environment's own: not why it was left out
			}
			return c, true
		}
	}
	return buildConfig{}, false
}

// impliedTag reports whether tag is set by the go command itself, never by
// -tags: unix, the compiler, cgo, the release tags; or ignore, which no
// build sets.
func impliedTag(tag string) bool {
	return tag == "unix" || tag == "gc" || tag == "gccgo" || tag == "cgo" || tag == "ignore" || strings.HasPrefix(tag, "go1.")
}

// ports are the GOOS/GOARCH pairs Go builds for (go tool dist list).
var ports = [][2]string{
	{"aix", "ppc64"}, {"android", "386"}, {"android", "amd64"}, {"android", "arm"}, {"android", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"}, {"dragonfly", "amd64"}, {"freebsd", "386"}, {"freebsd", "amd64"},
	{"freebsd", "arm"}, {"freebsd", "arm64"}, {"illumos", "amd64"}, {"ios", "amd64"}, {"ios", "arm64"},
	{"js", "wasm"}, {"linux", "386"}, {"linux", "amd64"}, {"linux", "arm"}, {"linux", "arm64"},
	{"linux", "loong64"}, {"linux", "mips"}, {"linux", "mips64"}, {"linux", "mips64le"}, {"linux", "mipsle"},
	{"linux", "ppc64"}, {"linux", "ppc64le"}, {"linux", "riscv64"}, {"linux", "s390x"}, {"netbsd", "386"},
	{"netbsd", "amd64"}, {"netbsd", "arm"}, {"netbsd", "arm64"}, {"openbsd", "386"}, {"openbsd", "amd64"},
	{"openbsd", "arm"}, {"openbsd", "arm64"}, {"openbsd", "ppc64"}, {"openbsd", "riscv64"}, {"plan9", "386"},
	{"plan9", "amd64"}, {"plan9", "arm"}, {"solaris", "amd64"}, {"wasip1", "wasm"}, {"windows", "386"},
	{"windows", "amd64"}, {"windows", "arm64"},
}
