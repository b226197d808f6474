module github.com/blitz-go/blitz/websocket

go 1.25.0

require (
	github.com/blitz-go/blitz v0.3.0
	github.com/blitz-go/blitz/future v0.3.0
	github.com/blitz-go/blitz/httpserver v0.3.0
	github.com/blitz-go/blitz/waker v0.3.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/blitz-go/blitz/backend v0.3.0 // indirect
	github.com/blitz-go/blitz/backend-epoll v0.3.0 // indirect
	github.com/blitz-go/blitz/backend-iocp v0.3.0 // indirect
	github.com/blitz-go/blitz/backend-kqueue v0.3.0 // indirect
	github.com/blitz-go/blitz/backend-poll v0.3.0 // indirect
	github.com/blitz-go/blitz/backend-unix v0.3.0 // indirect
	github.com/blitz-go/blitz/backend-uring v0.3.0 // indirect
	github.com/blitz-go/blitz/blocking v0.3.0 // indirect
	github.com/blitz-go/blitz/globalq v0.3.0 // indirect
	github.com/blitz-go/blitz/header v0.3.0 // indirect
	github.com/blitz-go/blitz/idle v0.3.0 // indirect
	github.com/blitz-go/blitz/scheduler v0.3.0 // indirect
	github.com/blitz-go/blitz/syncprim v0.3.0 // indirect
	github.com/blitz-go/blitz/timerwheel v0.3.0 // indirect
	github.com/blitz-go/blitz/wsqueue v0.3.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

replace (
	github.com/blitz-go/blitz => ../
	github.com/blitz-go/blitz/backend => ../backend
	github.com/blitz-go/blitz/backend-epoll => ../backend-epoll
	github.com/blitz-go/blitz/backend-iocp => ../backend-iocp
	github.com/blitz-go/blitz/backend-kqueue => ../backend-kqueue
	github.com/blitz-go/blitz/backend-poll => ../backend-poll
	github.com/blitz-go/blitz/backend-unix => ../backend-unix
	github.com/blitz-go/blitz/backend-uring => ../backend-uring
	github.com/blitz-go/blitz/blocking => ../blocking
	github.com/blitz-go/blitz/future => ../future
	github.com/blitz-go/blitz/globalq => ../globalq
	github.com/blitz-go/blitz/header => ../header
	github.com/blitz-go/blitz/httpserver => ../httpserver
	github.com/blitz-go/blitz/idle => ../idle
	github.com/blitz-go/blitz/scheduler => ../scheduler
	github.com/blitz-go/blitz/syncprim => ../syncprim
	github.com/blitz-go/blitz/timerwheel => ../timerwheel
	github.com/blitz-go/blitz/waker => ../waker
	github.com/blitz-go/blitz/wsqueue => ../wsqueue
)
