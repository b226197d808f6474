package inspect

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// This file reads the parameters of a console state request; see the
// package doc, "Console protocol".

// sortKey is a column of the console's task table, the order of a page.
type sortKey uint8

// The sort keys, by their names in a request.
const (
	sortID      sortKey = iota // id
	sortName                   // name
	sortState                  // state: idle, scheduled, running, complete
	sortAge                    // age
	sortPolls                  // polls
	sortPoll                   // poll: poll time
	sortWaiting                // waiting: kind of wait, then its object
	sortFor                    // for: idle for, or running for
)

// sortNames are the sort keys' names, by key.
var sortNames = [...]string{"id", "name", "state", "age", "polls", "poll", "waiting", "for"}

// Limits of a request's parameters.
const (
	defaultLimit   = 100
	maxLimit       = 1000
	maxFilterBytes = 256
)

// consoleQuery is what a state request asks for.
type consoleQuery struct {
	sort sortKey
	desc bool
	// filter is the lower-cased substring the names of the page's tasks
	// contain; "" for every task.
	filter        string
	offset, limit int
	// task is the id of the task whose stanza to include; 0 for none.
	task uint64
}

// parseQuery reads a state request's parameters; an error describes the
// first bad one, for a 400 answer. Parameters it does not know are
// ignored. Only the console's handler calls it.
func parseQuery(v url.Values) (consoleQuery, error) {
	q := consoleQuery{limit: defaultLimit}
	if s := v.Get("sort"); s != "" {
		i := slices.Index(sortNames[:], s)
		if i < 0 {
			return q, fmt.Errorf("bad sort %q: want one of %s", s, strings.Join(sortNames[:], ", "))
		}
		q.sort = sortKey(i)
	}
	switch d := v.Get("dir"); d {
	case "", "asc":
	case "desc":
		q.desc = true
	default:
		return q, fmt.Errorf("bad dir %q: want asc or desc", d)
	}
	q.filter = strings.ToLower(v.Get("filter"))
	if len(q.filter) > maxFilterBytes {
		return q, fmt.Errorf("bad filter: longer than %d bytes", maxFilterBytes)
	}
	var err error
	if q.offset, err = intParam(v, "offset", 0, 0, 1<<31-1); err != nil {
		return q, err
	}
	if q.limit, err = intParam(v, "limit", defaultLimit, 0, maxLimit); err != nil {
		return q, err
	}
	if s := v.Get("task"); s != "" {
		q.task, err = strconv.ParseUint(s, 10, 64)
		if err != nil || q.task == 0 {
			return q, fmt.Errorf("bad task %q: want a task id, a positive integer", s)
		}
	}
	return q, nil
}

// intParam reads the integer parameter name of v, def when absent, which
// must lie in [lo, hi].
func intParam(v url.Values, name string, def, lo, hi int) (int, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("bad %s %q: want an integer from %d to %d", name, s, lo, hi)
	}
	return n, nil
}
