package deadlock

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/syncprim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDumpProvesTheTwoMutexDeadlock: the dump of two tasks deadlocked on
// two mutexes reports the cycle, which task holds each mutex, and the line
// of the await each task is suspended at.
func TestDumpProvesTheTwoMutexDeadlock(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	var a, b syncprim.Mutex
	both := syncprim.NewBarrier(2)
	h1 := blitz.SpawnOn(rt.Handle(), blitz.Named("ab", lockBothAsync(&a, &b, both)))
	h2 := blitz.SpawnOn(rt.Handle(), blitz.Named("ba", lockBothAsync(&b, &a, both)))
	defer h1.Cancel()
	defer h2.Cancel()

	var dump string
	deadline := time.Now().Add(10 * time.Second)
	for {
		var buf bytes.Buffer
		if err := rt.Dump(&buf); err != nil {
			t.Fatal(err)
		}
		dump = buf.String()
		if strings.Contains(dump, "DEADLOCK") || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("Dump:\n%s", dump)
	if !strings.Contains(dump, "DEADLOCK: tasks 1 and 2 wait for each other\n") {
		t.Fatalf("no deadlock reported:\n%s", dump)
	}
	for _, want := range []string{
		`task 1 "ab" waits on Mutex.Lock \d+ held by task 2, at deadlock.go:23 \(lockBoth\)`,
		`task 2 "ba" waits on Mutex.Lock \d+ held by task 1, at deadlock.go:23 \(lockBoth\)`,
	} {
		if !regexp.MustCompile(want).MatchString(dump) {
			t.Errorf("the dump lacks %q:\n%s", want, dump)
		}
	}
	// The two waits name two mutexes.
	m := regexp.MustCompile(`waits on Mutex.Lock (\d+)`).FindAllStringSubmatch(dump, -1)
	if len(m) != 2 || m[0][1] == m[1][1] {
		t.Errorf("the waits should name two mutexes: %v", m)
	}

	var each bytes.Buffer
	if err := rt.DumpEach(&each); err != nil {
		t.Fatal(err)
	}
	t.Logf("DumpEach:\n%s", each.String())
	if !regexp.MustCompile(`task 1 "ab": idle \S+, waiting on Mutex.Lock \d+ held by task 2, at deadlock.go:23 \(lockBoth\)`).MatchString(each.String()) {
		t.Errorf("DumpEach lacks task 1's wait:\n%s", each.String())
	}

	// Cancelling one breaks the cycle: its defers unlock its first mutex,
	// and the other task finishes.
	h1.Cancel()
	if v, err := h2.Wait(context.Background()); err != nil || v != 1 {
		t.Fatalf("the other task: %v, %v", v, err)
	}
	if _, err := h1.Wait(context.Background()); err == nil {
		t.Fatal("the cancelled task completed")
	}
}

// TestNoDeadlockReportedForAnOrdinaryWait: a task waiting for a lock that
// a goroutine holds is shown waiting, with no holder task and no deadlock.
func TestNoDeadlockReportedForAnOrdinaryWait(t *testing.T) {
	rt, err := blitz.New(blitz.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Shutdown(context.Background())
	var m syncprim.Mutex
	g, err := m.LockBlocking(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	waiter := blitz.SpawnOn(rt.Handle(), blitz.Named("waiter", future.Map(m.Lock(), func(g syncprim.MutexGuard) int { g.Unlock(); return 2 })))
	var dump string
	for range 200 {
		var buf bytes.Buffer
		_ = rt.Dump(&buf)
		dump = buf.String()
		if strings.Contains(dump, `waiting on Mutex.Lock`) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(dump, "DEADLOCK") || !strings.Contains(dump, "waiting on Mutex.Lock") || strings.Contains(dump, "held by task") {
		t.Fatalf("a goroutine holds the lock: no holder task, no deadlock:\n%s", dump)
	}
	g.Unlock()
	if v, err := waiter.Wait(context.Background()); err != nil || v != 2 {
		t.Fatal(v, err)
	}
}
