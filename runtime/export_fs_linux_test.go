package runtime

// NoWaitHits is how many of f's reads were served from the page cache
// without the ring (Linux).
func NoWaitHits(f *File) uint64 { return f.ring.noWait.hits.Load() }

// NoWaitWorth runs the decision of f's next read: try the page cache first?
func NoWaitWorth(f *File) bool { return f.ring.noWait.worth() }
