package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// TestTakeoverCancelledEndsOldReader: a read that takes over a
// MessageReader's unfinished message and is cancelled while it skips the
// rest has already ended the old reader: the old reader reads io.EOF, not
// the bytes after the skipped part (a message with a hole in it), and the
// connection's next read still skips to the next message.
func TestTakeoverCancelledEndsOldReader(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, nc := pooledConn(t, rt)
	_, _ = nc.Write(frame(0x02, []byte("AAAA"))) // binary, not final
	_, r1, err := c.NextReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if n, err := r1.Read(buf); err != nil || string(buf[:n]) != "AAAA" {
		t.Fatalf("first part: %q, %v", buf[:n], err)
	}
	_, _ = nc.Write(frame(0x00, []byte("BBBB"))) // continuation: skipped by the takeover
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	_, _, err = c.NextReader(short)
	cancelShort()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("NextReader with no message to come: %v, want the deadline", err)
	}
	_, _ = nc.Write(frame(0x80, []byte("CCCC"))) // the message's last frame
	if rest, err := io.ReadAll(r1); len(rest) != 0 || err != nil {
		t.Fatalf("the taken-over reader read %q, %v; want nothing and io.EOF", rest, err)
	}
	_, _ = nc.Write(frame(0x81, []byte("next")))
	typ, data, err := c.Read(ctx)
	if err != nil || typ != TextMessage || string(data) != "next" {
		t.Fatalf("next message: %v %q %v", typ, data, err)
	}
	_ = c.CloseNow()
}

// TestWholeMessageReaderOutlivesCloseNow: a MessageReader of a message that
// arrived whole keeps its payload when another goroutine closes the
// connection, though the read buffer it came in goes back to the runtime's
// pool and other connections receive into it.
func TestWholeMessageReaderOutlivesCloseNow(t *testing.T) {
	rt := newRuntime(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const msg = "hello world, conn one"
	c1, nc1 := pooledConn(t, rt)
	_, _ = nc1.Write(frame(0x82, []byte(msg)))
	_, r, err := c1.NextReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 6)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	_ = c1.CloseNow()
	c2, nc2 := pooledConn(t, rt)
	rounds := 300
	if testing.Short() {
		rounds = 100
	}
	other := []byte("XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX")
	for i := range rounds {
		_, _ = nc2.Write(frame(0x82, other))
		if _, _, err := c2.Read(ctx); err != nil {
			t.Fatal(i, err)
		}
	}
	rest, err := io.ReadAll(r)
	if err != nil || string(head)+string(rest) != msg {
		t.Fatalf("the reader read %q, %v after CloseNow; want %q", string(head)+string(rest), err, msg)
	}
	_ = c2.CloseNow()
}

// TestReadAfterCloseNow: once the user has closed the connection, a read
// that starts fails with ErrClosed (not as if the peer had gone), with and
// without a MessageReader left inside its message, and that reader's next
// Read does too.
func TestReadAfterCloseNow(t *testing.T) {
	rt := newRuntime(t)
	for _, left := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, nc := pooledConn(t, rt)
		var r1 *MessageReader
		if left {
			_, _ = nc.Write(frame(0x02, []byte("AAAA")))
			var err error
			if _, r1, err = c.NextReader(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := r1.Read(make([]byte, 2)); err != nil {
				t.Fatal(err)
			}
		}
		_ = c.CloseNow()
		if _, _, err := c.Read(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("left=%v: Read after CloseNow: %v, want ErrClosed", left, err)
		}
		if _, _, err := c.NextReader(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("left=%v: NextReader after CloseNow: %v, want ErrClosed", left, err)
		}
		if r1 != nil {
			if _, err := r1.Read(make([]byte, 2)); !errors.Is(err, ErrClosed) {
				t.Errorf("the left reader's Read after CloseNow: %v, want ErrClosed", err)
			}
		}
		cancel()
	}
}

// TestReaderRacesClose: a MessageReader reads a fragmented message in
// small Reads while another goroutine closes the connection (CloseNow or
// CloseContext) at a random moment: the close returns within its
// timeout, the reader ends with an error or io.EOF and never hangs, and
// nothing races (run under -race).
func TestReaderRacesClose(t *testing.T) {
	rt := newRuntime(t)
	rounds := 200 // a CloseContext waits out closeTimeout: the raw peer never answers
	if testing.Short() {
		rounds = 20
	}
	var msg []byte
	msg = append(msg, frame(0x02, []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))...)
	for range 20 {
		msg = append(msg, frame(0x00, []byte("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"))...)
	}
	for round := range rounds {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, nc := pooledConn(t, rt)
		c.cfg.closeTimeout = 300 * time.Millisecond
		_, _ = nc.Write(msg)
		done := make(chan error, 1)
		go func() {
			_, r, err := c.NextReader(ctx)
			if err != nil {
				done <- err
				return
			}
			buf := make([]byte, 7)
			for {
				if _, err := r.Read(buf); err != nil {
					done <- err
					return
				}
			}
		}()
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
		start := time.Now()
		if round%2 == 0 {
			_ = c.CloseNow()
		} else {
			_ = c.CloseContext(ctx, StatusNormalClosure, "")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("round %d: close took %v", round, d)
		}
		_ = nc.Close()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("round %d: the reader ended without an error", round)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the reader hangs", round)
		}
		cancel()
	}
}

// TestErrClosedMatchesNetErrClosed: ErrClosed, and the errors that wrap
// it, match net.ErrClosed as well, as a closed net.Conn's errors do.
func TestErrClosedMatchesNetErrClosed(t *testing.T) {
	if !errors.Is(ErrClosed, net.ErrClosed) || !errors.Is(ErrClosed, ErrClosed) {
		t.Fatal("ErrClosed does not match itself and net.ErrClosed")
	}
	wrapped := fmt.Errorf("read: %w", ErrClosed)
	if !errors.Is(wrapped, net.ErrClosed) {
		t.Fatal("a wrapped ErrClosed does not match net.ErrClosed")
	}
	if errors.Is(ErrProtocol, net.ErrClosed) {
		t.Fatal("the match goes too far")
	}
	if ErrClosed.Error() != "websocket: connection closed" {
		t.Fatalf("message %q", ErrClosed.Error())
	}
}
