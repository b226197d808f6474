//go:build windows

package iocp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/blitz-go/blitz/backend"
	"golang.org/x/sys/windows"
)

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
}

// TestAcceptConnectRoundTrip: AcceptEx and ConnectEx connect two sockets of
// each family (ConnectEx binding the unbound client itself); the accept
// reports the client's address; data flows both ways.
func TestAcceptConnectRoundTrip(t *testing.T) {
	for _, family := range []backend.Family{backend.FamilyInet4, backend.FamilyInet6} {
		t.Run(family.String(), func(t *testing.T) {
			x := newTB(t)
			ln, a := x.listener(family)
			c, err := x.b.Socket(family, backend.Stream)
			if err != nil {
				t.Fatal(err)
			}
			defer x.b.CloseFD(c)
			acc := &backend.Op{Kind: backend.KindAccept, FD: ln}
			x.submit(acc)
			if cc := x.run(&backend.Op{Kind: backend.KindConnect, FD: c, Addr: a}); cc.Err != nil {
				t.Fatalf("connect: %v", cc.Err)
			}
			ac := x.wait(acc)
			if ac.Err != nil {
				t.Fatalf("accept: %v", ac.Err)
			}
			defer x.b.CloseFD(ac.FD)
			local, err := x.b.LocalAddr(c)
			if err != nil {
				t.Fatal(err)
			}
			if ac.Addr != local {
				t.Errorf("accept peer %v, client local address %v", ac.Addr, local)
			}
			if peer, err := x.b.PeerAddr(ac.FD); err != nil || peer != local {
				t.Errorf("PeerAddr of the accepted socket: %v, %v; want %v", peer, err, local)
			}
			for _, dir := range [][2]backend.FD{{c, ac.FD}, {ac.FD, c}} {
				msg := []byte("hello " + family.String())
				if sc := x.run(&backend.Op{Kind: backend.KindSend, FD: dir[0], Buf: msg}); sc.Err != nil || sc.N != len(msg) {
					t.Fatalf("send: %d, %v", sc.N, sc.Err)
				}
				buf := make([]byte, 64)
				rc := x.run(&backend.Op{Kind: backend.KindRecv, FD: dir[1], Buf: buf})
				if rc.Err != nil || string(buf[:rc.N]) != string(msg) {
					t.Fatalf("recv: %q, %v", buf[:rc.N], rc.Err)
				}
			}
		})
	}
}

// TestConnectRefused: ConnectEx to a port nobody listens on.
func TestConnectRefused(t *testing.T) {
	x := newTB(t)
	ln, a := x.listener(backend.FamilyInet4)
	x.b.CloseFD(ln)
	c, _ := x.b.Socket(backend.FamilyInet4, backend.Stream)
	defer x.b.CloseFD(c)
	cc := x.run(&backend.Op{Kind: backend.KindConnect, FD: c, Addr: a})
	wantErr(t, "connect to a closed port", cc.Err, backend.ErrConnRefused)
	var be *backend.Error
	if !errors.As(cc.Err, &be) {
		t.Fatalf("%v is not a *backend.Error", cc.Err)
	}
	if _, ok := be.Sys.(windows.Errno); !ok {
		t.Errorf("Sys is %T, want windows.Errno", be.Sys)
	}
}

// TestMultishotAccept: one submission, several connections, each with More;
// a cancel ends it with a final ErrCanceled.
func TestMultishotAccept(t *testing.T) {
	x := newTB(t)
	ln, a := x.listener(backend.FamilyInet4)
	acc := &backend.Op{Kind: backend.KindAccept, FD: ln, Flags: backend.Multishot}
	x.submit(acc)
	for i := range 3 {
		c, _ := x.b.Socket(backend.FamilyInet4, backend.Stream)
		defer x.b.CloseFD(c)
		if cc := x.run(&backend.Op{Kind: backend.KindConnect, FD: c, Addr: a}); cc.Err != nil {
			t.Fatal(cc.Err)
		}
		ac := x.wait(acc)
		if ac.Err != nil || !ac.More() {
			t.Fatalf("accept %d: %v, More %v", i, ac.Err, ac.More())
		}
		x.b.CloseFD(ac.FD)
	}
	cn := x.run(&backend.Op{Kind: backend.KindCancel, Target: acc})
	if cn.Err != nil {
		t.Fatalf("cancel: %v", cn.Err)
	}
	fc := x.wait(acc)
	if fc.More() || !errors.Is(fc.Err, backend.ErrCanceled) {
		t.Fatalf("final accept completion: %v, More %v", fc.Err, fc.More())
	}
}

