module github.com/blitz-go/blitz/backend

go 1.25.0
