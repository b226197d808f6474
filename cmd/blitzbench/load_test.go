package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLoadavg(t *testing.T) {
	v, err := parseLoadavg("2.67 2.97 2.58 5/134 3435\n")
	require.NoError(t, err)
	assert.Equal(t, 2.67, v)
	_, err = parseLoadavg("")
	assert.Error(t, err)
	_, err = parseLoadavg("high 1 1")
	assert.Error(t, err)
}

func TestParseProcStatCountsStealAsBusy(t *testing.T) {
	text := "cpu  100 5 50 1000 20 3 2 10 0 0\ncpu0 50 2 25 500 10 1 1 5 0 0\nintr 1 2 3\n"
	busy, total, err := parseProcStat(text)
	require.NoError(t, err)
	assert.Equal(t, uint64(100+5+50+3+2+10), busy)
	assert.Equal(t, busy+1000+20, total)
	// An old kernel's line without steal still parses.
	busy, total, err = parseProcStat("cpu 1 2 3 4 5\n")
	require.NoError(t, err)
	assert.Equal(t, uint64(6), busy)
	assert.Equal(t, uint64(15), total)
	_, _, err = parseProcStat("cpu0 1 2 3 4 5\n")
	assert.Error(t, err, "no aggregate line")
}

func TestCPUModelFrom(t *testing.T) {
	info := "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7B13\nflags\t: fpu\n"
	assert.Equal(t, "AMD EPYC 7B13", cpuModelFrom(info), "no family line: the name alone")
	two := "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n\n" +
		"processor\t: 1\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: Other\n"
	assert.Equal(t, "AMD EPYC, family 26 model 2", cpuModelFrom(two), "the first processor's family and model")
	assert.Equal(t, "", cpuModelFrom("processor : 0\nBogoMIPS : 50.00\n"), "arm64 kernels have no model name")
}

// sample is a load sample with both parts known.
func sample(load float64, busy, total uint64) loadSample {
	return loadSample{Load1: load, HasLoad: true, Busy: busy, Total: total, HasStat: true}
}

func TestLoadWarnings(t *testing.T) {
	quiet := loadReport{CPUs: 2, Start: sample(0.3, 0, 0), BenchStart: sample(0.3, 1000, 10000),
		End: sample(2.1, 1000+10000, 10000+12000), Wall: 60 * time.Second, OwnCPU: 100 * time.Second}
	// /proc/stat: 10000 busy ticks of 12000 (83%); ours: 100 s of 120 CPU-seconds (83%).
	share, ok := quiet.othersShare()
	require.True(t, ok)
	assert.InDelta(t, 0, share, 1e-9)
	assert.Empty(t, quiet.warnings(), "the benchmarks' own load is no warning")
	assert.Contains(t, quiet.summary(), "1-minute load 0.30 at the start, 2.10 at the end")
	assert.Contains(t, quiet.summary(), "other processes used 0% of the CPUs")

	busyStart := quiet
	busyStart.Start = sample(1.2, 0, 0)
	ws := busyStart.warnings()
	require.Len(t, ws, 1)
	assert.Contains(t, ws[0], "busy at the start: 1-minute load 1.20 on 2 CPUs")

	grew := quiet
	grew.End = sample(2.5, grew.End.Busy, grew.End.Total)
	ws = grew.warnings()
	require.Len(t, ws, 1)
	assert.Contains(t, ws[0], "grew from 0.30 to 2.50")

	others := quiet
	others.OwnCPU = 60 * time.Second // half of what /proc/stat saw busy was someone else
	share, _ = others.othersShare()
	assert.InDelta(t, 10000.0/12000-0.5, share, 1e-9)
	ws = others.warnings()
	require.Len(t, ws, 1)
	assert.Contains(t, ws[0], "other processes used 33% of the CPUs")
}

func TestLoadUnknownElsewhere(t *testing.T) {
	l := loadReport{CPUs: 8, Wall: time.Second}
	assert.Empty(t, l.warnings())
	_, ok := l.othersShare()
	assert.False(t, ok)
	assert.Equal(t, "load: unknown on this system", l.summary())
}
