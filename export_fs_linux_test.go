package blitz

// UsedRing reports whether fut went to the ring; a read served from the
// page cache by RWF_NOWAIT did not (Linux).
func UsedRing(fut *FileIOFuture) bool { return fut.usedRing }

// NoWaitWorth runs the decision of f's next read: try the page cache first?
func NoWaitWorth(f *File) bool { return f.ring.noWait.worth() }
