package idle

import (
	"math/rand/v2"
	"testing"
)

// The model test drives a State from one goroutine with random operations
// and checks the counts and every parked bit against a plain reference after
// each step. Park is only ever called with timeout 0, so nothing blocks.

// role is the reference's view of one worker.
type role uint8

const (
	roleRunning   role = iota
	roleSearching      // counted in searching
	roleAnnounced      // PrepareToPark done, bit set
	roleClaimed        // bit cleared by NotifyOne, counted in searching, token pending
	roleClosed         // bit cleared by Close, token pending
)

// reference is the model of a State: counts derived from roles.
type reference struct {
	roles     []role
	searching int
	parked    int
	closed    bool
}

// modelStep performs operation op (any byte) on worker id and checks s
// against ref.
func modelStep(t *testing.T, s *State, ref *reference, op byte, id int) {
	t.Helper()
	n := len(ref.roles)
	// claimed finds the worker whose bit a notify cleared, and records it.
	claimed := func(woke bool) {
		t.Helper()
		if !woke {
			return
		}
		for i := range n {
			if ref.roles[i] == roleAnnounced && s.bitmap[i>>6].Load()&(1<<(i&63)) == 0 {
				ref.roles[i] = roleClaimed
				ref.searching++
				ref.parked--
				return
			}
		}
		t.Fatalf("NotifyOne reported a wake but no announced worker lost its bit")
	}
	wantWake := func() bool { return ref.searching == 0 && ref.parked > 0 }
	switch r := ref.roles[id]; op % 6 {
	case 0: // TryBecomeSearcher
		if r != roleRunning {
			return
		}
		want := 2*ref.searching < n
		if got := s.TryBecomeSearcher(); got != want {
			t.Fatalf("TryBecomeSearcher = %v, want %v (searching %d of %d)", got, want, ref.searching, n)
		}
		if want {
			ref.roles[id] = roleSearching
			ref.searching++
		}
	case 1: // TransitionFromSearching
		if r != roleSearching {
			return
		}
		ref.roles[id] = roleRunning
		ref.searching--
		wantLast := ref.searching == 0
		woke := wantLast && wantWake()
		if got := s.TransitionFromSearching(); got != wantLast {
			t.Fatalf("TransitionFromSearching = %v, want %v", got, wantLast)
		}
		claimed(woke)
	case 2, 3: // PrepareToPark
		if r != roleRunning && r != roleSearching {
			return
		}
		searching := r == roleSearching
		if searching {
			ref.searching--
		}
		ref.parked++
		ref.roles[id] = roleAnnounced
		want := Prepared{WasLastSearcher: searching && ref.searching == 0}
		if got := s.PrepareToPark(id, searching); got != want {
			t.Fatalf("PrepareToPark = %+v, want %+v", got, want)
		}
	case 4: // Park with timeout 0
		var want ParkResult
		switch r {
		case roleAnnounced:
			want = TimedOut
			if ref.closed {
				want = Closed
			}
			ref.parked--
			ref.roles[id] = roleRunning
		case roleClaimed:
			want = Notified
			ref.roles[id] = roleSearching
		case roleClosed:
			want = Closed
			ref.roles[id] = roleRunning
		default:
			return
		}
		if got := s.Park(id, 0); got != want {
			t.Fatalf("Park = %v, want %v", got, want)
		}
	case 5: // NotifyOne, or rarely Close
		if op == 5 {
			woken := 0
			if !ref.closed {
				for i := range n {
					if ref.roles[i] == roleAnnounced {
						ref.roles[i] = roleClosed
						ref.parked--
						woken++
					}
				}
			}
			ref.closed = true
			if got := s.Close(); got != woken {
				t.Fatalf("Close = %d, want %d", got, woken)
			}
			break
		}
		want := wantWake()
		got := s.NotifyOne()
		if got != want {
			t.Fatalf("NotifyOne = %v, want %v", got, want)
		}
		claimed(got)
	}
	if got := s.Searching(); got != ref.searching {
		t.Fatalf("searching = %d, want %d", got, ref.searching)
	}
	if got := s.Parked(); got != ref.parked {
		t.Fatalf("parked = %d, want %d", got, ref.parked)
	}
	for i := range n {
		want := ref.roles[i] == roleAnnounced
		if got := s.bitmap[i>>6].Load()&(1<<(i&63)) != 0; got != want {
			t.Fatalf("worker %d: parked bit %v, role %d", i, got, ref.roles[i])
		}
	}
}

// TestStateMatchesReference runs random operation sequences on States of
// several widths, including ones spanning several bitmap words.
func TestStateMatchesReference(t *testing.T) {
	runs, steps := 200, 2000
	if testing.Short() {
		runs = 40
	}
	for run := range runs {
		rng := rand.New(rand.NewPCG(uint64(run), 7))
		n := []int{1, 2, 3, 5, 64, 65, 130}[run%7]
		s := New(n)
		ref := &reference{roles: make([]role, n)}
		for range steps {
			op := byte(rng.IntN(256))
			if op == 5 && rng.IntN(8) != 0 {
				op = 11 // keep Close rare: NotifyOne instead
			}
			modelStep(t, s, ref, op, rng.IntN(n))
		}
	}
}

// FuzzIdleState interprets the input as (worker count, then operation and
// worker byte pairs) and checks each step against the reference.
func FuzzIdleState(f *testing.F) {
	f.Add([]byte{3, 0, 0, 2, 0, 2, 1, 11, 0, 4, 0, 1, 0})
	f.Add([]byte{70, 2, 65, 2, 3, 11, 0, 4, 65, 4, 3, 5, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		n := 1 + int(data[0])%130
		s := New(n)
		ref := &reference{roles: make([]role, n)}
		for i := 1; i+1 < len(data); i += 2 {
			modelStep(t, s, ref, data[i], int(data[i+1])%n)
		}
	})
}
