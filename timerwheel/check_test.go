package timerwheel_test

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
