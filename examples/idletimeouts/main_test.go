package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunExpiresExactlyTheIdleSessions(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out, 20_000))
	assert.Contains(t, out.String(), "timerwheel (embedded Entry)")
	assert.Contains(t, out.String(), "sessions expired")
}
