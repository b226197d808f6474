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
		writeModule(t, dir, root)
		file := filepath.Join(dir, "fz.go")
		write(t, dir, "fz.go", fileHeader+p.Source)
		for _, kv := range goEnv {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		out, err := asyncgen.Options{Check: true}.GenerateFiles(dir, ".")
		headerLines := strings.Count(fileHeader, "\n")
		if errors.Is(err, asyncgen.ErrInvariant) {
			t.Fatalf("the generator broke an invariant of its intermediate form: %v\nprogram:\n%s", err, p.Source)
		}
		if err != nil {
			if p.WildLine == 0 {
				t.Fatalf("a program without a rejected construct was rejected: %v\nprogram:\n%s", err, p.Source)
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
			if len(out) != 0 {
				t.Errorf("a rejected program generated %d files", len(out))
			}
			return
		}
		src, ok := out[filepath.Join(dir, "fz_async.go")]
		if !ok || len(out) != 1 {
			t.Fatalf("generated %d files, not fz_async.go", len(out))
		}
		if formatted, err := format.Source(src); err != nil || !bytes.Equal(formatted, src) {
			t.Fatalf("generated code is not gofmt-clean (%v):\n%s", err, src)
		}
		if err := os.WriteFile(filepath.Join(dir, "fz_async.go"), src, 0o666); err != nil {
			t.Fatal(err)
		}
		pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo, Dir: dir}, ".")
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			for _, e := range pkg.Errors {
				t.Errorf("generated code does not type-check: %v", e)
			}
		}
		if t.Failed() {
			t.Logf("program:\n%s\ngenerated:\n%s", p.Source, src)
		}
	})
}
