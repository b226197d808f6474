package backendtest

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

// sentinels are every sentinel error of package backend.
var sentinels = []error{
	backend.ErrClosed, backend.ErrBusy, backend.ErrInvalid, backend.ErrUnsupported,
	backend.ErrCanceled, backend.ErrTimeout, backend.ErrNotFound, backend.ErrExists,
	backend.ErrNoBuffers, backend.ErrConnReset, backend.ErrConnRefused,
	backend.ErrConnAborted, backend.ErrBrokenPipe, backend.ErrNotConnected,
	backend.ErrTimedOut, backend.ErrAddrInUse, backend.ErrAddrNotAvailable,
	backend.ErrUnreachable, backend.ErrTooManyFiles, backend.ErrNoMemory,
	backend.ErrPermission, backend.ErrNotExist, backend.ErrFileExists,
	backend.ErrMessageSize, backend.ErrIO,
}

// sentinelOf returns the sentinel err matches, or nil.
func sentinelOf(err error) error {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return s
		}
	}
	return nil
}

// checkErr fails the test unless err is nil or matches a sentinel of package
// backend; ErrCanceled and ErrTimeout must come bare (the contract: they are
// the results of the caller's own requests).
func checkErr(tb testing.TB, what string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	s := sentinelOf(err)
	switch {
	case s == nil:
		tb.Errorf("%s: error %q (%T) matches no backend sentinel", what, err, err)
	case (s == backend.ErrCanceled || s == backend.ErrTimeout) && err != s:
		tb.Errorf("%s: %v must be the bare sentinel, is %T", what, err, err)
	}
}

// wantErr fails the test unless err matches want.
func wantErr(tb testing.TB, what string, err, want error) {
	tb.Helper()
	if !errors.Is(err, want) {
		tb.Errorf("%s: error %v, want %v", what, err, want)
	}
}

// wantOneOf fails the test unless err matches one of wants.
func wantOneOf(tb testing.TB, what string, err error, wants ...error) {
	tb.Helper()
	for _, w := range wants {
		if errors.Is(err, w) {
			return
		}
	}
	tb.Errorf("%s: error %v, want one of %v", what, err, wants)
}

// errorsAs is errors.As.
func errorsAs(err error, target any) bool { return errors.As(err, target) }

// errorsIs is errors.Is.
func errorsIs(err, target error) bool { return errors.Is(err, target) }
