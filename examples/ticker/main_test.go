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

// TestPumpFlushesEveryJobInOrder runs the program: every job is flushed
// once, in order (how the ticks group them depends on the machine's
// timing), and pump returns when the channel is closed and drained.
func TestPumpFlushesEveryJobInOrder(t *testing.T) {
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
	var flushed []string
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for _, l := range lines[:len(lines)-1] {
		job, ok := strings.CutPrefix(l, "flush: ")
		require.True(t, ok, "line %q", l)
		flushed = append(flushed, strings.Fields(job)...)
	}
	require.Equal(t, []string{"fetch", "parse", "index", "store"}, flushed)
	require.Equal(t, "pump returned: channels: closed", lines[len(lines)-1])
}

// TestREADMEShowsPump keeps the README's select example and pump the same.
func TestREADMEShowsPump(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	start := strings.Index(string(src), "//blitz:async\nfunc pump(")
	require.GreaterOrEqual(t, start, 0)
	end := strings.Index(string(src)[start:], "\n}\n") + start + 3
	require.Contains(t, string(readme), "```go\n"+string(src)[start:end]+"```\n")
}
