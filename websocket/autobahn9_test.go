package websocket

// Sections 9 and 10 of the Autobahn testsuite: limits and performance
// (messages up to 16 MiB in one frame, in fragments and in small TCP
// writes; a thousand round trips of small messages) and
// auto-fragmentation (10.1.1). Each case runs against both servers of
// this package: an httpserver Handler with Upgrade, and blitz.Serve with
// UpgradeStream, whose connections read into the runtime's pooled
// buffers and parse a message in place when it fits one. Autobahn times
// these cases and passes any server that echoes them; the tests check
// every byte of every echo and log the time.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blitz-go/blitz"
)

// bigCase is a case of sections 9 and 10: messages of size bytes sent one
// after another (each echo awaited before the next message), each in
// frames of frag bytes (0: one frame), written to the socket in writes of
// chop bytes (0: one write).
type bigCase struct {
	name     string
	op       byte
	size     int
	frag     int
	chop     int
	messages int
}

// bigSizes returns the sizes of sections 9.1 and 9.2 that this run
// sends: all of Autobahn's (64 KiB to 16 MiB) in a full run, up to 1 MiB
// in -short mode or under the race detector (the 16 MiB cases then take
// seconds each).
func bigSizes() []int {
	all := []int{64 << 10, 256 << 10, 1 << 20, 4 << 20, 8 << 20, 16 << 20}
	if testing.Short() || raceEnabled {
		return all[:3]
	}
	return all
}

// fragmentedSize is the message of sections 9.3 and 9.4 (Autobahn's 4
// MiB; 1 MiB in -short mode or under the race detector), and
// roundTrips the message count of 9.7 and 9.8 (Autobahn's 1,000).
func fragmentedSize() int {
	if testing.Short() || raceEnabled {
		return 1 << 20
	}
	return 4 << 20
}

func roundTrips() int {
	if testing.Short() || raceEnabled {
		return 100
	}
	return 1000
}

func section9Cases() []bigCase {
	var cases []bigCase
	kinds := []struct {
		op   byte
		name string
	}{{opText, "text"}, {opBinary, "binary"}}
	for k, kind := range kinds {
		for i, n := range bigSizes() {
			cases = append(cases, bigCase{name: fmt.Sprintf("9.%d.%d_%s_%dKiB", 1+k, i+1, kind.name, n>>10), op: kind.op, size: n, messages: 1})
		}
	}
	for k, kind := range kinds {
		for i, f := range []int{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20} {
			n := fragmentedSize()
			if f > n {
				continue
			}
			cases = append(cases, bigCase{name: fmt.Sprintf("9.%d.%d_%s_fragments_of_%d", 3+k, i+1, kind.name, f), op: kind.op, size: n, frag: f, messages: 1})
		}
	}
	for k, kind := range kinds {
		for i, c := range []int{64, 128, 256, 512, 1024, 2048} {
			cases = append(cases, bigCase{name: fmt.Sprintf("9.%d.%d_%s_1MiB_in_writes_of_%d", 5+k, i+1, kind.name, c), op: kind.op, size: 1 << 20, chop: c, messages: 1})
		}
	}
	for k, kind := range kinds {
		for i, n := range []int{0, 16, 64, 256, 1024, 4096} {
			cases = append(cases, bigCase{name: fmt.Sprintf("9.%d.%d_%s_round_trips_of_%d", 7+k, i+1, kind.name, n), op: kind.op, size: n, messages: roundTrips()})
		}
	}
	return cases
}

// bigPayload is message i of a case: for text, Autobahn's repeated ASCII
// pattern with a multi-byte character in it (still valid UTF-8 when cut
// into fragments, which need not be valid alone); for binary, bytes of
// every value.
func bigPayload(op byte, n, i int) []byte {
	if op == opText {
		unit := fmt.Sprintf("BAsd7&jh23 κόσμε %d ", i%10)
		b := []byte(strings.Repeat(unit, n/len(unit)+1)[:n])
		for len(b) > 0 && !isValidUTF8Tail(b) {
			b[len(b)-1] = 'x' // a character cut at the end
		}
		return b
	}
	b := make([]byte, n)
	r := uint32(2463534242) + uint32(i)
	for j := range b {
		r ^= r << 13
		r ^= r >> 17
		r ^= r << 5
		b[j] = byte(r)
	}
	return b
}

