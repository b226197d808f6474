package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMainCountsEveryLineOnce runs the pipeline and checks that every line
// the producer sent was counted exactly once, by the tasks and the watcher.
func TestMainCountsEveryLineOnce(t *testing.T) {
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
	require.Equal(t, "lines counted: 30000 by 8 tasks; progress watcher saw 30000", lines[0])
	want := map[string]string{"the": "30000", "dog": "30000", "fox": "20000", "sleeps": "10000"}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		require.Len(t, f, 2, l)
		if n, ok := want[f[0]]; ok {
			require.Equal(t, n, f[1], f[0])
			delete(want, f[0])
		}
	}
	require.Empty(t, want, "words missing from the output")
}
