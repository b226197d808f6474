//go:build !linux

package scheduler

// wakeSysmon does nothing here: the runtime's I/O makes ordinary system
// calls outside Linux, which keep sysmon awake (the package doc, "Go's
// sysmon"). A variable, so that tests can count the calls.
var wakeSysmon = func() {}
