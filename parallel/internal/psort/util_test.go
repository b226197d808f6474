package psort

import "sync/atomic"

// atomicCounter counts comparisons made from several goroutines.
type atomicCounter struct{ n atomic.Int64 }

func (c *atomicCounter) add() int64 { return c.n.Add(1) } // no ordering needed: a count
