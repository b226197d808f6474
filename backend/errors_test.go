package backend

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestErrorIs: an *Error matches its sentinel and its OS code.
func TestErrorIs(t *testing.T) {
	err := error(NewError("recv", ErrConnReset, syscall.ECONNRESET))
	if !errors.Is(err, ErrConnReset) || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("errors.Is fails on %v", err)
	}
	if errors.Is(err, ErrConnRefused) || errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("errors.Is matches the wrong error: %v", err)
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno != syscall.ECONNRESET {
		t.Errorf("errors.As(Errno) = %v", errno)
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != "recv" {
		t.Errorf("errors.As(*Error) failed")
	}
}

// TestErrorNoSys: without an OS code the error still matches its sentinel.
func TestErrorNoSys(t *testing.T) {
	err := NewError("submit", ErrInvalid, nil)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is fails")
	}
	if got, want := err.Error(), "submit: backend: invalid argument"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if len(err.Unwrap()) != 1 {
		t.Errorf("Unwrap returns %v", err.Unwrap())
	}
}

// TestErrorString: the message names the op, the sentinel and the code.
func TestErrorString(t *testing.T) {
	s := NewError("accept", ErrTooManyFiles, syscall.EMFILE).Error()
	for _, want := range []string{"accept", ErrTooManyFiles.Error(), syscall.EMFILE.Error()} {
		if !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
}

// TestErrorTimeout: Timeout is true for ErrTimeout and ErrTimedOut only.
func TestErrorTimeout(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{{ErrTimeout, true}, {ErrTimedOut, true}, {ErrConnReset, false}, {ErrCanceled, false}} {
		if got := NewError("op", c.err, nil).Timeout(); got != c.want {
			t.Errorf("Timeout() of %v = %v", c.err, got)
		}
	}
}

// TestSentinelsDistinct: no two sentinels match each other.
func TestSentinelsDistinct(t *testing.T) {
	all := []error{ErrClosed, ErrBusy, ErrInvalid, ErrUnsupported, ErrCanceled, ErrTimeout,
		ErrNotFound, ErrExists, ErrNoBuffers, ErrConnReset, ErrConnRefused, ErrConnAborted,
		ErrBrokenPipe, ErrNotConnected, ErrTimedOut, ErrAddrInUse, ErrAddrNotAvailable,
		ErrUnreachable, ErrTooManyFiles, ErrNoMemory, ErrPermission, ErrNotExist,
		ErrFileExists, ErrMessageSize, ErrIO}
	seen := map[string]bool{}
	for i, a := range all {
		if !strings.HasPrefix(a.Error(), "backend: ") || seen[a.Error()] {
			t.Errorf("sentinel %q: bad or duplicate message", a)
		}
		seen[a.Error()] = true
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v matches %v", a, b)
			}
		}
	}
}
