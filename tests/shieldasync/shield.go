// Package shieldasync is async functions that shield a section from the
// cancel of their task (blitz.Shield): the generated code's test of
// shields. A record is committed in two steps with a wait between them;
// shielded, a cancel never leaves a record half written.
package shieldasync

import (
	"sync"
	"time"

	"github.com/blitz-go/blitz"
	"github.com/blitz-go/blitz/future"
)

//go:generate go run github.com/blitz-go/blitz/asyncgen/cmd/blitzgen

// journal is the lines written, in order, guarded by mu; begun is closed
// at the first line.
type journal struct {
	mu    sync.Mutex
	lines []string
	begun chan struct{}
}

func newJournal() *journal { return &journal{begun: make(chan struct{})} }

func (j *journal) add(line string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.lines) == 0 {
		close(j.begun)
	}
	j.lines = append(j.lines, line)
}

func (j *journal) snapshot() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.lines...)
}

// commit writes rec in two steps, step apart.
//
//blitz:async
func commit(j *journal, rec string, step time.Duration) {
	j.add(rec + " begin")
	future.Await(blitz.Sleep(step))
	j.add(rec + " end")
}

// saveAll commits each record, each under a shield when shielded is set.
//
//blitz:async
func saveAll(j *journal, recs []string, step time.Duration, shielded bool) {
	for _, rec := range recs {
		if shielded {
			future.Await(blitz.Shield(commitAsync(j, rec, step)))
		} else {
			future.Await(commitAsync(j, rec, step))
		}
	}
}
