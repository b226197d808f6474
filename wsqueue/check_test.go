package wsqueue_test

// Assertion helpers for the black-box tests, so that the module's tests need
// nothing beyond the standard library.

import (
	"fmt"
	"reflect"
	"testing"
)

// equal reports whether got and want are deeply equal; if not, it marks t
// failed with both values and the optional message (a format and its
// arguments). The test goes on: callers that cannot go on check the result.
func equal[T any](t testing.TB, got, want T, msgAndArgs ...any) bool {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return true
	}
	t.Errorf("%sgot %v, want %v", prefix(msgAndArgs), got, want)
	return false
}

// panicsWith reports whether f panics with a value deeply equal to want; if
// not, it marks t failed with what f did instead and the optional message.
func panicsWith(t testing.TB, want any, f func(), msgAndArgs ...any) bool {
	t.Helper()
	panicked, got := catch(f)
	switch {
	case !panicked:
		t.Errorf("%sno panic, want panic(%#v)", prefix(msgAndArgs), want)
		return false
	case !reflect.DeepEqual(got, want):
		t.Errorf("%spanic(%#v), want panic(%#v)", prefix(msgAndArgs), got, want)
		return false
	}
	return true
}

// catch calls f and reports whether it panicked, and with what.
func catch(f func()) (panicked bool, value any) {
	panicked = true
	defer func() { value = recover() }()
	f()
	panicked = false
	return
}

// prefix renders an optional message (a format and its arguments, or a single
// value) followed by ": ", or nothing.
func prefix(msgAndArgs []any) string {
	switch {
	case len(msgAndArgs) == 0:
		return ""
	case len(msgAndArgs) == 1:
		return fmt.Sprintf("%v: ", msgAndArgs[0])
	}
	format, ok := msgAndArgs[0].(string)
	if !ok {
		return fmt.Sprint(msgAndArgs...) + ": "
	}
	return fmt.Sprintf(format, msgAndArgs[1:]...) + ": "
}
