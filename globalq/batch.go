package globalq

// MinBatch and MaxBatch bound the fair share that [Queue.PopBatch] and
// [Sharded.PopBatch] take: a worker takes len/workers elements, at least
// MinBatch and at most MaxBatch, and never more than its buffer holds or the
// queue has. See the package doc, section "Batch pop".
const (
	MinBatch = 4
	MaxBatch = 64
)

// batchSize is the number of elements a PopBatch takes from a queue holding
// n elements, for a pool of workers workers, into a buffer of room slots:
//
//	min(room, MaxBatch, max(MinBatch, n/workers), n)
//
// workers below 1 counts as 1. Negative n or room count as 0. Pure; any
// goroutine may call it.
func batchSize(n, workers, room int) int {
	if n <= 0 || room <= 0 {
		return 0
	}
	workers = max(workers, 1)
	return min(room, MaxBatch, max(MinBatch, n/workers), n)
}
