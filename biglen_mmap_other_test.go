//go:build !unix && !windows

package blitz_test

import "errors"

// mapBig: no way to map memory without touching it here.
func mapBig(int, bool) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapBig([]byte) error { return nil }
