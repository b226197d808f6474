// Package unixio holds what the Unix backends share: the one conversion of
// errno values to the sentinel errors of package backend (Sentinel, Error,
// ErrnoError), socket addresses in both the x/sys form and the kernel's raw
// layout (Sockaddr, EncodeRaw, DecodeRaw), and Control, the synchronous
// control plane (sockets, bind, listen, options, files) that the io_uring,
// epoll, kqueue and poll(2) backends embed to implement backend.Resources.
//
// Sockets are made non-blocking and close-on-exec. The readiness backends
// need non-blocking sockets to learn EAGAIN; io_uring serves non-blocking
// sockets through its internal poll, which is its fast path for sockets.
// Sends never raise SIGPIPE: Linux and FreeBSD pass MSG_NOSIGNAL
// (SendFlags), darwin sets SO_NOSIGPIPE on every socket.
//
// The package builds on every platform so that the workspace builds; on
// platforms without the Unix backends it is empty.
package unixio
