package progfuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"go/format"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/blitz-go/blitz/asyncgen"
	"golang.org/x/tools/go/packages"
)

// byteSource is a rand.Source that yields the fuzzer's bytes, eight at a
// time, then numbers that a hash of them seeds (a source of zeros would
// make the generator's "another else if?" loops endless).
type byteSource struct {
	data []byte
	rest *rand.PCG
}

func newByteSource(data []byte) *byteSource {
	h := fnv.New64a()
	h.Write(data)
	return &byteSource{data: data, rest: rand.NewPCG(h.Sum64(), uint64(len(data)))}
}

func (s *byteSource) Uint64() uint64 {
	if len(s.data) == 0 {
		return s.rest.Uint64()
	}
	var b [8]byte
	n := copy(b[:], s.data)
	s.data = s.data[n:]
	return binary.LittleEndian.Uint64(b[:])
}

// positioned is the form of every message of a rejection.
var positioned = regexp.MustCompile(`^(.+\.go):(\d+):(\d+): blitzgen: \S`)

// FuzzGenerator turns the input into a program, which may hold one
// construct that the generator may reject, and runs the generator on it:
// it must either accept it, writing gofmt-clean code that type-checks, or
// reject that construct with positioned messages, one at the construct; it
// must not panic, nor break an invariant of its intermediate form (it runs
// with asyncgen.Options.Check).
func FuzzGenerator(f *testing.F) {
	needGo(f)
	f.Add([]byte("blitz"))
	f.Add([]byte{0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 1, 2, 3})
	f.Add(bytes.Repeat([]byte{0xff, 0x07}, 40))
	root, err := filepath.Abs("../../..")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := GenerateWild("fz", newByteSource(data))
		dir := t.TempDir()
		// The other packages only for a program that uses them (they
		// take their time to load).
		withPkgs := p.Imports != "" || p.Lib != ""
		writeModule(t, dir, root, withPkgs)
		file := filepath.Join(dir, "fz.go")
		writeProgram(t, dir, p, placement{suffix: ".go"})
		for _, kv := range goEnv {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		out, err := asyncgen.Options{Check: true}.GenerateFiles(dir, "./...")
		headerLines := strings.Count(header(p), "\n")
		if errors.Is(err, asyncgen.ErrInvariant) {
			t.Fatalf("the generator broke an invariant of its intermediate form: %v\nprogram:\n%s", err, p.Source)
		}
		if err != nil {
			if p.WildLine == 0 {
				t.Fatalf("a program without a rejected construct was rejected: %v\nprogram:\n%s%s", err, p.Source, p.Lib)
			}
			at := false
			for _, l := range strings.Split(err.Error(), "\n") {
				m := positioned.FindStringSubmatch(l)
				if m == nil {
					t.Fatalf("message not in the form file:line:col: blitzgen: ...: %q\nprogram:\n%s", l, p.Source)
				}
				line, _ := strconv.Atoi(m[2])
				if m[1] == file && line-headerLines >= p.WildLine && line-headerLines <= p.WildLine+2 {
					at = true
				}
			}
			if !at {
				t.Fatalf("no message at the rejected construct (program line %d): %v\nprogram:\n%s", p.WildLine, err, p.Source)
			}
			if _, ok := out[filepath.Join(dir, "fz_async.go")]; ok {
				t.Errorf("a rejected program was generated")
			}
			return
		}
		// fz_async.go, lib's async_async.go if lib is there and, if the
		// program has one, the generated file of its file of lib.
		want := []string{"fz_async.go"}
		if withPkgs {
			want = append(want, filepath.Join("lib", "async_async.go"))
		}
		if p.Lib != "" {
			want = append(want, filepath.Join("lib", "fz_async.go"))
		}
		for _, name := range want {
			if _, ok := out[filepath.Join(dir, name)]; !ok {
				t.Fatalf("generated no %s", name)
			}
		}
		if len(out) != len(want) {
			t.Fatalf("generated %d files, not %v", len(out), want)
		}
		var src []byte
		for path, gen := range out {
			if formatted, err := format.Source(gen); err != nil || !bytes.Equal(formatted, gen) {
				t.Fatalf("generated code is not gofmt-clean (%v):\n%s", err, gen)
			}
			if err := os.WriteFile(path, gen, 0o666); err != nil {
				t.Fatal(err)
			}
			src = append(append(src, "// "+path+"\n"...), gen...)
		}
		pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo, Dir: dir}, "./...")
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			for _, e := range pkg.Errors {
				t.Errorf("generated code does not type-check: %v", e)
			}
		}
		if t.Failed() {
			t.Logf("program:\n%s\nlib:\n%s\ngenerated:\n%s", p.Source, p.Lib, src)
		}
	})
}
