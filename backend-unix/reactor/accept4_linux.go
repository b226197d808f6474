package reactor

import (
	"github.com/blitz-go/blitz/backend"
	unixio "github.com/blitz-go/blitz/backend-unix"
)

// acceptConn accepts a connection as a non-blocking, close-on-exec socket,
// with its peer's address decoded from the caller's stack: a server
// accepting many connections leaves no garbage per connection.
func acceptConn(fd int) (int, backend.Addr, error) {
	return unixio.Accept4(fd)
}
