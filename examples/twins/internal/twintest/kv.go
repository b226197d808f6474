package twintest

import (
	"testing"
	"time"
)

// StartServer starts one version of a server on 127.0.0.1:0 and returns its
// address and a function that stops it and waits until it stopped.
type StartServer func(t *testing.T) (addr string, stop func())

// KV drives a version of examples/twins/kv; start starts it with the idle
// timeout given.
func KV(t *testing.T, start func(t *testing.T, idle time.Duration) (addr string, stop func())) {
	t.Run("Protocol", func(t *testing.T) {
		addr, stop := start(t, 10*time.Second)
		defer stop()
		c := Dial(t, addr)
		for _, x := range [][2]string{
			{"GET a", "NOT_FOUND"},
			{"SET a 1", "OK"},
			{"GET a", "VALUE 1"},
			{"SET a two words", "OK"},
			{"GET a", "VALUE two words"},
			{"SET b", "ERROR usage: SET key value"},
			{"DEL a", "DELETED"},
			{"DEL a", "NOT_FOUND"},
			{"GET a", "NOT_FOUND"},
			{"PUT a 1", "ERROR unknown command PUT"},
			{"SET crlf x\r", "OK"},
			{"GET crlf", "VALUE x"},
		} {
			if got := c.Ask(x[0]); got != x[1] {
				t.Errorf("%q: got %q, want %q", x[0], got, x[1])
			}
		}
		// Several commands in one write are answered in order.
		c.Send("SET p 1\nGET p\nDEL p")
		for _, want := range []string{"OK", "VALUE 1", "DELETED"} {
			if got := c.Line(); got != want {
				t.Errorf("pipelined: got %q, want %q", got, want)
			}
		}
		// A client that closes its sending side gets its last answer, then
		// the server closes the connection.
		c.Send("GET crlf")
		c.CloseWrite()
		if got := c.Line(); got != "VALUE x" {
			t.Errorf("last answer: got %q", got)
		}
		c.EOF(wait)
	})
	t.Run("Shared", func(t *testing.T) {
		addr, stop := start(t, 10*time.Second)
		defer stop()
		a, b := Dial(t, addr), Dial(t, addr)
		if got := a.Ask("SET k from-a"); got != "OK" {
			t.Fatal(got)
		}
		if got := b.Ask("GET k"); got != "VALUE from-a" {
			t.Fatalf("b sees %q", got)
		}
	})
	t.Run("IdleTimeout", func(t *testing.T) {
		// The busy client's pauses are a tenth of the idle period, so a
		// loaded machine that stretches a pause several times over does not
		// make it idle.
		const idle = 400 * time.Millisecond
		addr, stop := start(t, idle)
		defer stop()
		quiet, busy := Dial(t, addr), Dial(t, addr)
		if got := quiet.Ask("SET q 1"); got != "OK" {
			t.Fatal(got)
		}
		// busy keeps talking for 3 idle periods and stays open.
		start := time.Now()
		for time.Since(start) < 3*idle {
			if got := busy.Ask("GET q"); got != "VALUE 1" {
				t.Fatalf("busy client: %q", got)
			}
			time.Sleep(idle / 10)
		}
		// quiet was closed about idle after its last command.
		quiet.EOF(wait)
		busy.EOF(wait) // once it is quiet too
	})
	t.Run("Stop", func(t *testing.T) {
		addr, stop := start(t, 10*time.Second)
		c := Dial(t, addr)
		if got := c.Ask("SET a 1"); got != "OK" {
			t.Fatal(got)
		}
		stop() // closes the open connections
		c.EOF(wait)
		Refused(t, addr)
	})
}
