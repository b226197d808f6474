package twintest

import (
	"fmt"
	"testing"
	"time"
)

// Chat drives a version of examples/twins/chat.
func Chat(t *testing.T, start StartServer) {
	addr, stop := start(t)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	join := func(id int) *Conn {
		c := Dial(t, addr)
		if got, want := c.Line(), fmt.Sprintf("welcome %d", id); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
		return c
	}
	a, b, c := join(1), join(2), join(3)
	expect := func(who *Conn, want string) {
		t.Helper()
		if got := who.Line(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}

	// Every line goes to every other client, not back to its sender.
	a.Send("hello")
	expect(b, "1: hello")
	expect(c, "1: hello")
	b.Send("hi, 1")
	expect(a, "2: hi, 1")
	expect(c, "2: hi, 1")
	a.Quiet(50 * time.Millisecond)
	b.Quiet(0)

	// Lines arrive in the order they were sent.
	for i := range 50 {
		c.Send(fmt.Sprint("line ", i))
	}
	for i := range 50 {
		expect(a, fmt.Sprint("3: line ", i))
		expect(b, fmt.Sprint("3: line ", i))
	}

	// A client that leaves gets nothing more; the others go on.
	b.Close()
	time.Sleep(20 * time.Millisecond)
	c.Send("bye, 2")
	expect(a, "3: bye, 2")

	// A last line without a newline is broadcast too; then the server
	// closes the connection of the client that stopped sending.
	d := join(4)
	_, _ = d.Raw().Write([]byte("last words"))
	d.CloseWrite()
	expect(a, "4: last words")
	expect(c, "4: last words")
	d.EOF(wait)

	// The stop closes the connections.
	stop()
	stopped = true
	a.EOF(wait)
	c.EOF(wait)
	Refused(t, addr)
}
