package future

import "errors"

// ErrPolledAfterCompletion is the panic value of a combinator polled again
// after it returned its value.
var ErrPolledAfterCompletion = errors.New("future: polled after completion")
