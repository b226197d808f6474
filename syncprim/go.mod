module github.com/blitz-go/blitz/syncprim

go 1.25.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/blitz-go/blitz/future v0.3.0
	github.com/blitz-go/blitz/scheduler v0.3.0
	github.com/blitz-go/blitz/waker v0.3.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sync v0.22.0
)

require (
	github.com/blitz-go/blitz/globalq v0.3.0 // indirect
	github.com/blitz-go/blitz/header v0.3.0 // indirect
	github.com/blitz-go/blitz/idle v0.3.0 // indirect
	github.com/blitz-go/blitz/wsqueue v0.3.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)

replace (
	github.com/blitz-go/blitz/future => ../future
	github.com/blitz-go/blitz/globalq => ../globalq
	github.com/blitz-go/blitz/header => ../header
	github.com/blitz-go/blitz/idle => ../idle
	github.com/blitz-go/blitz/scheduler => ../scheduler
	github.com/blitz-go/blitz/waker => ../waker
	github.com/blitz-go/blitz/wsqueue => ../wsqueue
)
