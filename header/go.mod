module github.com/blitz-go/blitz/header

go 1.25.0

require (
	github.com/blitz-go/blitz/future v0.3.0
	github.com/blitz-go/blitz/waker v0.3.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace (
	github.com/blitz-go/blitz/future => ../future
	github.com/blitz-go/blitz/waker => ../waker
)
