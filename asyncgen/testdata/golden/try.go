package golden

import (
	"errors"

	fu "github.com/blitz-go/blitz/future"
)

// Conn is a connection whose reads are futures.
type Conn interface {
	Read(buf []byte) fu.Future[fu.Result[int]]
}

//blitz:async
func ReadFull(c Conn, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := fu.Try(c.Read(buf[n:]))
		n += m
		if errors.Is(err, errors.ErrUnsupported) {
			return fu.Try(c.Read(buf[n:]))
		}
		if err != nil {
			return n, err
		}
	}
	if _, err := fu.Try(c.Read(nil)); err != nil {
		return n, err
	}
	return n, nil
}
