package blitz

import "time"

// ClockUptime is how long the clock that Sleep and Timeout count from has
// run: now + d overflows a time.Duration for d beyond math.MaxInt64 minus it.
func ClockUptime() time.Duration { return time.Since(clockBase) }
