//go:build netbsd || openbsd

package reactor

// afterAccept has nothing to add: sends pass MSG_NOSIGNAL.
func afterAccept(int) error { return nil }