// TestCancelRace: a recv cancelled while data may be arriving completes
// exactly once, with ErrCanceled or its data; the cancel with nil or
// ErrNotFound.
func TestCancelRace(t *testing.T) {
	x := newTB(t)
	c, s := x.pair()
	rounds := 200
	if testing.Short() {
		rounds = 50
	}
	got := 0
	for i := range rounds {
		buf := make([]byte, 8)
		recv := &backend.Op{Kind: backend.KindRecv, FD: s, Buf: buf, UserData: uint64(i)}
		x.submit(recv)
		var send *backend.Op
		if i%2 == 0 {
			send = &backend.Op{Kind: backend.KindSend, FD: c, Buf: []byte{byte(i)}}
			x.submit(send)
		}
		cancel := &backend.Op{Kind: backend.KindCancel, Target: recv}
		x.submit(cancel)
		rc := x.wait(recv)
		cc := x.wait(cancel)
		switch {
		case rc.Err == nil:
			if rc.N != 1 {
				t.Fatalf("round %d: recv N %d", i, rc.N)
			}
			got++
		case errors.Is(rc.Err, backend.ErrCanceled):
		default:
			t.Fatalf("round %d: recv error %v", i, rc.Err)
		}
		if cc.Err != nil && !errors.Is(cc.Err, backend.ErrNotFound) {
			t.Fatalf("round %d: cancel error %v", i, cc.Err)
		}
		if send != nil {
			if sc := x.wait(send); sc.Err != nil {
				t.Fatalf("round %d: send %v", i, sc.Err)
			}
		}
	}
	// Whatever the cancelled recvs left unread is still there.
	x.drainSocket(s, rounds/2-got)
	x.expectNone()
}

// drainSocket receives exactly n one-byte messages' worth of bytes.
func (x *tb) drainSocket(fd backend.FD, n int) {
	x.t.Helper()
	for n > 0 {
		buf := make([]byte, n)
		rc := x.run(&backend.Op{Kind: backend.KindRecv, FD: fd, Buf: buf, Timeout: 2 * time.Second})
		if rc.Err != nil || rc.N == 0 {
			x.t.Fatalf("draining %d bytes: %d, %v", n, rc.N, rc.Err)
		}
		n -= rc.N
	}
}

// expectNone checks that no stray completion is left.
func (x *tb) expectNone() {
	x.t.Helper()
	n, err := x.b.Wait(x.out, 20*time.Millisecond)
	if err != nil || n != 0 || len(x.got) != 0 {
		x.t.Fatalf("stray completions: %d, %v, %v", n, err, x.got)
	}
}

// TestCancelNotFound: cancelling a finished op or a foreign one.
func TestCancelNotFound(t *testing.T) {
	x := newTB(t)
	nop := &backend.Op{Kind: backend.KindNop}
	x.run(nop)
	cc := x.run(&backend.Op{Kind: backend.KindCancel, Target: nop})
	wantErr(t, "cancel of a finished op", cc.Err, backend.ErrNotFound)
	cc = x.run(&backend.Op{Kind: backend.KindCancel, Target: &backend.Op{Kind: backend.KindNop}})
	wantErr(t, "cancel of an op never submitted", cc.Err, backend.ErrNotFound)
}

// TestLinkedTimeout: a recv with a linked timeout and no data completes once
// with ErrTimeout; one whose data comes in time with the data; a timeout op
// fires, and a cancelled one says ErrCanceled.
func TestLinkedTimeout(t *testing.T) {
	x := newTB(t)
	c, s := x.pair()
	start := time.Now()
	rc := x.run(&backend.Op{Kind: backend.KindRecv, FD: s, Buf: make([]byte, 8), Timeout: 50 * time.Millisecond})
	wantErr(t, "recv with an expired linked timeout", rc.Err, backend.ErrTimeout)
	if d := time.Since(start); d < 45*time.Millisecond {
		t.Errorf("timed out after %v", d)
	}
	x.run(&backend.Op{Kind: backend.KindSend, FD: c, Buf: []byte("x")})
	rc = x.run(&backend.Op{Kind: backend.KindRecv, FD: s, Buf: make([]byte, 8), Timeout: time.Second})
	if rc.Err != nil || rc.N != 1 {
		t.Fatalf("recv in time: %d, %v", rc.N, rc.Err)
	}
	tm := x.run(&backend.Op{Kind: backend.KindTimeout, Timeout: 10 * time.Millisecond})
	wantErr(t, "timeout op", tm.Err, backend.ErrTimeout)
	long := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}
	x.submit(long)
	if cc := x.run(&backend.Op{Kind: backend.KindCancel, Target: long}); cc.Err != nil {
		t.Fatal(cc.Err)
	}
	wantErr(t, "cancelled timeout", x.wait(long).Err, backend.ErrCanceled)
	x.expectNone()
}

