module github.com/blitz-go/blitz/parallel

go 1.25.0

replace github.com/blitz-go/blitz/wsqueue => ../wsqueue

require (
	github.com/blitz-go/blitz/wsqueue v0.3.0
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
