module github.com/blitz-go/blitz/timerwheel

go 1.25.0