// TestTimerWakesBlockedWait: a timer armed while Wait blocks forever wakes
// it when due.
func TestTimerWakesBlockedWait(t *testing.T) {
	x := newTB(t)
	done := make(chan backend.Completion, 1)
	go func() {
		out := make([]backend.Completion, 1)
		n, _ := x.b.Wait(out, -1)
		if n == 1 {
			done <- out[0]
		}
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	x.submit(&backend.Op{Kind: backend.KindTimeout, Timeout: 20 * time.Millisecond})
	select {
	case c := <-done:
		wantErr(t, "timeout", c.Err, backend.ErrTimeout)
	case <-time.After(2 * time.Second):
		x.b.Wake()
		<-done
		t.Fatal("a blocked Wait missed a new timer")
	}
}

// TestCloseWithOpsInFlight: Close cancels recvs, an accept, a poll and a
// timeout; each completes once, then Wait says ErrClosed; the descriptors
// stay usable for CloseFD.
func TestCloseWithOpsInFlight(t *testing.T) {
	x := newTB(t)
	c, s := x.pair()
	ln, _ := x.listener(backend.FamilyInet4)
	ops := []*backend.Op{
		{Kind: backend.KindRecv, FD: s, Buf: make([]byte, 8)},
		{Kind: backend.KindRecv, FD: c, Buf: make([]byte, 8), Timeout: time.Hour},
		{Kind: backend.KindAccept, FD: ln, Flags: backend.Multishot},
		{Kind: backend.KindPoll, FD: s, Events: backend.EventIn},
		{Kind: backend.KindTimeout, Timeout: time.Hour},
	}
	for _, op := range ops {
		x.submit(op)
	}
	if err := x.b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	seen := map[*backend.Op]int{}
	for {
		n, err := x.b.Wait(x.out, -1)
		if err != nil {
			wantErr(t, "Wait after the drain", err, backend.ErrClosed)
			break
		}
		for _, c := range x.out[:n] {
			seen[c.Op]++
			wantErr(t, c.Op.Kind.String()+" after Close", c.Err, backend.ErrCanceled)
		}
	}
	for _, op := range ops {
		if seen[op] != 1 {
			t.Errorf("%s completed %d times", op.Kind, seen[op])
		}
	}
	wantErr(t, "Submit after Close", x.b.Submit(&backend.Op{Kind: backend.KindNop}), backend.ErrClosed)
	wantErr(t, "second Close", x.b.Close(), backend.ErrClosed)
}

// TestCloseOpCancelsFirst: a KindClose on a descriptor with a pending recv
// completes after the recv's ErrCanceled.
func TestCloseOpCancelsFirst(t *testing.T) {
	x := newTB(t)
	_, s := x.pair()
	recv := &backend.Op{Kind: backend.KindRecv, FD: s, Buf: make([]byte, 8)}
	x.submit(recv)
	cl := &backend.Op{Kind: backend.KindClose, FD: s}
	x.submit(cl)
	var order []*backend.Op
	for len(order) < 2 {
		n, err := x.b.Wait(x.out, time.Second)
		if err != nil || n == 0 {
			t.Fatalf("Wait: %d, %v", n, err)
		}
		for _, c := range x.out[:n] {
			order = append(order, c.Op)
			if c.Op == recv {
				wantErr(t, "recv on a closed descriptor", c.Err, backend.ErrCanceled)
			} else if c.Err != nil {
				t.Fatalf("close: %v", c.Err)
			}
		}
	}
	if order[0] != recv {
		t.Fatal("the close completed before the recv it cancelled")
	}
	wantErr(t, "CloseFD after KindClose", x.b.CloseFD(s), backend.ErrClosed)
}

// TestGCSafety: recvs whose buffers only their Ops reference (and the Ops
// only the backend) survive collections while in flight: the data lands in
// them and the completions hand them back intact.
func TestGCSafety(t *testing.T) {
	x := newTB(t)
	c, s := x.pair()
	const n = 16
	for i := range n {
		x.submit(&backend.Op{Kind: backend.KindRecv, FD: s, Buf: make([]byte, 4), UserData: uint64(i)})
	}
	for range 3 {
		runtime.GC()
		// Churn the heap so that freed memory would be reused.
		junk := make([][]byte, 256)
		for i := range junk {
			junk[i] = make([]byte, 4)
		}
		runtime.KeepAlive(junk)
	}
	msg := make([]byte, 4*n)
	for i := range msg {
		msg[i] = byte(i/4) + 1
	}
	x.submit(&backend.Op{Kind: backend.KindSend, FD: c, Buf: msg})
	got := 0
	for got < n {
		nn, err := x.b.Wait(x.out, 2*time.Second)
		if err != nil || nn == 0 {
			t.Fatalf("Wait: %d, %v after %d recvs", nn, err, got)
		}
		for _, cp := range x.out[:nn] {
			if cp.Op.Kind != backend.KindRecv {
				continue
			}
			got++
			if cp.Err != nil || cp.N != 4 {
				t.Fatalf("recv %d: %d, %v", cp.UserData, cp.N, cp.Err)
			}
			want := byte(cp.UserData) + 1
			for _, v := range cp.Op.Buf {
				if v != want {
					t.Fatalf("recv %d holds %v, want all %d (recvs out of order or memory reused)", cp.UserData, cp.Op.Buf, want)
				}
			}
		}
	}
}

// TestPoll: EventIn by the zero-byte read, without consuming the data;
// EventOut is refused.
func TestPoll(t *testing.T) {
	x := newTB(t)
	c, s := x.pair()
	poll := &backend.Op{Kind: backend.KindPoll, FD: s, Events: backend.EventIn}
	x.submit(poll)
	x.submit(&backend.Op{Kind: backend.KindSend, FD: c, Buf: []byte("abc")})
	pc := x.wait(poll)
	if pc.Err != nil || backend.Events(pc.N)&backend.EventIn == 0 {
		t.Fatalf("poll: %d, %v", pc.N, pc.Err)
	}
	buf := make([]byte, 8)
	if rc := x.run(&backend.Op{Kind: backend.KindRecv, FD: s, Buf: buf}); rc.N != 3 {
		t.Fatalf("recv after poll: %d, %v", rc.N, rc.Err)
	}
	err := x.b.Submit(&backend.Op{Kind: backend.KindPoll, FD: s, Events: backend.EventOut})
	wantErr(t, "poll for EventOut", err, backend.ErrUnsupported)
}

// TestSelectBufferIdle: a SelectBuffer recv holds no buffer while it waits
// (every buffer stays free), takes one when data comes, and gives it back
// at the end of stream.
func TestSelectBufferIdle(t *testing.T) {
	x := newTB(t)
	c, s := x.pair()
	if err := x.b.RegisterBufferGroup(1, 1, 16); err != nil {
		t.Fatal(err)
	}
	r1 := &backend.Op{Kind: backend.KindRecv, FD: s, Flags: backend.SelectBuffer, BufferGroup: 1}
	x.submit(r1)
	time.Sleep(10 * time.Millisecond)
	if _, _, ok := x.b.takeBuffer(1); !ok {
		t.Fatal("an idle SelectBuffer recv holds the group's only buffer")
	} else {
		x.b.putBuffer(1, 0)
	}
	x.submit(&backend.Op{Kind: backend.KindSend, FD: c, Buf: []byte("hey")})
	rc := x.wait(r1)
	if rc.Err != nil || rc.Flags&backend.HasBuffer == 0 || string(x.b.Buffer(1, rc.BufferID)[:rc.N]) != "hey" {
		t.Fatalf("select recv: %d, %v, flags %v", rc.N, rc.Err, rc.Flags)
	}
	if err := x.b.ReleaseBuffer(1, rc.BufferID); err != nil {
		t.Fatal(err)
	}
	x.b.Shutdown(c, backend.ShutdownWrite)
	rc = x.run(&backend.Op{Kind: backend.KindRecv, FD: s, Flags: backend.SelectBuffer, BufferGroup: 1})
	if rc.Err != nil || rc.N != 0 || rc.Flags&backend.HasBuffer != 0 {
		t.Fatalf("end of stream: %d, %v, flags %v", rc.N, rc.Err, rc.Flags)
	}
	if _, _, ok := x.b.takeBuffer(1); !ok {
		t.Fatal("end of stream kept the buffer")
	}
}

// TestFileOffsets: ReadFile/WriteFile at OVERLAPPED offsets, Offset -1 at
// the kept position, end of file as N = 0, readv/writev across buffers.
// Uses a plain temporary file (Wine cannot remove t.TempDir's directory).
func TestFileOffsets(t *testing.T) {
	x := newTB(t)
	path := filepath.Join(os.TempDir(), fmt.Sprintf("iocp-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	fd, err := x.b.OpenFile(path, backend.OpenRead|backend.OpenWrite|backend.OpenCreate|backend.OpenExclusive, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer removeFile(t, path)
	defer x.b.CloseFD(fd)
	w := func(op *backend.Op) backend.Completion {
		t.Helper()
		c := x.run(op)
		if c.Err != nil {
			t.Fatalf("%s: %v", op.Kind, c.Err)
		}
		return c
	}
	w(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("hello"), Offset: -1})
	w(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte(" world"), Offset: -1})
	w(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte("W"), Offset: 6})
	c := w(&backend.Op{Kind: backend.KindWritev, FD: fd, Bufs: [][]byte{[]byte("!"), nil, []byte("?")}, Offset: 11})
	if c.N != 2 {
		t.Fatalf("writev N %d", c.N)
	}
	a, b2 := make([]byte, 5), make([]byte, 20)
	c = w(&backend.Op{Kind: backend.KindReadv, FD: fd, Bufs: [][]byte{a, b2}, Offset: 0})
	if c.N != 13 || string(a)+string(b2[:8]) != "hello World!?" {
		t.Fatalf("readv: %d %q %q", c.N, a, b2[:8])
	}
	if c = w(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: a, Offset: 13}); c.N != 0 {
		t.Fatalf("read at the end: N %d", c.N)
	}
	_, err = x.b.OpenFile(path, backend.OpenRead|backend.OpenCreate|backend.OpenExclusive, 0o644)
	wantErr(t, "exclusive create of an existing file", err, backend.ErrFileExists)
	_, err = x.b.OpenFile(path+".absent", backend.OpenRead, 0)
	wantErr(t, "open of a missing file", err, backend.ErrNotExist)
}

