package twintest

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Lookups is the fake resolver of the pool test: host-<i> resolves, after
// a delay, to 10.0.<i/256>.<i%256>, except every seventh host, which is
// not found. It records how many lookups run at once and how far the
// producer got ahead of them.
type Lookups struct {
	Sent              atomic.Int32 // jobs the producer queued; the adapter counts them
	mu                sync.Mutex
	started, inFlight int
	maxFlight, ahead  int
}

var errNoSuchHost = errors.New("no such host")

// Begin is called by the fake lookup when it starts.
func (l *Lookups) Begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started++
	l.inFlight++
	l.maxFlight = max(l.maxFlight, l.inFlight)
	l.ahead = max(l.ahead, int(l.Sent.Load())-l.started)
}

// Result is what the fake lookup of host returns, after its delay; End is
// called by the fake lookup when it ends.
func (l *Lookups) Result(host string) ([]netip.Addr, error) {
	var i int
	if _, err := fmt.Sscanf(host, "host-%d", &i); err != nil || i%7 == 6 {
		return nil, errNoSuchHost
	}
	return []netip.Addr{netip.AddrFrom4([4]byte{10, 0, byte(i / 256), byte(i % 256)})}, nil
}

// Delay is how long the fake lookup of host takes.
func (l *Lookups) Delay(host string) time.Duration {
	var i int
	fmt.Sscanf(host, "host-%d", &i)
	return time.Duration(i%3) * time.Millisecond
}

// End is called by the fake lookup when it ends.
func (l *Lookups) End() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
}

// Res is a job's result in the versions' common terms.
type Res struct {
	N     int
	Host  string
	Addrs []netip.Addr
	Err   error
}

// Pool is a version of examples/twins/pool under test.
type Pool struct {
	// Run feeds hosts through a queue of queueLen to the pool (workers
	// workers, limit lookups at a time), with the fake lookup of l; the
	// producer counts each job queued in l.Sent.
	Run func(t *testing.T, hosts []string, queueLen, workers, limit int, l *Lookups) []Res
	// Real does the same with the program's lookup.
	Real func(t *testing.T, hosts []string) []Res
}

// RunPool drives a version of examples/twins/pool.
func RunPool(t *testing.T, v Pool) {
	t.Run("Fake", func(t *testing.T) {
		const n, queueLen, workers, limit = 200, 4, 8, 3
		var hosts []string
		for i := range n {
			hosts = append(hosts, fmt.Sprint("host-", i))
		}
		var l Lookups
		res := v.Run(t, hosts, queueLen, workers, limit, &l)
		if len(res) != n {
			t.Fatalf("%d results, want %d", len(res), n)
		}
		for i, r := range res {
			addrs, err := l.Result(hosts[i])
			if r.N != i || r.Host != hosts[i] || !slices.Equal(r.Addrs, addrs) || !errors.Is(r.Err, err) && r.Err != err {
				t.Errorf("result %d: %+v, want %v %v", i, r, addrs, err)
			}
		}
		if l.maxFlight != limit {
			t.Errorf("%d lookups at a time, want %d", l.maxFlight, limit)
		}
		// The producer waits for room: it is never more than the queue,
		// the jobs the workers hold and the job being sent ahead.
		if l.ahead > queueLen+workers+1 {
			t.Errorf("the producer got %d jobs ahead of the lookups", l.ahead)
		}
	})
	t.Run("Resolver", func(t *testing.T) {
		res := v.Real(t, []string{"127.0.0.1", "localhost"})
		if len(res) != 2 {
			t.Fatalf("%d results", len(res))
		}
		for _, r := range res {
			if r.Err != nil || !slices.Contains(r.Addrs, netip.MustParseAddr("127.0.0.1")) {
				t.Errorf("%s: %v, %v", r.Host, r.Addrs, r.Err)
			}
		}
	})
}
