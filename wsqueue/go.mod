module github.com/blitz-go/blitz/wsqueue

go 1.25.0

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
