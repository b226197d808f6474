//go:build linux

package peers

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// every Linux the kernel's ABI covers).
const clockTick = 10 * time.Millisecond

// RSS returns the resident set of process pid in bytes (VmRSS).
func RSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("peers: no VmRSS for process %d", pid)
}

// CPU returns the user and system CPU time process pid has used.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("peers: malformed /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	// After ')': state(3) ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime(14) stime(15).
	if len(f) < 13 {
		return 0, fmt.Errorf("peers: short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("peers: malformed times in /proc/%d/stat", pid)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
