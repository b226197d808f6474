module github.com/blitz-go/blitz/backend-poll

go 1.25.0

require github.com/blitz-go/blitz/backend v0.3.0

replace github.com/blitz-go/blitz/backend => ../backend

require (
	github.com/blitz-go/blitz/backend-unix v0.3.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.47.0
)

replace github.com/blitz-go/blitz/backend-unix => ../backend-unix
