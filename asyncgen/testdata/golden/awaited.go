package golden

import fu "github.com/blitz-go/blitz/future"

// Ready is a future held by value: its pointer is the future.
type Ready struct{ v int }

// NewReady returns a Ready of v.
func NewReady(v int) Ready { return Ready{v: v} }

// Poll returns the value.
func (r *Ready) Poll(*fu.Context) (int, bool) { return r.v, true }

// Awaited awaits a local through its address (held as a field of its own
// type), a pointer (a field of the pointer type) and a local that is also
// used otherwise (a field of its own, awaited through a pointer field).
//
//blitz:async
func Awaited(p *Ready, n int) int {
	r := NewReady(n)
	v := fu.Await(&r)
	v += fu.Await(p)
	for i := range n {
		q := NewReady(i)
		v += fu.Await(&q)
	}
	s := NewReady(v)
	v += fu.Await(&s)
	return v + s.v
}
