//go:build netbsd || openbsd || aix

package reactor

// afterAccept has nothing to add: sends pass MSG_NOSIGNAL.
func afterAccept(int) error { return nil }
