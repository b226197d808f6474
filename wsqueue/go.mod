module github.com/blitz-go/blitz/wsqueue

go 1.25.0
