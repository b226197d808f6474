// Package kv is what the three lookup servers share, so that they differ
// only in how they are written: the data they serve, the line each reply
// is, and their configuration.
package kv

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is the error of a lookup of a key the DB does not hold.
var ErrNotFound = errors.New("not found")

// Entry is a value and the time its lookup takes: a stand-in for a slow
// backend.
type Entry struct {
	Value string
	Delay time.Duration
}

// DB maps keys to entries. It is not written after it is made, so any
// number of lookups may read it at once.
type DB map[string]Entry

// Sample returns a DB of a few people whose lookups take fast, and one key,
// "sloth", whose lookup takes slow.
func Sample(fast, slow time.Duration) DB {
	return DB{
		"ada":     {"Lovelace", fast},
		"grace":   {"Hopper", fast},
		"barbara": {"Liskov", fast},
		"edsger":  {"Dijkstra", fast},
		"sloth":   {"eventually", slow},
	}
}

// Reply is the line a server writes for the outcome of a lookup: the value,
// "ERR timeout" when the lookup ran out of time (any error matching
// context.DeadlineExceeded, as blitz.ErrTimeout does), or "ERR " and the
// error.
func Reply(v string, err error) string {
	switch {
	case err == nil:
		return v + "\n"
	case errors.Is(err, context.DeadlineExceeded):
		return "ERR timeout\n"
	default:
		return "ERR " + err.Error() + "\n"
	}
}

// Config configures a lookup server.
type Config struct {
	Addr    string        // the address to listen on
	DB      DB            // what it serves
	Timeout time.Duration // the bound on each lookup
	Grace   time.Duration // how long connections may finish after a stop
}
