//go:build dragonfly || freebsd || netbsd || solaris || aix

package reactor

import "golang.org/x/sys/unix"

// readv reads the buffers one after the other (x/sys has no readv here),
// stopping at a short read; an error after some bytes ends the op with them.
func readv(fd int, bufs [][]byte, off int64) (int, error) {
	total := 0
	for _, b := range bufs {
		var n int
		var err error
		if off < 0 {
			n, err = unix.Read(fd, b)
		} else {
			n, err = unix.Pread(fd, b, off+int64(total))
		}
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		total += n
		if n < len(b) {
			break
		}
	}
	return total, nil
}

// writev writes the buffers one after the other, stopping at a short write.
func writev(fd int, bufs [][]byte, off int64) (int, error) {
	total := 0
	for _, b := range bufs {
		var n int
		var err error
		if off < 0 {
			n, err = unix.Write(fd, b)
		} else {
			n, err = unix.Pwrite(fd, b, off+int64(total))
		}
		if err != nil {
			if total > 0 {
				return total, nil
			}
			return 0, err
		}
		total += n
		if n < len(b) {
			break
		}
	}
	return total, nil
}
