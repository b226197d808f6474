package unixio

import "golang.org/x/sys/unix"

// keepIdleOpt is TCP_KEEPIDLE (in seconds, as on Linux).
const keepIdleOpt, keepIntvlOpt = unix.TCP_KEEPIDLE, unix.TCP_KEEPINTVL

// SendFlags are the flags of every send: no SIGPIPE on a broken pipe.
const SendFlags = unix.MSG_NOSIGNAL
