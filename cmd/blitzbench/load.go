package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Where the figures were measured, and how busy the machine was: the header of every output. On Linux
// the processor is /proc/cpuinfo's "model name" with its family and model numbers, and the load comes
// from /proc/loadavg and /proc/stat; elsewhere the processor is GOARCH and the load is unknown (no
// warning is printed).

// machine describes the processor and the Go that built the benchmarks.
func machine(cpu string, cpus int, goVersion string) string {
	return fmt.Sprintf("%s, %d CPUs, %s %s/%s", cpu, cpus, goVersion, runtime.GOOS, runtime.GOARCH)
}

// cpuModel reads the processor's name from /proc/cpuinfo where there is one, else GOARCH.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	if name := cpuModelFrom(string(data)); name != "" {
		return name
	}
	return runtime.GOARCH
}

// cpuModelFrom returns the first "model name" of a /proc/cpuinfo text, followed by the processor's
// family and model numbers where the text has them (x86: "AMD EPYC, family 26 model 2"), since a
// virtual machine's model name often names no generation; "" when there is no model name.
func cpuModelFrom(cpuinfo string) string {
	first, _, _ := strings.Cut(cpuinfo, "\n\n") // the first processor's block
	var name, family, model string
	for line := range strings.Lines(first) {
		key, value, _ := strings.Cut(line, ":")
		switch value = strings.TrimSpace(value); strings.TrimSpace(key) {
		case "model name":
			name = value
		case "cpu family":
			family = value
		case "model":
			model = value
		}
	}
	if name == "" || family == "" || model == "" {
		return name
	}
	return name + ", family " + family + " model " + model
}

// loadSample is the machine's load at one moment.
type loadSample struct {
	Load1       float64 // 1-minute load average
	HasLoad     bool    // Load1 was read
	Busy, Total uint64  // /proc/stat's aggregate CPU time, in clock ticks: busy (not idle, not iowait) and all
	HasStat     bool    // Busy and Total were read
}

// readLoad samples /proc/loadavg and /proc/stat; on other systems it returns an empty sample.
func readLoad() loadSample {
	var s loadSample
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		s.Load1, err = parseLoadavg(string(data))
		s.HasLoad = err == nil
	}
	if data, err := os.ReadFile("/proc/stat"); err == nil {
		var err error
		s.Busy, s.Total, err = parseProcStat(string(data))
		s.HasStat = err == nil
	}
	return s
}

// parseLoadavg returns the 1-minute load of a /proc/loadavg text ("0.52 0.58 0.59 1/467 12345").
func parseLoadavg(text string) (float64, error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return 0, errors.New("blitzbench: empty /proc/loadavg")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return 0, fmt.Errorf("blitzbench: /proc/loadavg: %w", err)
	}
	return v, nil
}

// parseProcStat returns the busy and total clock ticks of the aggregate "cpu" line of a /proc/stat
// text: user nice system idle iowait irq softirq steal [guest guest_nice]. Busy counts steal (time
// the hypervisor gave to others) and leaves out idle and iowait; guest time is already in user.
func parseProcStat(text string) (busy, total uint64, err error) {
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 || fields[0] != "cpu" {
			continue
		}
		var v [8]uint64
		for i := 0; i < len(v) && i+1 < len(fields); i++ {
			if v[i], err = strconv.ParseUint(fields[i+1], 10, 64); err != nil {
				return 0, 0, fmt.Errorf("blitzbench: /proc/stat: %w", err)
			}
		}
		idle := v[3] + v[4]
		busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
		return busy, busy + idle, nil
	}
	return 0, 0, errors.New("blitzbench: no cpu line in /proc/stat")
}

// loadReport is how busy the machine was around the benchmarks.
type loadReport struct {
	CPUs       int
	Start, End loadSample    // at the program's start, and after the last benchmark
	BenchStart loadSample    // just before the first benchmark
	Wall       time.Duration // from BenchStart to End
	OwnCPU     time.Duration // CPU time of the benchmark processes (and the children they waited for)
}

// othersShare returns the fraction of all CPUs that other processes used between BenchStart and End:
// the busy fraction /proc/stat saw, less the benchmarks' own CPU time.
func (l loadReport) othersShare() (float64, bool) {
	if !l.BenchStart.HasStat || !l.End.HasStat || l.End.Total <= l.BenchStart.Total || l.Wall <= 0 || l.CPUs <= 0 {
		return 0, false
	}
	busy := float64(l.End.Busy-l.BenchStart.Busy) / float64(l.End.Total-l.BenchStart.Total)
	own := l.OwnCPU.Seconds() / (l.Wall.Seconds() * float64(l.CPUs))
	return min(max(busy-own, 0), 1), true
}

// Thresholds of the load warnings.
const (
	busyStartLoad  = 0.5  // a 1-minute load above this many per CPU at the start
	othersMaxShare = 0.25 // other processes using more than this share of the CPUs during the run
)

// summary is the one line that says how busy the machine was, for the header.
func (l loadReport) summary() string {
	var parts []string
	if l.Start.HasLoad {
		part := fmt.Sprintf("1-minute load %.2f at the start", l.Start.Load1)
		if l.End.HasLoad {
			part += fmt.Sprintf(", %.2f at the end", l.End.Load1)
		}
		parts = append(parts, part)
	}
	if share, ok := l.othersShare(); ok {
		parts = append(parts, fmt.Sprintf("other processes used %.0f%% of the CPUs during the benchmarks", 100*share))
	}
	if len(parts) == 0 {
		return "load: unknown on this system"
	}
	return "load: " + strings.Join(parts, "; ")
}

// warnings returns what makes the figures suspect: a machine busy at the start (its 1-minute load
// above half its CPUs), a load that grew during the run by more than the benchmarks themselves add (at
// most about one per CPU), or other processes taking more than a quarter of the CPUs meanwhile.
func (l loadReport) warnings() []string {
	var ws []string
	cpus := float64(max(l.CPUs, 1))
	if l.Start.HasLoad && l.Start.Load1 > busyStartLoad*cpus {
		ws = append(ws, fmt.Sprintf("the machine was busy at the start: 1-minute load %.2f on %d CPUs (more than %.1f)",
			l.Start.Load1, l.CPUs, busyStartLoad*cpus))
	}
	if l.Start.HasLoad && l.End.HasLoad && l.End.Load1-l.Start.Load1 > cpus {
		ws = append(ws, fmt.Sprintf("the load grew from %.2f to %.2f during the run, more than the benchmarks add (about %d)",
			l.Start.Load1, l.End.Load1, l.CPUs))
	}
	if share, ok := l.othersShare(); ok && share > othersMaxShare {
		ws = append(ws, fmt.Sprintf("other processes used %.0f%% of the CPUs while the benchmarks ran", 100*share))
	}
	return ws
}
