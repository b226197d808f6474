//go:build linux

package peers

import (
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// PEERS_BLITZ_IDLESPIN sets the spin when it is a duration, and stops the
// server when it is not: a value like "-1" must not leave the default spin
// running under a label that says "no spin".
func TestBlitzConfigIdleSpin(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want time.Duration
		bad  bool
	}{
		{env: "", want: 0},
		{env: "-1ns", want: -1},
		{env: "10us", want: 10 * time.Microsecond},
		{env: "-1", bad: true},
		{env: "50", bad: true},
		{env: "off", bad: true},
	} {
		t.Setenv("PEERS_BLITZ_IDLESPIN", tc.env)
		c, err := blitzConfig(blitz.Config{})
		switch {
		case tc.bad && err == nil:
			t.Errorf("PEERS_BLITZ_IDLESPIN=%q: no error, IdleSpin %v", tc.env, c.IdleSpin)
		case tc.bad && !strings.Contains(err.Error(), "PEERS_BLITZ_IDLESPIN"):
			t.Errorf("PEERS_BLITZ_IDLESPIN=%q: error %q does not name the variable", tc.env, err)
		case !tc.bad && err != nil:
			t.Errorf("PEERS_BLITZ_IDLESPIN=%q: %v", tc.env, err)
		case !tc.bad && c.IdleSpin != tc.want:
			t.Errorf("PEERS_BLITZ_IDLESPIN=%q: IdleSpin %v, want %v", tc.env, c.IdleSpin, tc.want)
		}
	}
	t.Setenv("PEERS_BLITZ_IDLESPIN", "-1")
	if _, err := Start(Echo, "blitz-poll", "127.0.0.1:0"); err == nil {
		t.Error("a blitz server started with PEERS_BLITZ_IDLESPIN=-1")
	}
}
