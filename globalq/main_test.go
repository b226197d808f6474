package globalq

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any test leaves a goroutine behind: every stress
// test must join the producers and consumers it starts.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// node is the element type of the white-box tests: an id and the intrusive
// link the queues own.
type node struct {
	id   int
	next *node
}

// QueueNext returns the address of n's link, making *node a Node[node].
func (n *node) QueueNext() **node { return &n.next }

// queue is the method set both variants share, so that one test body checks
// both.
type queue interface {
	Push(*node) bool
	PushSlice([]*node) bool
	PushOverflow([]*node)
	Pop() *node
	PopBatch([]*node, int) int
	Drain(func(*node)) int
	Close()
	Closed() bool
	Len() int
	IsEmpty() bool
}

// Both variants satisfy wsqueue.Overflow[node] structurally (its one method is
// PushOverflow(batch []*T)); this module does not import wsqueue.
var (
	_ queue                              = (*Queue[node, *node])(nil)
	_ queue                              = (*Sharded[node, *node])(nil)
	_ interface{ PushOverflow([]*node) } = (*Queue[node, *node])(nil)
)

// variants returns a fresh queue of each variant, by name. sharded1 has one
// shard and so is FIFO, which the model test needs.
func variants() map[string]func() queue {
	return map[string]func() queue{
		"queue":    func() queue { return New[node]() },
		"zero":     func() queue { return new(Queue[node, *node]) },
		"sharded":  func() queue { return NewSharded[node](0) },
		"sharded1": func() queue { return NewSharded[node](1) },
		"sharded3": func() queue { return NewSharded[node](3) },
	}
}

// fifo reports whether the variant named name is FIFO overall.
func fifo(name string) bool { return name != "sharded" && name != "sharded3" }
