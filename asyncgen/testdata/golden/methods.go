package golden

import fu "github.com/blitz-go/blitz/future"

// Client is the receiver of an async method.
type Client struct {
	get   func(string) fu.Future[string]
	count int
}

//blitz:async
func (c *Client) Fetch(key string) string {
	c.count++
	return fu.Await(c.get(key))
}

// Number is a constraint with a union.
type Number interface{ ~int | ~float64 }

//blitz:async
func Sum[N Number, S ~[]N](get func(N) fu.Future[N], xs S) N {
	var total N
	for _, x := range xs {
		total += fu.Await(get(x))
	}
	return total
}