// removeFile deletes path with DeleteFile (Go 1.26's os.Remove fails under
// Wine 8 with "Invalid function").
func removeFile(t *testing.T, path string) {
	p, _ := windows.UTF16PtrFromString(path)
	if err := windows.DeleteFile(p); err != nil {
		t.Errorf("DeleteFile %s: %v", path, err)
	}
}

// TestErrorMapping: the one conversion.
func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		errno windows.Errno
		want  error
	}{
		{windows.WSAECONNRESET, backend.ErrConnReset},
		{windows.ERROR_NETNAME_DELETED, backend.ErrConnReset},
		{windows.WSAECONNREFUSED, backend.ErrConnRefused},
		{windows.ERROR_CONNECTION_REFUSED, backend.ErrConnRefused},
		{windows.WSAEMFILE, backend.ErrTooManyFiles},
		{windows.WSAEADDRINUSE, backend.ErrAddrInUse},
		{windows.ERROR_FILE_NOT_FOUND, backend.ErrNotExist},
		{windows.ERROR_NOT_FOUND, backend.ErrNotFound},
		{windows.WSAESHUTDOWN, backend.ErrBrokenPipe},
		{windows.Errno(12345), backend.ErrIO},
	} {
		err := errnoError("recv", tc.errno)
		if !errors.Is(err, tc.want) || !errors.Is(err, tc.errno) {
			t.Errorf("%d: %v, want %v wrapping the code", tc.errno, err, tc.want)
		}
	}
	if err := errnoError("recv", windows.ERROR_OPERATION_ABORTED); err != backend.ErrCanceled {
		t.Errorf("ERROR_OPERATION_ABORTED: %v, want the bare ErrCanceled", err)
	}
}

// TestSubmitTwice: an op in flight is refused.
func TestSubmitTwice(t *testing.T) {
	x := newTB(t)
	op := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}
	x.submit(op)
	wantErr(t, "second Submit", x.b.Submit(op), backend.ErrInvalid)
	x.submit(&backend.Op{Kind: backend.KindCancel, Target: op})
	wantErr(t, "cancelled", x.wait(op).Err, backend.ErrCanceled)
	x.submit(op) // reusable after its final completion
	x.submit(&backend.Op{Kind: backend.KindCancel, Target: op})
	x.wait(op)
}
