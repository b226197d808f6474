package channels

// noCopy makes go vet's copylocks check report a copy of the future
// structs that embed it: a future holds an intrusive waker.Waiter, and a
// copy made after the first poll would leave the original linked in a
// waiter list that the copy does not know about. Constructing a future
// (returning it from a method) is not a copy to vet.
type noCopy struct{}

// Lock is a no-op used by go vet's copylocks check.
func (*noCopy) Lock() {}

// Unlock is a no-op used by go vet's copylocks check.
func (*noCopy) Unlock() {}
