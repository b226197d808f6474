package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMainPrintsTheGreetings runs the README's first program and checks
// its output.
func TestMainPrintsTheGreetings(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	require.NoError(t, w.Close())
	var out bytes.Buffer
	_, err = io.Copy(&out, r)
	require.NoError(t, err)
	require.Equal(t, "hello, world <nil>\n[hello, Ada hello, Grace slowpoke timed out] <nil>\n", out.String())
}

// TestREADMEShowsThisProgram keeps the README's async program and this file
// the same, but for the go:generate line: a user's module runs the
// generator as a tool (go tool blitzgen), this repository from its
// workspace (go run).
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	const open = "```go\n"
	_, after, ok := strings.Cut(string(readme), open+"package main\n\n//go:generate")
	require.True(t, ok, "no Go block in README.md starting with package main and a go:generate line")
	block := "package main\n\n//go:generate" + after[:strings.Index(after, "```")]
	program := string(src)[strings.Index(string(src), "package main\n"):]
	program = strings.Replace(program,
		"//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen\n",
		"//go:generate go tool blitzgen\n", 1)
	require.Equal(t, program, block)
}
