package reactor

import (
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/unix"
)

// quietPoller is a Poller that reports nothing: the test makes the
// reactor's calls itself.
type quietPoller struct{}

func (quietPoller) Register(int) error                       { return nil }
func (quietPoller) Deregister(int) error                     { return nil }
func (quietPoller) Wake() error                              { return nil }
func (quietPoller) Close() error                             { return nil }
func (quietPoller) FD() int                                  { return -1 }
func (quietPoller) Wait([]Event, time.Duration) (int, error) { return 0, nil }

// TestFDQueuesOnlyWhenWaiting: a descriptor that waits only through an
// armed receive holds no op queues; one whose op waited has them until it
// is closed.
func TestFDQueuesOnlyWhenWaiting(t *testing.T) {
	r := New(quietPoller{})
	defer r.Close()
	if err := r.RegisterBufferGroup(1, 4, 64); err != nil {
		t.Fatal(err)
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	armed, waiting := backend.FD(sp[0]), backend.FD(sp[1])
	if err := r.ArmRecv(armed, 1, 7); err != nil {
		t.Fatal(err)
	}
	if fs := r.fds.get(int(armed), false); fs == nil || !fs.armed || fs.qs != nil {
		t.Fatalf("armed descriptor: record %+v, want armed with no queues", fs)
	}
	op := &backend.Op{Kind: backend.KindRecv, FD: waiting, Buf: make([]byte, 8)}
	if err := r.Submit(op); err != nil {
		t.Fatal(err)
	}
	fs := r.fds.get(int(waiting), false)
	if fs == nil || fs.qs == nil || !fs.qs.rq.contains(op) {
		t.Fatal("a recv that waits is not in its descriptor's read queue")
	}
	if err := r.cancel(op, backend.ErrCanceled); err != nil {
		t.Fatal(err)
	}
	if fs.qs == nil {
		t.Fatal("the queues went with the op: a descriptor whose ops keep waiting would make them anew each time")
	}
	if err := r.CloseFD(waiting); err != nil {
		t.Fatal(err)
	}
	if fs.qs != nil {
		t.Fatal("a closed descriptor keeps its queues")
	}
	if err := r.CloseFD(armed); err != nil {
		t.Fatal(err)
	}
}
