package main

// Versions, releases, and the check that what a user installs works.
//
// versions.txt is the one truth about versions: one version for every public module while below v1,
// and which modules are public. Every module of the workspace requires its siblings at that version
// (the `replace ../sibling` lines stay, for development; they never apply in a user's build). `lint`
// checks that; `release` moves everything to a new version and tags it; `consumable` serves the working
// tree from a file-based module proxy, exactly as the real proxy would serve a release of it, and
// installs each public module from it into a fresh module outside the repository.

import (
	stdzip "archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"

	"github.com/magefile/mage/mg"
)

// modulePrefix is the path every module of the repository starts with; the root module has exactly it.
const modulePrefix = "github.com/blitz-go/blitz"

// versionsFile is the versions file at the repository's root.
const versionsFile = "versions.txt"

// apidiffPkg is the API compatibility checker that `release` runs (with `go run pkg@version`).
const apidiffPkg = "golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4"

// versionSet is versions.txt parsed: the lockstep version, the public modules (directories, each tagged
// DIR/VERSION at a release) and the unpublished ones (the root, test-only modules), which still require
// their siblings at the version.
type versionSet struct {
	Version     string
	Public      []string
	Unpublished []string
}

// readVersions parses versions.txt: `version vX.Y.Z`, then `public DIR` and `unpublished DIR` lines;
// `#` starts a comment.
func readVersions() (versionSet, error) {
	var v versionSet
	data, err := os.ReadFile(versionsFile)
	if err != nil {
		return v, err
	}
	for i, line := range strings.Split(string(data), "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return v, fmt.Errorf("%s:%d: want `version V`, `public DIR` or `unpublished DIR`", versionsFile, i+1)
		}
		switch f[0] {
		case "version":
			v.Version = f[1]
		case "public":
			v.Public = append(v.Public, filepath.Clean(f[1]))
		case "unpublished":
			v.Unpublished = append(v.Unpublished, filepath.Clean(f[1]))
		default:
			return v, fmt.Errorf("%s:%d: unknown keyword %q", versionsFile, i+1, f[0])
		}
	}
	if !semver.IsValid(v.Version) || semver.Canonical(v.Version) != v.Version {
		return v, fmt.Errorf("%s: version %q is not a canonical semantic version", versionsFile, v.Version)
	}
	if v.Version == "v0.0.0" {
		return v, fmt.Errorf("%s: v0.0.0 is no version a module proxy serves; a user's build cannot resolve it", versionsFile)
	}
	if len(v.Public) == 0 {
		return v, fmt.Errorf("%s names no public module", versionsFile)
	}
	return v, nil
}

// writeVersion rewrites the version line of versions.txt, keeping the rest as it is.
func writeVersion(version string) error {
	data, err := os.ReadFile(versionsFile)
	if err != nil {
		return err
	}
	re := regexp.MustCompile(`(?m)^version\s+\S+`)
	if !re.Match(data) {
		return fmt.Errorf("%s has no version line", versionsFile)
	}
	return os.WriteFile(versionsFile, re.ReplaceAll(data, []byte("version "+version)), 0o644)
}

// modulePath is the module path of the module in directory dir.
func modulePath(dir string) string {
	if dir == "." {
		return modulePrefix
	}
	return modulePrefix + "/" + filepath.ToSlash(dir)
}

// moduleTag is the tag of the module in directory dir at version: DIR/VERSION, and VERSION alone for
// the root module, as the go command looks them up.
func moduleTag(dir, version string) string {
	if dir == "." {
		return version
	}
	return filepath.ToSlash(dir) + "/" + version
}

// isSibling reports whether path is a module of this repository.
func isSibling(path string) bool {
	return path == modulePrefix || strings.HasPrefix(path, modulePrefix+"/")
}

