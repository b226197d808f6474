package equiv

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/waker"
)

// TestPanicStackPointsAtTheSource checks the //line directives: a panic in
// a generated Poll is reported at the line of funcs.go that panicked.
func TestPanicStackPointsAtTheSource(t *testing.T) {
	src, err := os.ReadFile("funcs.go")
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, `panic("boom")`) {
			line = i + 1
		}
	}
	want := fmt.Sprintf("funcs.go:%d", line)
	f := panicsAfterAwaitAsync(NewEnv(1), 3)
	cx := future.NewContext(waker.Noop())
	stack := func() (stack string) {
		defer func() {
			if recover() != nil {
				stack = string(debug.Stack())
			}
		}()
		for range 10 {
			f.Poll(cx)
		}
		return ""
	}()
	if stack == "" {
		t.Fatal("no panic")
	}
	if !strings.Contains(stack, want) {
		t.Fatalf("the stack does not name %s:\n%s", want, stack)
	}
}

// TestPanicMatchesReference checks that the generated function panics with
// the value its reference panics with.
func TestPanicMatchesReference(t *testing.T) {
	catch := func(fn func()) (r any) {
		defer func() { r = recover() }()
		fn()
		return nil
	}
	cx := future.NewContext(waker.Noop())
	f := panicsAfterAwaitAsync(NewEnv(1), 3)
	got := catch(func() {
		for range 10 {
			f.Poll(cx)
		}
	})
	want := catch(func() { panicsAfterAwaitRef(NewEnv(1), 3) })
	if got == nil || got != want {
		t.Fatalf("generated panicked with %v, reference with %v", got, want)
	}
}

// TestDeferredPanicStackPointsAtTheDeferStatement: a deferred call that
// panics (an open-coded one, run by runDefers) is reported at the line of
// its defer statement in funcs.go.
func TestDeferredPanicStackPointsAtTheDeferStatement(t *testing.T) {
	src, err := os.ReadFile("funcs.go")
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, `defer panic("deferred panic")`) {
			line = i + 1
		}
	}
	want := fmt.Sprintf("funcs.go:%d", line)
	f := deferPanicsAsync(NewEnv(1), 5) // w == 6: the deferred panic is due
	cx := future.NewContext(waker.Noop())
	var p any
	stack := func() (stack string) {
		defer func() {
			if p = recover(); p != nil {
				stack = string(debug.Stack())
			}
		}()
		for range 20 {
			f.Poll(cx)
		}
		return ""
	}()
	if p != "deferred panic" {
		t.Fatalf("panicked with %v, want the deferred panic", p)
	}
	if !strings.Contains(stack, want) {
		t.Fatalf("the stack does not name %s:\n%s", want, stack)
	}
}
