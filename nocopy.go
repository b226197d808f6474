package blitz

// noCopy makes go vet report copies of a future after its first poll.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