// isValidUTF8Tail reports whether b does not end inside a multi-byte
// character.
func isValidUTF8Tail(b []byte) bool {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		switch {
		case c < 0x80:
			return true
		case c >= 0xc0: // a lead byte: the character needs more than k bytes?
			need := 2
			if c >= 0xe0 {
				need = 3
			}
			if c >= 0xf0 {
				need = 4
			}
			return k >= need
		}
	}
	return true
}

// runBigCase sends the case's messages and checks each echo.
func runBigCase(t *testing.T, ts *testServer, tc bigCase) {
	rc := openRaw(t, ts)
	deadline := time.Now().Add(time.Minute)
	_ = rc.nc.SetDeadline(deadline)
	start := time.Now()
	for i := range tc.messages {
		p := bigPayload(tc.op, tc.size, i)
		var wire []byte
		if tc.frag > 0 {
			wire = bytes.Join(zframes(tc.op, p, false, tc.frag), nil)
		} else {
			wire = frame(0x80|tc.op, p)
		}
		sent := make(chan struct{})
		go func() { // the echo may start before the last byte is sent
			defer close(sent)
			if tc.chop > 0 {
				for len(wire) > 0 {
					k := min(tc.chop, len(wire))
					if _, err := rc.nc.Write(wire[:k]); err != nil {
						return
					}
					wire = wire[k:]
				}
				return
			}
			_, _ = rc.nc.Write(wire)
		}()
		got, ok := rc.readMessage(nil)
		<-sent
		if !ok {
			t.Fatalf("message %d: the stream ended before the echo", i)
		}
		if got.op != tc.op || got.payload != string(p) {
			t.Fatalf("message %d: echo %#x of %d bytes, want %#x of %d bytes (equal: %v)", i, got.op, len(got.payload), tc.op, len(p), got.payload == string(p))
		}
	}
	elapsed := time.Since(start)
	rc.closeRaw()
	t.Logf("%d message(s) of %d bytes echoed in %v", tc.messages, tc.size, elapsed.Round(time.Microsecond))
}

// startStreamEcho serves an echo with blitz.Serve and UpgradeStream: the
// second server the cases of sections 9 and 10 run against.
func startStreamEcho(t *testing.T, up *Upgrader) *testServer {
	t.Helper()
	rt := newRuntime(t)
	l, err := blitz.ListenTCP(rt.Handle(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if up == nil {
		up = &Upgrader{}
	}
	serveStreamsTo(t, rt, l, up, nil)
	return &testServer{rt: rt, addr: l.AddrPort().String(), up: up}
}

// bothServers runs f against an echo server of each kind, both with up
// (nil: the zero Upgrader): an httpserver Handler calling Upgrade, and
// blitz.Serve with UpgradeStream.
func bothServers(t *testing.T, up *Upgrader, f func(t *testing.T, ts *testServer)) {
	t.Run("Upgrade", func(t *testing.T) { f(t, startEcho(t, up)) })
	t.Run("UpgradeStream", func(t *testing.T) { f(t, startStreamEcho(t, up)) })
}

// Section 9: limits and performance.
func TestAutobahn9LimitsPerformance(t *testing.T) {
	bothServers(t, nil, func(t *testing.T, ts *testServer) {
		for _, tc := range section9Cases() {
			t.Run(tc.name, func(t *testing.T) { runBigCase(t, ts, tc) })
		}
	})
}

// Section 10: 10.1.1, a 64 KiB text message in fragments of 1,300 bytes.
func TestAutobahn10AutoFragmentation(t *testing.T) {
	bothServers(t, nil, func(t *testing.T, ts *testServer) {
		t.Run("10.1.1_text_64KiB_fragments_of_1300", func(t *testing.T) {
			runBigCase(t, ts, bigCase{op: opText, size: 65536, frag: 1300, messages: 1})
		})
	})
}
