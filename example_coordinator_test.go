package blitz_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

// requestLoop stands in for a server's accept loop: each tick of its
// interval is a request, admitted with a guard and served by a task of its
// own. It stops when the coordinator is triggered.
type requestLoop struct {
	c        *blitz.Coordinator
	trig     *blitz.TriggerFuture
	requests *blitz.Interval
	served   *atomic.Int32
	admitted int32
}

func (l *requestLoop) Poll(cx *future.Context) (int32, bool) {
	for {
		if _, ok := l.trig.Poll(cx); ok {
			l.requests.Cancel()
			return l.admitted, true
		}
		if _, ok := l.requests.Poll(cx); !ok {
			return 0, false // both futures registered cx's Waker
		}
		g, err := l.c.Guard(fmt.Sprintf("request-%d", l.admitted))
		if err != nil { // triggered between the two polls
			l.trig.Cancel()
			l.requests.Cancel()
			return l.admitted, true
		}
		l.admitted++
		blitz.Spawn(cx, serveRequest(g, l.served)).Detach()
	}
}

func (l *requestLoop) Cancel() {
	l.trig.Cancel()
	l.requests.Cancel()
}

// serveRequest handles one request: it takes 10ms, then releases its guard.
func serveRequest(g *blitz.Guard, served *atomic.Int32) future.Future[struct{}] {
	return future.Map(blitz.Sleep(10*time.Millisecond), func(struct{}) struct{} {
		served.Add(1)
		g.Release()
		return struct{}{}
	})
}

// A graceful shutdown: requests in flight when the shutdown is triggered
// finish, new ones are refused, and Wait returns once the last one is done.
func ExampleCoordinator() {
	rt, _ := blitz.New(blitz.Config{Workers: 2})
	defer rt.Shutdown(context.Background())

	c := blitz.NewCoordinator()
	// A real server would call c.TriggerOnSignal(rt.Handle(), os.Interrupt,
	// syscall.SIGTERM); here a timer plays the operator pressing Ctrl-C.
	time.AfterFunc(25*time.Millisecond, c.Trigger)

	requests, _ := blitz.NewInterval(2*time.Millisecond, blitz.Skip)
	var served atomic.Int32
	loop := &requestLoop{c: c, trig: c.WhenTriggered(), requests: requests, served: &served}
	admitted, _ := blitz.SpawnOn(rt.Handle(), future.Future[int32](loop)).Wait(context.Background())

	_, err := c.Guard("late request")
	fmt.Println("late request refused:", errors.Is(err, blitz.ErrShuttingDown))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	report, err := c.Wait(ctx)
	fmt.Println("still held:", len(report.Held), "error:", err)
	fmt.Println("every admitted request finished:", admitted > 0 && served.Load() == admitted)
	// Output:
	// late request refused: true
	// still held: 0 error: <nil>
	// every admitted request finished: true
}
