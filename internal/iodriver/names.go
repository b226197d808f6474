package iodriver

import "errors"

// The backend names of Config.Backend, as package blitz spells them
// (BackendAuto, BackendURing, ...) and as each backend's Name returns them.
const (
	Auto   = ""
	URing  = "uring"
	Epoll  = "epoll"
	Kqueue = "kqueue"
	Poll   = "poll"
	IOCP   = "iocp"
)

// ErrBackend is wrapped by OpenBackends' error when the I/O backend cannot
// start. Package blitz exports it as blitz.ErrBackend.
var ErrBackend = errors.New("blitz: I/O backend unavailable")
