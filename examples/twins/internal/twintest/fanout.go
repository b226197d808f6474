package twintest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Behavior is what a fake fetch of the fanout test does: wait Delay, then
// fail with Err if it is set, else return "item-<id>"; with Block it waits
// until it is cancelled (at most a minute).
type Behavior struct {
	Delay time.Duration
	Err   error
	Block bool
}

// Recorder records what the fake fetches did, for the fanout test.
type Recorder struct {
	mu                  sync.Mutex
	started, cancelled  []int
	inFlight, maxFlight int
}

// Start records that fetch id started; the fake fetch calls it first.
func (r *Recorder) Start(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, id)
	r.inFlight++
	r.maxFlight = max(r.maxFlight, r.inFlight)
}

// End records that fetch id ended, cancelled or not.
func (r *Recorder) End(id int, cancelled bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
	if cancelled {
		r.cancelled = append(r.cancelled, id)
	}
}

func (r *Recorder) sorted() (started, cancelled []int, maxFlight, inFlight int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	started, cancelled = slices.Clone(r.started), slices.Clone(r.cancelled)
	slices.Sort(started)
	slices.Sort(cancelled)
	return started, cancelled, r.maxFlight, r.inFlight
}

// Item is what a fake fetch of id returns.
func Item(id int) string { return fmt.Sprintf("item-%d", id) }

// Fanout is a version of examples/twins/fanout under test.
type Fanout struct {
	// Run fetches the ids 0..n-1, limit at a time, with a fake fetch that
	// does what behave says, reporting to rec, and returns the result.
	Run func(t *testing.T, n, limit int, behave func(id int) Behavior, rec *Recorder) ([]string, error)
	// Abandon starts the same fetch and cancels it as a whole after d (the
	// caller's context for the goroutines, the future's Cancel for the
	// async version); it returns once the fetch is over.
	Abandon func(t *testing.T, n, limit int, behave func(id int) Behavior, rec *Recorder, d time.Duration)
	// Keys fetches keys from the kv server at addr with the program's fetch.
	Keys func(t *testing.T, addr string, limit int, keys []string) ([]string, error)
}

var errBoom = errors.New("boom")

// RunFanout drives a version of examples/twins/fanout.
func RunFanout(t *testing.T, v Fanout) {
	t.Run("AllSucceed", func(t *testing.T) {
		var rec Recorder
		items, err := v.Run(t, 20, 3, func(id int) Behavior { return Behavior{Delay: time.Duration(id%4) * time.Millisecond} }, &rec)
		if err != nil {
			t.Fatal(err)
		}
		for id, it := range items {
			if it != Item(id) {
				t.Errorf("items[%d] = %q", id, it)
			}
		}
		started, cancelled, maxFlight, _ := rec.sorted()
		if len(items) != 20 || len(started) != 20 || len(cancelled) != 0 || maxFlight != 3 {
			t.Errorf("%d items, started %v, cancelled %v, %d at most at a time (want 3)", len(items), started, cancelled, maxFlight)
		}
	})
	t.Run("FirstErrorCancelsTheRest", func(t *testing.T) {
		// 0 and 1 succeed at once, so 3 and 4 start; 2 fails after 20 ms,
		// which must cancel 3 and 4 (they would block) and start none of
		// 5..9.
		var rec Recorder
		start := time.Now()
		_, err := v.Run(t, 10, 3, func(id int) Behavior {
			switch {
			case id < 2:
				return Behavior{}
			case id == 2:
				return Behavior{Delay: 20 * time.Millisecond, Err: errBoom}
			}
			return Behavior{Block: true}
		}, &rec)
		if !errors.Is(err, errBoom) {
			t.Errorf("err = %v, want boom", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v: the blocked fetches were not cancelled", d)
		}
		started, cancelled, maxFlight, inFlight := rec.sorted()
		if !slices.Equal(started, []int{0, 1, 2, 3, 4}) || !slices.Equal(cancelled, []int{3, 4}) || maxFlight != 3 || inFlight != 0 {
			t.Errorf("started %v (want 0..4), cancelled %v (want 3 4), %d at most at a time, %d still running", started, cancelled, maxFlight, inFlight)
		}
	})
	t.Run("AbandonCancelsEverything", func(t *testing.T) {
		var rec Recorder
		v.Abandon(t, 10, 4, func(int) Behavior { return Behavior{Block: true} }, &rec, 20*time.Millisecond)
		started, cancelled, _, inFlight := rec.sorted()
		if !slices.Equal(started, []int{0, 1, 2, 3}) || !slices.Equal(cancelled, []int{0, 1, 2, 3}) || inFlight != 0 {
			t.Errorf("started %v, cancelled %v (want 0..3 both), %d still running", started, cancelled, inFlight)
		}
	})
	t.Run("FromKVServer", func(t *testing.T) {
		addr := kvStub(t)
		vals, err := v.Keys(t, addr, 2, []string{"a", "b", "c", "d"})
		if err != nil || !slices.Equal(vals, []string{"value of a", "value of b", "value of c", "value of d"}) {
			t.Errorf("got %q, %v", vals, err)
		}
		_, err = v.Keys(t, addr, 2, []string{"a", "missing", "c"})
		if err == nil || err.Error() != "missing: NOT_FOUND" {
			t.Errorf("err = %v, want missing: NOT_FOUND", err)
		}
	})
}

// kvStub serves GET requests as examples/twins/kv would for a store where
// every key but "missing" holds "value of <key>".
func kvStub(t *testing.T) string {
	return upstream(t, func(c *net.TCPConn) {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			key, _ := strings.CutPrefix(sc.Text(), "GET ")
			reply := "VALUE value of " + key
			if key == "missing" {
				reply = "NOT_FOUND"
			}
			if _, err := c.Write([]byte(reply + "\n")); err != nil {
				return
			}
		}
	})
}
