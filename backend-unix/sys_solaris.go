package unixio

import "golang.org/x/sys/unix"

// keepIdleOpt is TCP_KEEPIDLE (illumos, Solaris 11.4; in seconds, as on
// Linux).
const keepIdleOpt, keepIntvlOpt = unix.TCP_KEEPIDLE, unix.TCP_KEEPINTVL

// reusePortOpt: illumos has no SO_REUSEPORT (nor has x/sys for Solaris), so
// OptReusePort is unsupported (ENOPROTOOPT, backend.ErrUnsupported).
func reusePortOpt() (int, error) { return 0, unix.ENOPROTOOPT }
