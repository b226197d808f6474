package reactor

import (
	"testing"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// edgePoller is a quietPoller that says it reports every arrival, as
// epoll does: the test makes the events itself.
type edgePoller struct{ quietPoller }

func (edgePoller) EdgePerArrival() bool { return true }

// TestArmedRecvWaitsForTheEventAfterADrainingRead: after a read that
// emptied the socket, an arm does not read until the poller reports the
// descriptor (the read would find nothing on a connection that answers
// each message); after an event that says the peer closed, or on a poller
// that does not report every arrival, it reads first.
func TestArmedRecvWaitsForTheEventAfterADrainingRead(t *testing.T) {
	for _, edges := range []bool{true, false} {
		var p Poller = quietPoller{}
		if edges {
			p = edgePoller{}
		}
		r := New(p)
		if err := r.RegisterBufferGroup(1, 4, 64); err != nil {
			t.Fatal(err)
		}
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fd, peer := sp[0], sp[1]
		out := make([]backend.Completion, 4)
		completions := func() int {
			n, err := r.Wait(out, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range out[:n] {
				if c.Err == nil && c.Flags&backend.HasBuffer != 0 {
					_ = r.ReleaseBuffer(1, c.BufferID)
				}
			}
			return n
		}
		arm := func() {
			t.Helper()
			if err := r.ArmRecv(backend.FD(fd), 1, 5); err != nil {
				t.Fatal(err)
			}
		}
		send := func() {
			t.Helper()
			if _, err := unix.Write(peer, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		event := func(closed bool) { r.dispatch([]Event{{FD: fd, Ready: backend.EventIn, PeerClosed: closed}}) }

		arm() // the first arm reads, finds nothing and registers
		if n := completions(); n != 0 {
			t.Fatalf("edges %v: first arm: %d completions, want none", edges, n)
		}
		send()
		event(false)
		if n := completions(); n != 1 {
			t.Fatalf("edges %v: the event: %d completions, want 1", edges, n)
		}
		send() // came after the read that emptied the socket: its event is due
		arm()
		want := 0
		if !edges {
			want = 1 // without edges per arrival, every arm reads first
		}
		if n := completions(); n != want {
			t.Fatalf("edges %v: arm after a draining read: %d completions, want %d", edges, n, want)
		}
		if edges {
			event(false)
			if n := completions(); n != 1 {
				t.Fatalf("the event after a draining read: %d completions, want 1", n)
			}
			// The peer closed: from now on every arm reads first, since
			// the end of stream may follow data with no event of its own.
			send()
			event(true)
			arm()
			if n := completions(); n != 1 {
				t.Fatalf("arm after the peer closed: %d completions, want 1 (its read)", n)
			}
			send()
			arm()
			if n := completions(); n != 1 {
				t.Fatalf("second arm after the peer closed: %d completions, want 1 (its read)", n)
			}
		}
		if err := r.CloseFD(backend.FD(fd)); err != nil {
			t.Fatal(err)
		}
		unix.Close(peer)
		if fs := r.fds.get(fd, false); fs.drained || fs.peerClosed {
			t.Fatalf("edges %v: a closed descriptor's record keeps its read state: %+v", edges, fs)
		}
		r.Close()
	}
}
