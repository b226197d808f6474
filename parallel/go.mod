module github.com/blitz-go/blitz/parallel

go 1.25.0

replace github.com/blitz-go/blitz/wsqueue => ../wsqueue
