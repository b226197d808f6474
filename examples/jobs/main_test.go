//go:build unix

package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestJobsFinish: every job finishes; the report is sorted.
func TestJobsFinish(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"echo b", "echo c; sleep 0.05", "echo a"}, time.Second, &out, nil))
	assert.Equal(t, "finished, sorted:\na\nb\nc\n", out.String())
}

// TestJobsStoppedEarly: a stop with a job still running gives it the grace
// period, then kills it; the finished jobs are reported.
func TestJobsStoppedEarly(t *testing.T) {
	var out bytes.Buffer
	stop := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(stop) })
	start := time.Now()
	require.NoError(t, run([]string{"echo fast", "echo slow; exec sleep 30"}, 100*time.Millisecond, &out, stop))
	assert.Less(t, time.Since(start), 10*time.Second, "the slow job was killed, not waited for")
	assert.Equal(t, "after 100ms, still running: job 1: killing\nfinished, sorted:\nfast\n", out.String())
}
