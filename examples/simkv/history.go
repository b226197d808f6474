package simkv

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Op is one operation of a client history: a GET or a PUT, when it was
// invoked and when its answer came (nanoseconds since the history began).
// A PUT whose outcome is unknown (a timeout, an ERR, a broken connection)
// has Return = Unknown: it may take effect at any time after its call.
type Op struct {
	Client       int
	Put          bool
	Key, Value   string // Value: the value written, or the value read
	Found        bool   // a GET's: whether the key was set
	Call, Return int64
}

// Unknown is the Return of an operation whose outcome is unknown: it stays
// open for ever, which is how porcupine checks one that may or may not
// have happened.
const Unknown = math.MaxInt64

// String describes the operation for a report.
func (o Op) String() string {
	ret := fmt.Sprint(time.Duration(o.Return))
	if o.Return == Unknown {
		ret = "?"
	}
	switch {
	case o.Put:
		return fmt.Sprintf("c%d PUT %s=%s [%v, %s]", o.Client, o.Key, o.Value, time.Duration(o.Call), ret)
	case o.Found:
		return fmt.Sprintf("c%d GET %s -> %s [%v, %s]", o.Client, o.Key, o.Value, time.Duration(o.Call), ret)
	}
	return fmt.Sprintf("c%d GET %s -> none [%v, %s]", o.Client, o.Key, time.Duration(o.Call), ret)
}

// History records the operations of concurrent clients. Safe for
// concurrent use.
type History struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
}

// NewHistory starts a history now.
func NewHistory() *History { return &History{start: time.Now()} }

// Now is the time since the history began, the clock of Op.Call and Return.
func (h *History) Now() int64 { return int64(time.Since(h.start)) }

// Add records op.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops returns the operations recorded, in the order recorded.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.ops)
}

// Stats counts the operations by outcome.
func (h *History) Stats() (puts, gets, unknown int) {
	for _, o := range h.Ops() {
		switch {
		case o.Return == Unknown:
			unknown++
		case o.Put:
			puts++
		default:
			gets++
		}
	}
	return puts, gets, unknown
}

// Linearizable checks the history with porcupine against a key-value map
// (partitioned by key: each key is a register), with a bound on the
// checker's time. It returns the verdict and, for a history that is not
// linearizable, the operations on the first key that fails, by call time, up
// to the first one that cannot be linearized, for a report.
//
// The PUTs of unknown outcome whose value no GET returned are left out:
// such a write can be linearized after every other operation, where it
// changes nothing, and it cannot explain any read (values are unique), so
// the history is linearizable with it exactly when it is without. Left in,
// each would double the states the checker may have to explore. Since the
// checker runs on goroutines of its own, whose time a testing/synctest
// bubble makes virtual, timeout bounds it only outside a bubble.
func (h *History) Linearizable(timeout time.Duration) (porcupine.CheckResult, []Op) {
	ops := pruneUnobserved(h.Ops())
	history := make([]porcupine.Operation, len(ops))
	for i, o := range ops {
		history[i] = porcupine.Operation{ClientId: o.Client, Input: o, Output: o, Call: o.Call, Return: o.Return}
	}
	res := porcupine.CheckOperationsTimeout(kvModel, history, timeout)
	if res != porcupine.Illegal {
		return res, nil
	}
	for _, part := range kvModel.Partition(history) {
		if porcupine.CheckOperations(kvModel, part) {
			continue
		}
		slices.SortFunc(part, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		part = part[:firstViolation(part)+1]
		bad := make([]Op, len(part))
		for i, p := range part {
			bad[i] = p.Input.(Op)
		}
		return res, bad
	}
	return res, nil
}

// firstViolation returns the index of the operation (of ops, sorted by
// call) that ends the shortest prefix of ops that is not linearizable:
// usually the read that saw what it should not have.
func firstViolation(ops []porcupine.Operation) int {
	for i := range ops {
		if !porcupine.CheckOperations(kvModel, ops[:i+1]) {
			return i
		}
	}
	return len(ops) - 1
}

// Visualize writes porcupine's HTML view of the history (each key's
// operations, and how far a linearization gets) to path.
func (h *History) Visualize(path string) error {
	ops := pruneUnobserved(h.Ops())
	end := lastTime(ops) + int64(time.Millisecond)
	history := make([]porcupine.Operation, len(ops))
	for i, o := range ops {
		history[i] = porcupine.Operation{ClientId: o.Client, Input: o, Output: o, Call: o.Call, Return: min(o.Return, end)}
	}
	_, info := porcupine.CheckOperationsVerbose(kvModel, history, 0)
	return porcupine.VisualizePath(kvModel, info, path)
}

// lastTime is the latest call or known return of ops. The visualization
// draws the operations of unknown outcome up to just after it.
func lastTime(ops []Op) int64 {
	var last int64
	for _, o := range ops {
		last = max(last, o.Call)
		if o.Return != Unknown {
			last = max(last, o.Return)
		}
	}
	return last
}

// pruneUnobserved drops the PUTs of unknown outcome that no GET observed.
func pruneUnobserved(ops []Op) []Op {
	read := map[string]bool{}
	for _, o := range ops {
		if !o.Put && o.Found {
			read[o.Value] = true
		}
	}
	return slices.DeleteFunc(ops, func(o Op) bool { return o.Put && o.Return == Unknown && !read[o.Value] })
}

// kvModel is the sequential specification of the store, one register per
// key: its state is the key's value, "" when unset (values are never
// empty). The input and the output of an operation are both its Op.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, o := range history {
			k := o.Input.(Op).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], o)
		}
		slices.Sort(keys)
		parts := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			parts[i] = byKey[k]
		}
		return parts
	},
	Init: func() any { return "" },
	Step: func(state, input, _ any) (bool, any) {
		o, v := input.(Op), state.(string)
		if o.Put {
			return true, o.Value
		}
		if o.Found {
			return o.Value == v, v
		}
		return v == "", v
	},
	Equal: func(a, b any) bool { return a.(string) == b.(string) },
	DescribeOperation: func(input, _ any) string {
		return input.(Op).String()
	},
	DescribeState: func(state any) string {
		if v := state.(string); v != "" {
			return v
		}
		return "(unset)"
	},
}
