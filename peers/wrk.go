//go:build linux

package peers

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNoWrk is returned by RunWrk when the wrk program is not on PATH.
var ErrNoWrk = errors.New("peers: wrk is not on PATH (Debian: apt-get install wrk)")

// WrkLoad is what a wrk run did: the requests it completed over its wall
// time (Load) and the latencies it reported.
type WrkLoad struct {
	Load
	// PerSec is wrk's own "Requests/sec".
	PerSec float64
	// Mean, P50 and P99 are wrk's mean latency and its 50th and 99th
	// percentiles.
	Mean, P50, P99 time.Duration
}

// RunWrk runs wrk against http://addr/ with conns keep-alive connections
// on threads threads for d, in a process of its own, and parses what it
// printed. A run with a socket error or a response other than 2xx or 3xx
// fails. It returns ErrNoWrk (wrapped) when wrk is not on PATH.
func RunWrk(ctx context.Context, addr string, conns, threads int, d time.Duration) (WrkLoad, error) {
	path, err := exec.LookPath("wrk")
	if err != nil {
		return WrkLoad{}, fmt.Errorf("%w: %w", ErrNoWrk, err)
	}
	threads = max(1, min(threads, conns))
	secs := max(1, int((d+time.Second/2)/time.Second)) // wrk takes whole seconds
	cmd := exec.CommandContext(ctx, path, "--latency",
		"-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", strconv.Itoa(secs)+"s",
		"http://"+addr+"/")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return WrkLoad{}, fmt.Errorf("peers: wrk: %w: %s%s", err, stderr.Bytes(), out.Bytes())
	}
	return ParseWrk(out.Bytes())
}

// ParseWrk reads the figures from the output of wrk --latency (wrk 4.x).
func ParseWrk(out []byte) (WrkLoad, error) {
	var l WrkLoad
	var haveOps, haveRate, haveMean bool
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "Latency" && !haveMean:
			// "Latency   532.10us  200.00us   5.00ms   80.00%": the mean first.
			d, err := wrkDuration(f[1])
			if err != nil {
				errs = append(errs, err)
			}
			l.Mean, haveMean = d, true
		case len(f) == 2 && (f[0] == "50%" || f[0] == "99%"):
			d, err := wrkDuration(f[1])
			if err != nil {
				errs = append(errs, err)
			}
			if f[0] == "50%" {
				l.P50 = d
			} else {
				l.P99 = d
			}
		case len(f) >= 4 && f[1] == "requests" && f[2] == "in":
			// "300000 requests in 5.00s, 40.00MB read"
			n, err1 := strconv.ParseInt(f[0], 10, 64)
			el, err2 := wrkDuration(strings.TrimSuffix(f[3], ","))
			if err1 != nil || err2 != nil {
				errs = append(errs, fmt.Errorf("peers: wrk: malformed line %q", line))
			}
			l.Ops, l.Elapsed, haveOps = n, el, true
		case len(f) == 2 && f[0] == "Requests/sec:":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("peers: wrk: malformed line %q", line))
			}
			l.PerSec, haveRate = v, true
		case strings.HasPrefix(line, "Socket errors:"), strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			errs = append(errs, fmt.Errorf("peers: wrk: %s", line))
		}
	}
	if !haveOps || !haveRate || !haveMean {
		errs = append(errs, fmt.Errorf("peers: wrk printed no figures: %q", out))
	}
	return l, errors.Join(errs...)
}

// wrkDuration parses one of wrk's durations: a number and a unit, us, ms,
// s, m or h.
func wrkDuration(s string) (time.Duration, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("peers: wrk: malformed duration %q", s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("peers: wrk: malformed duration %q", s)
	}
	var unit time.Duration
	switch s[i:] {
	case "us":
		unit = time.Microsecond
	case "ms":
		unit = time.Millisecond
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	default:
		return 0, fmt.Errorf("peers: wrk: malformed duration %q", s)
	}
	return time.Duration(v * float64(unit)), nil
}
