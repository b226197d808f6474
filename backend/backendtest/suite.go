package backendtest

import (
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// NewFunc makes a fresh backend for one test or benchmark. The suite closes
// it (and checks the Close contract), so a cleanup the function registers
// must accept the ErrClosed of a second Close.
type NewFunc = func(tb testing.TB) backend.Backend

// test is one conformance test; serial ones do not run in parallel with the
// others (they measure time or load the machine).
type test struct {
	name   string
	fn     func(t *testing.T, nb NewFunc)
	serial bool
}

// tests is the suite, by group.
func tests() []test {
	var all []test
	for _, g := range [][]test{
		coreTests, waitTests, tcpTests, acceptTests, datagramTests, unixTests, fileTests, fsOpTests,
		timeoutTests, cancelTests, pollTests, bufferTests, closeTests, loadTests,
		optionTests, bigIOTests, pollingTests, armedTests,
	} {
		all = append(all, g...)
	}
	return all
}

// Run runs the conformance suite against the backend newBackend makes, one
// fresh backend per subtest.
func Run(t *testing.T, newBackend NewFunc) {
	for _, tc := range tests() {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.serial {
				t.Parallel()
			}
			tc.fn(t, newBackend)
		})
	}
}

// caps returns the backend's capabilities through a harness.
func (h *harness) caps() backend.Caps { return h.b.Caps() }

// requireCaps skips the test unless the backend has want.
func requireCaps(t *testing.T, h *harness, want backend.Caps, what string) {
	t.Helper()
	if !h.caps().Has(want) {
		t.Skipf("%s backend lacks %s", h.b.Name(), what)
	}
}

// scale returns n, or small with -short.
func scale(n, small int) int {
	if testing.Short() {
		return small
	}
	return n
}
