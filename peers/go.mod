module github.com/blitz-go/blitz/peers

go 1.25.0

require (
	github.com/blitz-go/blitz v0.3.0
	github.com/blitz-go/blitz/future v0.3.0
	github.com/blitz-go/blitz/httpserver v0.3.0
	github.com/blitz-go/blitz/websocket v0.3.0
	github.com/coder/websocket v1.8.15
	github.com/gobwas/httphead v0.1.0
	github.com/gobwas/ws v1.4.0
	github.com/gorilla/websocket v1.5.3
	github.com/lesismal/nbio v1.6.8
	github.com/lxzan/gws v1.8.9
	github.com/panjf2000/gnet/v2 v2.9.7
	github.com/valyala/fasthttp v1.74.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.47.0
)

require (
	github.com/dolthub/maphash v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
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
	github.com/blitz-go/blitz/waker v0.3.0 // indirect
	github.com/blitz-go/blitz/wsqueue v0.3.0 // indirect
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/lesismal/llib v1.2.2 // indirect
	github.com/molecule-man/go-brrr v1.0.1 // indirect
	github.com/panjf2000/ants/v2 v2.11.3 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/crypto v0.55.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
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
	github.com/blitz-go/blitz/websocket => ../websocket
	github.com/blitz-go/blitz/wsqueue => ../wsqueue
)