// checkVersions is the lint step: versions.txt names every module of the workspace exactly once, and
// every go.mod requires its siblings at versions.txt's version.
func checkVersions() error {
	fmt.Println("== versions:", versionsFile, "and the requirements between the modules")
	v, err := readVersions()
	if err != nil {
		return err
	}
	mods, err := modules()
	if err != nil {
		return err
	}
	named := append(slices.Clone(v.Public), v.Unpublished...)
	var problems []string
	for _, mod := range mods {
		if !slices.Contains(named, mod) {
			problems = append(problems, fmt.Sprintf("module %s is in go.work but not in %s (public or unpublished)", mod, versionsFile))
		}
	}
	for _, n := range named {
		if !slices.Contains(mods, n) {
			problems = append(problems, fmt.Sprintf("%s names %s, which go.work does not use", versionsFile, n))
		}
	}
	for _, mod := range mods {
		f, err := parseGoMod(mod)
		if err != nil {
			return err
		}
		for _, r := range f.Require {
			if isSibling(r.Mod.Path) && r.Mod.Version != v.Version {
				problems = append(problems, fmt.Sprintf("%s/go.mod requires %s at %s, want %s (the version in %s)",
					mod, r.Mod.Path, r.Mod.Version, v.Version, versionsFile))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// parseGoMod reads and parses dir/go.mod.
func parseGoMod(dir string) (*modfile.File, error) {
	name := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(name, data, nil)
}

// rewriteSiblings sets every sibling requirement of the go.mod in data that is at version from to version
// to and returns the new go.mod; requirements at another version are left as they are (lint reports
// them). It is the one rewrite that both `release` and `consumable` make.
func rewriteSiblings(name string, data []byte, from, to string) ([]byte, error) {
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, err
	}
	for _, r := range f.Require {
		if isSibling(r.Mod.Path) && r.Mod.Version == from {
			if err := f.AddRequire(r.Mod.Path, to); err != nil {
				return nil, err
			}
		}
	}
	f.Cleanup()
	return f.Format()
}

// Release moves every module to VERSION and tags it: it checks the tree is clean and CHANGELOG.md has a
// section for VERSION, prints an API compatibility report of each public module against the previous
// release (apidiff), rewrites the sibling requirements and versions.txt, tidies every module, commits,
// and creates one annotated tag per public module (DIR/VERSION) on that commit. It pushes nothing.
func Release(version string) error {
	v, err := readVersions()
	if err != nil {
		return err
	}
	if err := checkReleasable(v, version); err != nil {
		return err
	}
	// The report first: it reads the tree and the previous release, and a failure leaves both alone.
	if err := apiReport(v, version); err != nil {
		return err
	}
	mods, err := modules()
	if err != nil {
		return err
	}
	for _, mod := range mods {
		name := filepath.Join(mod, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		out, err := rewriteSiblings(name, data, v.Version, version)
		if err != nil {
			return err
		}
		if err := os.WriteFile(name, out, 0o644); err != nil {
			return err
		}
	}
	if err := writeVersion(version); err != nil {
		return err
	}
	if err := forEachModule(func(mod string) error { return goIn(mod, nil, "mod", "tidy") }); err != nil {
		return err
	}
	if err := checkVersions(); err != nil {
		return err
	}
	if err := git("add", "-A", "--", versionsFile, "*go.mod", "*go.sum"); err != nil {
		return err
	}
	if exec.Command("git", "diff", "--cached", "--quiet").Run() == nil {
		fmt.Printf("== the tree is at %s already (the first release): tagging HEAD\n", version)
	} else if err := git("commit", "-m", "release "+version); err != nil {
		return err
	}
	for _, mod := range v.Public {
		tag := moduleTag(mod, version)
		if err := git("tag", "-a", tag, "-m", modulePath(mod)+" "+version); err != nil {
			return err
		}
	}
	fmt.Printf("released %s: %d tags on HEAD; push them with: git push origin main %s\n",
		version, len(v.Public), strings.Join(tagsOf(v.Public, version), " "))
	return nil
}

// checkReleasable refuses a release that is not a step forward from v, a dirty tree, an existing tag,
// or a CHANGELOG.md without a section for the version.
func checkReleasable(v versionSet, version string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("release %q: not a canonical semantic version (like v0.2.0)", version)
	}
	if semver.Major(version) != "v0" {
		return fmt.Errorf("release %s: a major version other than v0 needs module paths with /vN", version)
	}
	if released, _ := tagExists(moduleTag(v.Public[0], v.Version)); released && semver.Compare(version, v.Version) <= 0 {
		return fmt.Errorf("release %s: not after %s, the current release", version, v.Version)
	}
	for _, mod := range v.Public {
		if ok, err := tagExists(moduleTag(mod, version)); err != nil || ok {
			return fmt.Errorf("release %s: tag %s exists already (%v)", version, moduleTag(mod, version), err)
		}
	}
	out, err := exec.Command("git", "status", "--porcelain").Output()
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(out)) > 0 {
		return fmt.Errorf("release %s: the working tree has changes; commit them first:\n%s", version, out)
	}
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		return err
	}
	if !regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(version) + `\b`).Match(changelog) {
		return fmt.Errorf("release %s: CHANGELOG.md has no `## %s` section saying what it holds", version, version)
	}
	return nil
}

