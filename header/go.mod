module github.com/blitz-go/blitz/header

go 1.25.0

require (
	github.com/blitz-go/blitz/future v0.0.0
	github.com/blitz-go/blitz/waker v0.0.0
)

replace (
	github.com/blitz-go/blitz/future => ../future
	github.com/blitz-go/blitz/waker => ../waker
)
