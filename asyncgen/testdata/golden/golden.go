// Package golden is the input of the generator's golden test.
package golden

import (
	"strconv"
	"time"

	fu "github.com/blitz-go/blitz/future"
)

//blitz:async
func Lookup(get func(string) fu.Future[string], keys []string, d time.Duration) (int, error) {
	total := 0
	for i := 0; i < len(keys); i++ {
		var n int
		s := fu.Await(get(keys[i]))
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, err
		}
		total += n
	}
	if d > time.Second {
		return total, nil
	}
	return strconv.Atoi(strconv.Itoa(total))
}

// ownWaker reaches the Context of the poll that runs it through future.Cx,
// which the generated code replaces with Poll's own.
//
//blitz:async
func ownWaker(f fu.Future[int]) bool {
	n := fu.Await(f)
	return n > 0 && fu.Cx() != nil
}
