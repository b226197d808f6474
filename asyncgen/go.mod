module github.com/blitz-go/blitz/asyncgen

go 1.25.0

require (
	github.com/blitz-go/blitz/future v0.3.0
	github.com/blitz-go/blitz/waker v0.3.0
	go.uber.org/goleak v1.3.0
	golang.org/x/tools v0.49.0
)

require (
	golang.org/x/mod v0.39.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
)

replace (
	github.com/blitz-go/blitz/future => ../future
	github.com/blitz-go/blitz/waker => ../waker
)
