module github.com/blitz-go/blitz/scheduler

go 1.25.0

require (
	github.com/blitz-go/blitz/future v0.3.0
	github.com/blitz-go/blitz/globalq v0.3.0
	github.com/blitz-go/blitz/header v0.3.0
	github.com/blitz-go/blitz/idle v0.3.0
	github.com/blitz-go/blitz/waker v0.3.0
	github.com/blitz-go/blitz/wsqueue v0.3.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace (
	github.com/blitz-go/blitz/future => ../future
	github.com/blitz-go/blitz/globalq => ../globalq
	github.com/blitz-go/blitz/header => ../header
	github.com/blitz-go/blitz/idle => ../idle
	github.com/blitz-go/blitz/waker => ../waker
	github.com/blitz-go/blitz/wsqueue => ../wsqueue
)
