package wsqueue

// hookPoint names a point at which tests can pause a stealer (or, at one
// point, the deque's owner) to force an interleaving (see export_test.go).
// Outside tests the hooks are nil and cost one predictable branch, on the
// steal paths and on the deque's reserving pop only: the owner's Push and the
// local queue's Pop have none.
type hookPoint uint8

const (
	// hookStealLoaded: the stealer has loaded head and tail and computed its
	// claim; the claim CAS has not been tried.
	hookStealLoaded hookPoint = iota
	// hookStealClaimed: phase 1 (claim) succeeded; nothing copied yet.
	hookStealClaimed
	// hookStealCopied: phase 2 (copy) done; phase 3 (completion) not started.
	hookStealCopied
	// hookCompleteRetry: a phase-3 completion CAS failed; the stealer has
	// reread head and is about to try again.
	hookCompleteRetry
	// hookDequeStealRead: a deque thief has read the slot at top; its CAS on
	// top has not been tried.
	hookDequeStealRead
	// hookDequePopReserve: the deque's owner saw two or more items and is
	// about to reserve the newest by lowering bottom.
	hookDequePopReserve
)
