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

// Stream is what Session closes.
type Stream struct{ closed bool }

func (s *Stream) Close() error {
	s.closed = true
	return nil
}

// Session's defer statements each run at most once: they are open-coded.
//
//blitz:async
func Session(c Conn, s *Stream, buf []byte) (n int, err error) {
	defer s.Close()
	defer report(len(buf) > 0, len(buf))
	n, err = fu.Try(c.Read(buf))
	if err != nil {
		defer func() { n = -1 }()
		return 0, err
	}
	buf = nil
	return n, nil
}
