package httpserver

import (
	"fmt"
	"net"
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/runtime"
)

// An accept that failed for its connection (as Windows reports a client
// reset before AcceptEx completed) is skipped; a closed listener is not.
// Under Wine, TestAbruptClients stopped the server with "accept: backend:
// not connected" before this rule.
func TestConnLevelAcceptError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		skip bool
	}{
		{&net.OpError{Op: "accept", Err: backend.ErrNotConnected}, true},
		{&net.OpError{Op: "accept", Err: fmt.Errorf("x: %w", backend.ErrConnAborted)}, true},
		{&net.OpError{Op: "accept", Err: backend.ErrConnReset}, true},
		{&net.OpError{Op: "accept", Err: runtime.ErrClosed}, false},
		{&net.OpError{Op: "accept", Err: backend.ErrPermission}, false},
	} {
		if got := connLevelAcceptError(tc.err); got != tc.skip {
			t.Errorf("connLevelAcceptError(%v) = %v, want %v", tc.err, got, tc.skip)
		}
	}
}
