package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMainPrintsTheGreetings runs the README program and checks its output.
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
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	require.Equal(t, "hello, world <nil>", lines[0])
	require.Equal(t, "[hello, Ada hello, Grace hello, Barbara] <nil>", lines[1])
	require.Equal(t, "true <nil>", lines[2])
	require.True(t, strings.HasPrefix(lines[3], "tasks spawned: 1, polls: "), lines[3])
}

// TestREADMEShowsThisProgram keeps the README's program without the
// generator and this file the same, so that the program a newcomer pastes
// is the one tested here.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	const open = "```go\n"
	start := strings.Index(string(readme), open+"package main\n\nimport")
	require.GreaterOrEqual(t, start, 0, "no Go block starting with package main and its imports in README.md")
	block := string(readme)[start+len(open):]
	block = block[:strings.Index(block, "```")]
	program := string(src)[strings.Index(string(src), "package main\n"):]
	require.Equal(t, program, block)
}
