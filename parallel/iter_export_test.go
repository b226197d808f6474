package parallel

// BlockSize is the iterators' batch size, for the early-exit tests.
const BlockSize = blockSize

// SortSeqMax is the longest slice the sorts sort on the calling goroutine.
const SortSeqMax = sortSeqMax
