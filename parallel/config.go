package parallel

import (
	"fmt"
	"runtime"
)

const (
	// MaxWorkers is the most workers a pool may have: the sleeping and
	// inactive counts are 16-bit fields of one atomic word (package doc,
	// section "The counters word").
	MaxWorkers = 1<<16 - 1
	// DefaultSleepyRounds is the number of fruitless search rounds, each
	// followed by runtime.Gosched, before an idle worker announces that it is
	// sleepy (32 yields, then announce, then sleep, as in Rayon and Blitz).
	DefaultSleepyRounds = 32
)

// Config configures a Pool. The zero Config is valid: GOMAXPROCS workers and
// DefaultSleepyRounds.
//
// NewPool takes a Config rather than functional options, as scheduler.New
// does in this repository: a struct is what the other modules take, and it
// prints and compares.
type Config struct {
	// Workers is the number of worker goroutines, 1 to MaxWorkers; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// SleepyRounds is how many fruitless search rounds an idle worker makes
	// before it announces that it is sleepy; it sleeps after one more. 0
	// means DefaultSleepyRounds. More rounds trade idle CPU for the latency
	// of work that arrives in bursts.
	SleepyRounds int
}

// withDefaults validates c and fills in the defaults. Any goroutine may call
// it.
func (c Config) withDefaults() (Config, error) {
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Workers < 1 || c.Workers > MaxWorkers {
		return c, fmt.Errorf("%w: Workers = %d, want 1 to %d (or 0 for GOMAXPROCS)", ErrWorkers, c.Workers, MaxWorkers)
	}
	if c.SleepyRounds < 0 {
		return c, fmt.Errorf("%w: SleepyRounds = %d, want >= 0", ErrSleepyRounds, c.SleepyRounds)
	}
	if c.SleepyRounds == 0 {
		c.SleepyRounds = DefaultSleepyRounds
	}
	return c, nil
}
