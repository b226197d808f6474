package blitz_test

import "golang.org/x/sys/windows"

// underWine reports whether this Windows test binary runs under Wine (ntdll
// exports wine_get_version there).
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
