package golden

import fu "github.com/blitz-go/blitz/future"

// Flag is a named bool: an untyped comparison passed to it takes its type.
type Flag bool

func report(ok Flag, n int) {}

//blitz:async
func Drain(c Conn, done func()) (int, error) {
	defer done()
	total := 0
	buf := make([]byte, 16)
	for {
		n, err := fu.Try(c.Read(buf))
		defer report(n > 0, n)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}
