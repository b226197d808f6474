// Package timerwheel is a hierarchical timer wheel: O(1) insert, cancel and
// reset of intrusive timer entries, next expiry from per-level occupancy
// bitmaps, and cascading, for programs that keep millions of short timeouts.
// It has two layers:
//
//   - Wheel[T], the core. It counts integer ticks and reads no clock, so it is
//     deterministic under test; its owner calls Advance to move time. Entries
//     (Entry[T]) are embedded in the caller's own structs and cost no
//     allocation.
//   - Service, a ready-to-use concurrent front end with AfterFunc, Timer.Stop
//     and Timer.Reset in the spirit of the time package, driven by its own
//     goroutines, that a Go program can swap in for time.AfterFunc.
//
// Timebase converts between time.Time or time.Duration and ticks (1 ms by
// default) for owners of a Wheel that follow a clock.
//
// The package imports only the standard library.
//
// # Layout
//
// A Wheel has six levels of 64 slots. A slot of level L spans 64^L ticks, so
// level 0 has one-tick slots and the six levels together cover 2^36 ticks
// (about 2.2 years at 1 ms). Each slot is the head of a doubly linked list of
// entries, and each level has a 64-bit occupancy bitmap whose bit s is set
// exactly when slot s is non-empty. Besides the levels there are three lists:
// overflow (deadlines beyond the levels' reach, see "The overflow list"), due
// (inserted with a deadline at or before Now) and firing (reached by the
// running Advance, not yet handed to its callback).
//
// The wheel stands at a tick, Now: every tick up to and including it has been
// walked. The invariant, checked after every operation by the model tests:
//
//   - an entry at level L has a deadline after Now, and the highest bit in
//     which its deadline and Now differ lies in level L's six bits
//     [6L, 6L+6) (for level 0, in bits [0, 6)); equivalently it agrees with
//     Now above bit 6L+6 and its level-L slot index is strictly greater
//     than Now's;
//   - an overflow entry differs from Now in a bit at or above 36;
//   - a due entry has a deadline at or before Now.
//
// So no occupied slot lies at or before Now's slot in its level, and the
// search for the next occupied slot needs no wrap-around. It also follows
// that every entry of level L expires before every entry of level L+1, which
// lies in a later level-(L+1) slot.
//
// # Level choice
//
// Insert files an entry at the level that holds the highest bit of
// Now XOR deadline (with the low six bits forced on, so that level 0 is the
// minimum): bits.Len64 gives that bit, and dividing by six gives the level.
// A result of six or more means the overflow list. The slot is the level's
// six bits of the deadline. Choosing the level is an XOR, an OR, a count of
// leading zeros and a division by a constant, not a scan of the levels.
//
// # Next expiry
//
// By the invariant, the earliest pending entry is in the lowest non-empty
// level, in that level's first occupied slot after Now's slot: one
// TrailingZeros64 of the masked bitmap per level, at most six. At level 0 the
// slot's tick is the exact deadline. At a higher level the slot's first tick
// is a lower bound: the entry's deadline is somewhere in the slot, and that
// first tick is when Advance must cascade the slot. NextExpiry returns that
// tick rather than scanning the slot's list (which may hold thousands of
// entries) for the exact minimum. A driver that sleeps until NextExpiry
// therefore wakes at most once more per level on the way to a deadline, and
// never late. When only the overflow list holds entries, NextExpiry scans it
// and is exact.
//
// # Cascading
//
// Advance(t) walks from Now to t one event at a time. The next event is the
// first tick of the first occupied slot of the lowest non-empty level. If it
// lies after t the walk ends and Now becomes t. Otherwise Now becomes that
// tick and the slot is emptied: entries whose deadline equals the tick go to
// the firing list and are handed to the callback; the others are filed again
// relative to the new Now, which puts them on a lower level (their deadline
// and the slot's first tick differ only below bit 6L). Each entry therefore
// cascades at most once per level, a jump across empty ticks costs nothing,
// and Advance never visits a tick that has no event. Where a classic wheel
// cascades a higher level whenever level 0 wraps, this one cascades the slot
// the walk reaches: the same work done lazily, and what keeps the invariant
// above.
//
// # The overflow list
//
// Deadlines that differ from Now at bit 36 or above (beyond the 2^36-tick
// block Now lies in) go to the overflow list, unsorted. Because every level
// entry lies in Now's block, overflow entries expire after all of them, so
// the walk looks at the overflow list only when the levels are empty: it
// scans the list for its earliest deadline, jumps Now to the start of that
// deadline's block, and files the whole list again (entries of that block go
// to the levels; the rest stay). The scan is O(overflow) and happens at most
// once per block boundary crossed with the levels empty, that is, at most
// once per 2.2 years of wheel time at 1 ms ticks. Deadlines up to
// math.MaxUint64 work.
//
// # Firing order
//
// Advance first fires the due entries (in unspecified order), then the
// entries its walk reaches, in nondecreasing deadline order; among equal
// deadlines the order is unspecified but deterministic. During a callback,
// Now is the tick the walk has reached: the entry's deadline, or the old Now
// for a due entry. A callback may use the wheel (except Advance): an entry
// inserted with a deadline after Now fires later in the same Advance if the
// deadline is at or before t; one inserted at or before Now is due and waits
// for the next Advance, so a callback that re-arms itself cannot loop
// forever. Cancel from a callback may remove an entry that the walk has
// already reached but not yet handed over; it then does not fire.
//
// # Entry lifecycle
//
// An Entry is idle (zero value, fired or cancelled) or pending in exactly
// one Wheel. Insert needs an idle entry; Reset takes either and reports
// which it was. The edge cases, each a row of TestEntryLifecycleEdgeCases:
//
//   - Cancel of an idle entry (never inserted, fired, cancelled) returns
//     false and does nothing; so a double Cancel returns true, then false,
//     and a Cancel after fire returns false.
//   - Reinsert after fire or cancel is an ordinary Insert: the entry is idle
//     the moment Advance hands it to the callback, so the callback itself
//     may reinsert it.
//   - A deadline in the past (at or before Now) makes the entry due: it fires
//     at the next Advance whatever tick that Advance is given, even one
//     before Now, and never at an Insert.
//   - Reset of a pending entry moves it and returns true; Reset of an idle
//     entry inserts it and returns false.
//
// # Getting back to the caller's struct
//
// Safe Go has no container_of, and the package does not use unsafe. An
// Entry[T] carries a caller-owned field Value T, typically a pointer to the
// struct that embeds the entry, set once when the struct is built:
//
//	type conn struct {
//		timeout timerwheel.Entry[*conn]
//		// ...
//	}
//	c.timeout.Value = c
//	w.Insert(&c.timeout, deadline)
//	// in the fire callback: e.Value is c
//
// This costs one word per entry, no allocation per Insert, and no interface
// conversion or indirect call per fire beyond Advance's one callback. Two
// alternatives were rejected: a func field per entry (a closure allocation
// per struct and an indirect call per fire, where one callback per Advance
// usually knows what to do with any entry) and an interface value (an
// allocation whenever a non-pointer is boxed, and a dynamic call). T may
// still be a func() if a callback per entry is wanted.
//
// # Misuse
//
// Misuse panics with an error value that has the "timerwheel: " prefix and
// can be matched with errors.Is after recover: a nil entry (ErrNilEntry), an
// entry pending in another Wheel passed to Insert, Reset or Cancel
// (ErrForeignEntry), Insert of an entry already pending in the same Wheel
// (ErrEntryPending), Advance from inside a callback (ErrReentrantAdvance),
// AfterFunc with a nil f (ErrNilFunc), a Service not made by NewService
// (ErrUninitializedService), and Stop or Reset on a Timer not made by
// AfterFunc (ErrUninitializedTimer). Panics were chosen over returned
// errors because each of these is a bug in the caller, not a condition a
// correct program handles, and because the hot-path methods then keep their
// natural signatures. The one returned error is ErrClosed, from a second
// Service.Close.
//
// # Time and ticks
//
// A Timebase maps tick k to the instant Origin + k*Tick. A deadline maps to
// the first tick that starts at or after it (rounding up), and the present to
// the tick that contains it (rounding down). An owner that advances the wheel
// to the present's tick therefore never fires a timer early, and fires it
// less than one tick after its deadline once it advances at the deadline
// tick's start. In ticks, the core is exact: an entry fires in the first
// Advance whose target is at or past its deadline. The Service adds the Go
// runtime's timer and scheduling latency on top of the one tick.
//
// # The Service
//
// A Service has one or more shards. Each shard is a Wheel[*Timer] guarded by
// a mutex, one runtime timer (a time.Timer) and one driver goroutine. A Timer
// is allocated per AfterFunc (as time.AfterFunc allocates one) and stays in
// the shard chosen when it was made (see "Sharding"); Stop and Reset lock
// that shard only. The wheel's ticks count from the moment NewService ran, on
// the monotonic clock.
//
// # The driver protocol
//
// The shard's field armed records the tick its runtime timer is set for
// (math.MaxUint64 when stopped). The driver loops:
//
//  1. Lock the shard. Read the clock and Advance the wheel to the present's
//     tick (rounded down), appending each fired Timer to the driver's batch.
//     Each fired entry is idle from here on, so Stop returns false for it.
//  2. Ask NextExpiry. If nothing is pending, stop the runtime timer and set
//     armed to "never": an idle shard costs no CPU. Else Reset the runtime
//     timer to the start of that tick and record it in armed.
//  3. Unlock.
//  4. Run f of each Timer in the batch, with no lock held (see "Where f
//     runs"), and empty the batch.
//  5. Sleep until the runtime timer fires or Close closes quit; on quit,
//     exit.
//
// Inserts (AfterFunc and Reset) pair with it:
//
//  1. Read the clock and compute the deadline tick (rounded up), without
//     the lock.
//  2. Lock the shard. If it is closed, unlock and report false. If the wheel
//     is empty, Advance it to the present (this fires nothing and lets the
//     new entry be filed at the level its distance calls for).
//  3. Reset the entry in the wheel.
//  4. If the deadline is before armed, Reset the runtime timer to it and set
//     armed. Unlock.
//
// Because armed and the runtime timer change only under the lock, an insert
// with an earlier deadline cannot be overwritten by a driver arming a later
// one, so no wakeup is lost; a wakeup that finds nothing to do (the early
// entry was stopped, or NextExpiry was a slot's lower bound) just re-arms.
// Stop never touches the runtime timer. The driver never polls: it sleeps
// until the next expiry, reset only when an earlier deadline is inserted.
//
// # Where f runs
//
// By default each f runs in its own goroutine, as with time.AfterFunc: f may
// block, and a slow f delays nothing else. That costs a goroutine start per
// fired timer. WithInlineCallbacks runs f on the shard's driver goroutine
// instead, which is cheaper but makes f part of the driver: it must not
// block or run long, or every timer of its shard fires late. The default is
// the safe one because the Service is meant as a drop-in for
// time.AfterFunc, whose callers' functions were written for goroutines. In
// both modes f runs with no lock held, so it may call AfterFunc, Stop and
// Reset on the same Service (but not Close, see below). A panic in f
// crashes the program in both modes, as with time.AfterFunc.
//
// # Close
//
// Close marks every shard closed and discards its pending timers (their f
// never runs; Stop and Reset of them return false; Reset does not re-arm),
// stops the runtime timers, closes quit, and waits for the drivers to exit
// and for every f the Service started to return. A driver that had collected
// a batch before Close runs it first: timers that expired before Close still
// fire. After Close, AfterFunc returns a Timer that never fires. Since Close
// waits for running callbacks, f must not call Close. With every Service
// closed no goroutine of this package remains, so a leak checker such as
// go.uber.org/goleak finds none.
//
// # Differences from time.AfterFunc
//
//   - Resolution is the tick: f runs after d, rounded up to the tick grid,
//     up to one tick late (plus runtime latency).
//   - Stop returning false means the timer expired, was stopped or was
//     discarded by Close. With inline callbacks, "expired" may mean f is
//     about to run on the driver rather than already started.
//   - Reset after Close returns false and schedules nothing.
//   - A Timer has no channel; there is no NewTimer or After.
//   - Close, which time has no counterpart for, waits for running f.
//
// # Sharding
//
// One lock per Service serialises every AfterFunc and Stop; shards divide
// that contention. Each shard costs a driver goroutine, a runtime timer and
// a 3 KiB wheel, and with timers pending each shard wakes on its own (at
// most once per tick), so more shards mean more wakeups, not more
// throughput, once contention is gone. The default is GOMAXPROCS shards,
// like the runtime's per-P timer heaps; WithShards overrides it.
//
// Which shard a new Timer goes to matters as much as how many there are.
// AfterFunc takes the choice from a sync.Pool of shard hints: Get and Put hit
// the current P's private cache, so goroutines running on one P keep using
// one shard and callers on different Ps rarely meet on a lock, the way the
// runtime's per-P timer heaps avoid each other. A hint dropped by the GC is
// remade with the next shard in turn. A random shard per AfterFunc, measured
// below for comparison, sends every caller to every lock.
//
// BenchmarkConcurrentAfterFunc and BenchmarkConcurrentAfterFuncShards
// measure AfterFunc+Stop from four goroutines, each keeping 1024 timers live,
// in ns per timer. Development machine (2-core AMD EPYC VM, GOMAXPROCS=2, Go
// 1.26), three interleaved 1 s runs of each test binary:
//
//	                   shards=1  shards=2  shards=4  shards=8  default (2)  time.AfterFunc
//	random shard        134-150   126-228   110-121    98-131     129-319       134-163
//	P-affine (pool)     130-149   100-116    78-142    74-99       80-95        132-148
//
// With P-affine hints the default (GOMAXPROCS shards) is about 1.5 times
// faster than time.AfterFunc+Stop and lost its bimodal slow runs (the random
// pick's 319 ns came with lock spinning at a fifth of the profile). One
// shard is about as fast as time.AfterFunc here; more shards than Ps buys
// little on two cores. The default rests on that and on the scaling
// argument (a single lock is the one resource every core shares, while a
// shard costs an idle goroutine); it should be re-measured on a machine with
// more cores.
//
// # Performance
//
// bench_test.go compares each layer with its baseline, a million timers
// with distinct deadlines between 1 s and 100 s in random order. On the
// development machine above (ns per timer, ranges over several runs):
//
//	InsertCancel  Wheel with embedded entries  29-50, 0 allocs
//	              Service.AfterFunc+Stop       168-283, 1 alloc (the Timer)
//	              time.AfterFunc+Stop          282-351, 1 alloc
//	Advance       Wheel, driver-style          272-410 per fired timer
//	              container/heap min-heap      431-1072 per fired timer
//
// At this size both are bound by cache misses: the wheel's cost is one
// pointer-chasing pass over each slot's list per level cascaded (two or
// three for this range), the heap's is a sift-down of log2(n) levels per
// fire.
//
// # Alternatives rejected
//
//   - Five levels reach 64^5 ticks, about 12.4 days at 1 ms, so week-long
//     timeouts and leases would live in the overflow list. Six levels reach
//     2.2 years for 520 more bytes per wheel and at most one more cascade
//     per entry.
//   - A binary or 4-ary heap (container/heap, Go's runtime timers) costs
//     O(log n) per insert, cancel and fire with scattered memory accesses;
//     the wheel is O(1) for all three (see BenchmarkInsertCancel and
//     BenchmarkAdvance).
//   - A single unsharded front end: one lock that every core's AfterFunc
//     and Stop go through. On two cores it is about as fast as
//     time.AfterFunc and slower than GOMAXPROCS P-affine shards (see
//     "Sharding"), and contention only grows with cores.
//   - A random shard per AfterFunc: see "Sharding".
//   - A wake-up channel from inserters to the driver (the driver then resets
//     its own timer): costs a goroutine switch per earlier insert where
//     resetting the runtime timer under the shard lock costs a call.
//   - An exact NextExpiry that scans the earliest slot: O(slot size), which
//     is tens of thousands of entries for a million timers; the lower bound
//     costs at most one extra wakeup per level.
//   - Levels indexed by absolute time with a wrap-around search for the
//     next occupied slot: lazy slot cascading makes every occupied slot lie
//     after Now's, so no wrap is needed and levels never hold stale slots.
package timerwheel
