//go:build linux

package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/blitz-go/blitz/peers"
)

// TestPickLoad: -load and -rate resolve to the load generator or to an
// error that names the flag at fault; a -rate given with wrk is refused as
// a conflict of the flags whether or not wrk is installed (PATH emptied
// here), since installing wrk would not resolve it.
func TestPickLoad(t *testing.T) {
	t.Setenv("PATH", "") // no wrk, whatever the machine has
	for _, c := range []struct {
		name    string
		mode    peers.Mode
		load    string
		threads int
		rate    float64
		want    loadGen
		wantErr string
		wantIs  error // also matched with errors.Is, where set
	}{
		{name: "go closed loop", mode: peers.Echo, load: "go", threads: 1, want: loadGen{}},
		{name: "go paced", mode: peers.Echo, load: "go", threads: 1, rate: 5000, want: loadGen{rate: 5000}},
		{name: "auto without wrk", mode: peers.HTTP, load: "auto", threads: 1, want: loadGen{}},
		{name: "auto paced", mode: peers.HTTP, load: "auto", threads: 1, rate: 10, want: loadGen{rate: 10}},
		{name: "negative rate", mode: peers.Echo, load: "go", threads: 1, rate: -1, wantErr: "-rate -1"},
		{name: "wrk with a rate", mode: peers.HTTP, load: "wrk", threads: 1, rate: 10, wantErr: "-rate needs the Go load"},
		{name: "wrk missing", mode: peers.HTTP, load: "wrk", threads: 1, wantErr: "wrk is not on PATH", wantIs: peers.ErrNoWrk},
		{name: "wrk for echo", mode: peers.Echo, load: "wrk", threads: 1, wantErr: "HTTP servers only"},
		{name: "unknown load", mode: peers.Echo, load: "ab", threads: 1, wantErr: `-load "ab"`},
	} {
		got, err := pickLoad(c.mode, c.load, c.threads, c.rate)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
			}
			if c.wantIs != nil && !errors.Is(err, c.wantIs) {
				t.Errorf("%s: error %v, want one matching %v", c.name, err, c.wantIs)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

// TestProcessor: the first processor's model name with its family and
// model numbers; the name alone where the text has no numbers (arm64's has
// no model name at all); the header carries it.
func TestProcessor(t *testing.T) {
	for _, c := range []struct{ info, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n\n" +
			"processor\t: 1\ncpu family\t: 25\nmodel\t\t: 1\nmodel name\t: Other\n", "AMD EPYC, family 26 model 2"},
		{"processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n", "AMD EPYC 7B13"},
		{"processor\t: 0\nBogoMIPS\t: 50.00\n", "unknown processor"},
		{"", "unknown processor"},
	} {
		if got := processor(c.info); got != c.want {
			t.Errorf("processor(%q) = %q, want %q", c.info, got, c.want)
		}
	}
	if h := machine(); !strings.Contains(h, " CPUs, Linux ") || strings.Contains(h, "unknown processor") && strings.Contains(h, "amd64") {
		t.Errorf("machine() = %q: no processor or CPU count", h)
	}
}