// tagExists reports whether the git tag exists.
func tagExists(tag string) (bool, error) {
	err := exec.Command("git", "rev-parse", "-q", "--verify", "refs/tags/"+tag).Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return false, nil
	}
	return err == nil, err
}

// tagsOf returns DIR/VERSION for every module.
func tagsOf(mods []string, version string) []string {
	tags := make([]string, len(mods))
	for i, m := range mods {
		tags[i] = moduleTag(m, version)
	}
	return tags
}

// git runs a git command in the repository, its output to ours.
func git(args ...string) error {
	fmt.Println("== git", strings.Join(args, " "))
	cmd := exec.Command("git", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

// apiReport prints, for each public module, apidiff's report of its packages against the previous
// release (the tree at the tags of versions.txt's version), so that an incompatible change is seen
// before it is tagged. Below v1 such a change is allowed, and CHANGELOG.md must say it.
func apiReport(prev versionSet, version string) error {
	base := moduleTag(prev.Public[0], prev.Version)
	if ok, _ := tagExists(base); !ok {
		fmt.Printf("== API report: no earlier release (no tag %s): %s is the first, nothing to compare\n", base, version)
		return nil
	}
	tmp, err := os.MkdirTemp("", "blitz-apidiff-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	old := filepath.Join(tmp, "old")
	if err := git("worktree", "add", "--detach", old, base); err != nil {
		return err
	}
	defer git("worktree", "remove", "--force", old)
	incompatible := 0
	for _, mod := range prev.Public {
		pkgs, err := exportedPackages(mod)
		if err != nil {
			return err
		}
		oldPkgs, _ := exportedPackages(filepath.Join(old, mod))
		for _, pkg := range pkgs {
			if !slices.Contains(oldPkgs, pkg) {
				fmt.Printf("== API %s: new package\n", pkg)
				continue
			}
			n, err := diffPackage(tmp, filepath.Join(old, mod), mod, pkg)
			if err != nil {
				return err
			}
			incompatible += n
		}
		for _, pkg := range oldPkgs {
			if !slices.Contains(pkgs, pkg) {
				fmt.Printf("== API %s: INCOMPATIBLE: package removed\n", pkg)
				incompatible++
			}
		}
	}
	fmt.Printf("== API report against %s: %d incompatible change(s)\n", prev.Version, incompatible)
	return nil
}

// exportedPackages lists the non-internal packages of the module in dir.
func exportedPackages(dir string) ([]string, error) {
	cmd := exec.Command(mg.GoCmd(), "list", "./...")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w", dir, err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.Contains(p, "/internal/") && !strings.HasSuffix(p, "/internal") {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}

// diffPackage writes the export data of pkg in the old and the new tree and prints apidiff's report;
// it returns the number of incompatible changes.
func diffPackage(tmp, oldDir, newDir, pkg string) (int, error) {
	name := strings.ReplaceAll(pkg, "/", "_")
	oldX, newX := filepath.Join(tmp, name+".old"), filepath.Join(tmp, name+".new")
	if err := goInTo(oldDir, []string{"GOWORK=off"}, os.Stdout, "run", apidiffPkg, "-w", oldX, pkg); err != nil {
		return 0, err
	}
	if err := goInTo(newDir, []string{"GOWORK=off"}, os.Stdout, "run", apidiffPkg, "-w", newX, pkg); err != nil {
		return 0, err
	}
	var report bytes.Buffer
	if err := goInTo(newDir, []string{"GOWORK=off"}, &report, "run", apidiffPkg, oldX, newX); err != nil {
		return 0, err
	}
	fmt.Printf("== API %s:\n%s", pkg, report.String())
	n := 0
	inIncompatible := false
	sc := bufio.NewScanner(&report)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Incompatible changes"):
			inIncompatible = true
		case strings.HasPrefix(line, "Compatible changes"):
			inIncompatible = false
		case inIncompatible && strings.HasPrefix(strings.TrimSpace(line), "- "):
			n++
		}
	}
	return n, nil
}

// Consumable checks that every public module installs and works the way a user gets it: it serves the
// working tree from a file-based module proxy at a pre-release version (the zips made with
// golang.org/x/mod/zip, as the real proxy makes them, a root LICENSE added to modules without one, and
// the sibling requirements rewritten as `release` would), then, in fresh modules outside the
// repository, with no go.work, an empty module cache and GOPROXY set to that proxy before the real one,
// `go get`s one public module alone and builds and runs a program against it: the README's first
// program, and each program in examples/consumers. A leaf module's program must have nothing in its
// module graph but the module itself.
func Consumable() error {
	v, err := readVersions()
	if err != nil {
		return err
	}
	pre := semver.Canonical(v.Version)
	pre = bumpPatch(pre) + "-consumable"
	tmp, err := os.MkdirTemp("", "blitz-consumable-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	proxy := filepath.Join(tmp, "proxy")
	for _, mod := range v.Public {
		if err := serveModule(proxy, tmp, mod, v.Version, pre); err != nil {
			return fmt.Errorf("serving %s: %w", mod, err)
		}
	}
	fmt.Printf("== consumable: %d modules served at %s from %s\n", len(v.Public), pre, proxy)

	readme, err := readmeProgram()
	if err != nil {
		return err
	}
	type consumer struct {
		name    string
		modules []string // public modules it go gets, alone
		main    []byte
		want    string // a line its output must contain
		leaf    bool   // its module graph must hold only the module
		tool    string // a public module's command it installs with go get -tool, then runs go generate
	}
	consumers := []consumer{{name: "readme", modules: []string{".", "future"}, main: readme, want: "hello, world <nil>"}}
	if bytes.Contains(readme, []byte("//blitz:async")) {
		consumers[0].tool = "asyncgen/cmd/blitzgen" // as the README's set-up says: go get -tool, go generate
	}
	entries, err := os.ReadDir(filepath.Join("examples", "consumers"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		main, err := os.ReadFile(filepath.Join("examples", "consumers", e.Name(), "main.go"))
		if err != nil {
			return err
		}
		c := consumer{name: e.Name(), modules: []string{e.Name()}, main: main, want: "ok: " + e.Name()}
		c.leaf = e.Name() == "wsqueue" || e.Name() == "timerwheel"
		if e.Name() == "asyncgen" {
			// The generator is a tool: its program is the user's, with an
			// async function that go generate compiles before it runs.
			c.modules = []string{".", "future"}
			c.tool = "asyncgen/cmd/blitzgen"
		}
		consumers = append(consumers, c)
	}

	realCache := filepath.Join(goEnv("GOMODCACHE"), "cache", "download")
	env := []string{
		"GOWORK=off",
		"GOFLAGS=-modcacherw",
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"),
		"GOPROXY=" + fileURL(proxy) + "," + fileURL(realCache) + ",https://proxy.golang.org",
		"GONOSUMDB=" + modulePrefix,
		"GOPRIVATE=",
		"GONOPROXY=",
	}
	for _, c := range consumers {
		dir := filepath.Join(tmp, "consumer-"+c.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), c.main, 0o644); err != nil {
			return err
		}
		if err := goIn(dir, env, "mod", "init", "example.com/consumer/"+c.name); err != nil {
			return err
		}
		args := []string{"get"}
		for _, m := range c.modules {
			args = append(args, modulePath(m)+"@"+pre)
		}
		if err := goIn(dir, env, args...); err != nil {
			return fmt.Errorf("consumer %s: go get: %w", c.name, err)
		}
		if c.tool != "" {
			if err := goIn(dir, env, "get", "-tool", modulePrefix+"/"+c.tool+"@"+pre); err != nil {
				return fmt.Errorf("consumer %s: go get -tool: %w", c.name, err)
			}
			if err := goIn(dir, env, "generate", "./..."); err != nil {
				return fmt.Errorf("consumer %s: go generate: %w", c.name, err)
			}
		}
		var out bytes.Buffer
		if err := goInTo(dir, env, &out, "run", "."); err != nil {
			return fmt.Errorf("consumer %s: go run: %w\n%s", c.name, err, out.String())
		}
		fmt.Print(out.String())
		if !strings.Contains(out.String(), c.want) {
			return fmt.Errorf("consumer %s: output lacks %q", c.name, c.want)
		}
		if c.leaf {
			var graph bytes.Buffer
			if err := goInTo(dir, env, &graph, "list", "-m", "all"); err != nil {
				return err
			}
			got := strings.Fields(graph.String())
			want := []string{"example.com/consumer/" + c.name, modulePath(c.modules[0]), pre}
			if !slices.Equal(got, want) {
				return fmt.Errorf("consumer %s: module graph %q, want only the module itself", c.name, got)
			}
			fmt.Printf("== consumer %s: module graph is the module alone\n", c.name)
		}
	}
	fmt.Printf("== consumable: %d consumers installed, built and ran\n", len(consumers))
	return nil
}

// bumpPatch returns the version after v's patch release (v0.1.0 -> v0.1.1).
func bumpPatch(v string) string {
	var major, minor, patch int
	fmt.Sscanf(strings.TrimPrefix(semver.Canonical(v), "v"), "%d.%d.%d", &major, &minor, &patch)
	return fmt.Sprintf("v%d.%d.%d", major, minor, patch+1)
}

// serveModule writes the module in dir into the file-based proxy at version pre: a copy of the tree with
// its sibling requirements at released rewritten to pre (as `release` rewrites them), and the root
// LICENSE added if the module has none (as the go command does when it zips a module in a
// subdirectory of a repository).
func serveModule(proxy, tmp, dir, released, pre string) error {
	path := modulePath(dir)
	src := filepath.Join(tmp, "src", strings.ReplaceAll(path, "/", "_"))
	if err := copyModuleTree(src, dir); err != nil {
		return err
	}
	gomod := filepath.Join(src, "go.mod")
	data, err := os.ReadFile(gomod)
	if err != nil {
		return err
	}
	if data, err = rewriteSiblings(gomod, data, released, pre); err != nil {
		return err
	}
	if err := os.WriteFile(gomod, data, 0o644); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(src, "LICENSE")); errors.Is(err, fs.ErrNotExist) {
		license, err := os.ReadFile("LICENSE")
		if err != nil {
			return fmt.Errorf("the repository has no LICENSE: %w", err)
		}
		if err := os.WriteFile(filepath.Join(src, "LICENSE"), license, 0o644); err != nil {
			return err
		}
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	at := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(at, pre+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(z, module.Version{Path: path, Version: pre}, src); err != nil {
		z.Close()
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	if err := checkZipHasLicense(filepath.Join(at, pre+".zip"), path, pre); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{pre, time.Now().UTC().Truncate(time.Second)})
	if err := os.WriteFile(filepath.Join(at, pre+".info"), info, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(at, pre+".mod"), data, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(at, "list"), []byte(pre+"\n"), 0o644)
}

// copyModuleTree copies the files of the module in dir to dst: the tree without the directories of
// other modules (those with a go.mod of their own, which the go command leaves out of the module's zip)
// and without .git, so that the root module's copy is not the whole repository.
func copyModuleTree(dst, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			if rel != "." {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// checkZipHasLicense fails unless the module zip holds a LICENSE at the module's root: a module
// without one is hidden by the Go package index and may not legally be used.
func checkZipHasLicense(name, path, version string) error {
	r, err := stdzip.OpenReader(name)
	if err != nil {
		return err
	}
	defer r.Close()
	want := path + "@" + version + "/LICENSE"
	for _, f := range r.File {
		if f.Name == want {
			return nil
		}
	}
	return fmt.Errorf("%s has no %s", name, want)
}

// readmeProgram returns the Go program under the README's "A first program" heading.
func readmeProgram() ([]byte, error) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		return nil, err
	}
	_, after, ok := strings.Cut(string(data), "## A first program")
	if !ok {
		return nil, errors.New(`README.md has no "## A first program" section`)
	}
	_, code, ok := strings.Cut(after, "```go\n")
	if !ok {
		return nil, errors.New("README.md's first program has no ```go block")
	}
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		return nil, errors.New("README.md's first program's code block does not end")
	}
	return []byte(code), nil
}

// goEnv returns a go env variable.
func goEnv(key string) string {
	out, err := exec.Command(mg.GoCmd(), "env", key).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// fileURL is the file:// URL of a local directory, as GOPROXY takes it.
func fileURL(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return "file://" + filepath.ToSlash(abs)
}
