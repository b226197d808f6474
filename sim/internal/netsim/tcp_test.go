package netsim

import (
	"bytes"
	"errors"
	"net/netip"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/blitz-go/blitz/backend"
)

func TestConnectSendRecvClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 1)
		cfd, sfd := connectPair(t, a, b)
		la, _ := a.be.LocalAddr(cfd)
		pb, _ := b.be.PeerAddr(sfd)
		if la != pb || la.IP.Addr() != a.h.Addr() {
			t.Fatalf("client local %v, server's peer %v", la, pb)
		}
		msg := bytes.Repeat([]byte("hello "), 1000)
		a.send(cfd, msg)
		got, err := b.recvAll(sfd, len(msg))
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("recv %d bytes, %v", len(got), err)
		}
		// Half-close: b reads 0 after the data in flight, and can still send.
		a.send(cfd, []byte("tail"))
		if err := a.be.Shutdown(cfd, backend.ShutdownWrite); err != nil {
			t.Fatal(err)
		}
		got, err = b.recvAll(sfd, -1)
		if err != nil || string(got) != "tail" {
			t.Fatalf("after half-close: %q, %v", got, err)
		}
		b.send(sfd, []byte("reply"))
		if got, _ := a.recvAll(cfd, 5); string(got) != "reply" {
			t.Fatalf("reply %q", got)
		}
		if c := a.run(&backend.Op{Kind: backend.KindSend, FD: cfd, Buf: []byte("x")}); !errors.Is(c.Err, backend.ErrBrokenPipe) {
			t.Fatalf("send after shutdown: %v", c.Err)
		}
		// Close: a pending recv on a completes with 0 after b's FIN.
		rd := &backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 10)}
		a.submit(rd)
		b.runOK(&backend.Op{Kind: backend.KindClose, FD: sfd})
		if c := a.next(rd); c.Err != nil || c.N != 0 {
			t.Fatalf("recv after peer close: %d, %v", c.N, c.Err)
		}
		a.runOK(&backend.Op{Kind: backend.KindClose, FD: cfd})
	})
}

func TestTrySendRecvAndPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 2)
		cfd, sfd := connectPair(t, a, b)
		if _, err := b.be.TryRecv(sfd, make([]byte, 8)); !errors.Is(err, backend.ErrWouldBlock) {
			t.Fatalf("TryRecv on empty: %v", err)
		}
		if n, err := a.be.TrySend(cfd, []byte("abc")); n != 3 || err != nil {
			t.Fatalf("TrySend: %d, %v", n, err)
		}
		b.runOK(&backend.Op{Kind: backend.KindPoll, FD: sfd, Events: backend.EventIn})
		buf := make([]byte, 8)
		if n, err := b.be.TryRecv(sfd, buf); n != 3 || err != nil || string(buf[:3]) != "abc" {
			t.Fatalf("TryRecv: %d, %v", n, err)
		}
	})
}

func TestSendBufferBackpressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 3)
		cfd, _ := connectPair(t, a, b)
		// Nobody reads on b: the sender fills b's receive buffer and its
		// own send buffer, then blocks.
		big := make([]byte, 1<<20)
		total := 0
		for {
			n, err := a.be.TrySend(cfd, big)
			if errors.Is(err, backend.ErrWouldBlock) {
				a.pump(10 * time.Millisecond) // let segments arrive
				if n, err = a.be.TrySend(cfd, big); errors.Is(err, backend.ErrWouldBlock) {
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
		if want := defaultSendBuffer + defaultRecvBuffer; total != want {
			t.Fatalf("sent %d before blocking, want %d", total, want)
		}
	})
}

func TestRefusedAndUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, _ := twoHosts(t, 4)
		fd := a.socket(backend.Stream)
		start := time.Now()
		c := a.run(&backend.Op{Kind: backend.KindConnect, FD: fd, Addr: addr("10.0.0.2", 81)})
		if !errors.Is(c.Err, backend.ErrConnRefused) || !errors.Is(c.Err, syscall.ECONNREFUSED) {
			t.Fatalf("connect: %v", c.Err)
		}
		if el := time.Since(start); el < 2*DefaultMinLatency || el > 2*DefaultMaxLatency+time.Microsecond {
			t.Fatalf("refused after %v", el)
		}
		if v, _ := a.be.Option(fd, backend.OptError); v != int(syscall.ECONNREFUSED) {
			t.Fatalf("SO_ERROR %d", v)
		}
		fd2 := a.socket(backend.Stream)
		c = a.run(&backend.Op{Kind: backend.KindConnect, FD: fd2, Addr: addr("10.9.9.9", 80)})
		if !errors.Is(c.Err, backend.ErrUnreachable) {
			t.Fatalf("connect to nowhere: %v", c.Err)
		}
	})
}

func TestLoopback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, _ := twoHosts(t, 5)
		l := a.listen(8080)
		acc := &backend.Op{Kind: backend.KindAccept, FD: l, Flags: backend.Multishot}
		a.submit(acc)
		for i := range 3 {
			fd := a.socket(backend.Stream)
			a.runOK(&backend.Op{Kind: backend.KindConnect, FD: fd, Addr: addr("127.0.0.1", 8080)})
			c := a.next(acc)
			if c.Err != nil || !c.More() || c.Addr.IP.Addr() != netip.MustParseAddr("127.0.0.1") {
				t.Fatalf("accept %d: %+v", i, c)
			}
		}
		a.runOK(&backend.Op{Kind: backend.KindCancel, Target: acc})
		if c := a.next(acc); !errors.Is(c.Err, backend.ErrCanceled) || c.More() {
			t.Fatalf("final accept: %+v", c)
		}
	})
}

func TestPartitionHoldsThenHeals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, 6)
		cfd, sfd := connectPair(t, a, b)
		w.Partition([]string{"a"}, []string{"b"})
		a.send(cfd, []byte("during"))
		rd := &backend.Op{Kind: backend.KindRecv, FD: sfd, Buf: make([]byte, 64)}
		b.submit(rd)
		b.pump(5 * time.Second)
		if len(b.got[rd]) != 0 {
			t.Fatal("data crossed the partition")
		}
		// A connect across the partition times out.
		fd := a.socket(backend.Stream)
		w.SetConnectTimeout(2 * time.Second)
		start := time.Now()
		if c := a.run(&backend.Op{Kind: backend.KindConnect, FD: fd, Addr: addr("10.0.0.2", 80)}); !errors.Is(c.Err, backend.ErrTimedOut) {
			t.Fatalf("connect across partition: %v", c.Err)
		}
		if el := time.Since(start); el != 2*time.Second {
			t.Fatalf("timed out after %v", el)
		}
		w.Heal()
		if c := b.next(rd); c.Err != nil || string(rd.Buf[:c.N]) != "during" {
			t.Fatalf("after heal: %q, %v", rd.Buf[:c.N], c.Err)
		}
	})
}

func TestPartitionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, 7)
		cfd, sfd := connectPair(t, a, b)
		w.SetTCPTimeout(3 * time.Second)
		w.Partition([]string{"a"}, []string{"b"})
		a.send(cfd, []byte("x"))
		rd := &backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 8)}
		if c := a.run(rd); !errors.Is(c.Err, backend.ErrTimedOut) {
			t.Fatalf("recv on a timed-out connection: %v", c.Err)
		}
		w.Heal()
		// b learns by a reset when it next sends.
		b.send(sfd, []byte("y"))
		if c := b.run(&backend.Op{Kind: backend.KindRecv, FD: sfd, Buf: make([]byte, 8)}); !errors.Is(c.Err, backend.ErrConnReset) {
			t.Fatalf("b's recv: %v", c.Err)
		}
	})
}

func TestResetConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, 8)
		cfd, sfd := connectPair(t, a, b)
		rd := &backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 8)}
		a.submit(rd)
		w.ResetConnections("a", "b")
		if c := a.next(rd); !errors.Is(c.Err, backend.ErrConnReset) || !errors.Is(c.Err, syscall.ECONNRESET) {
			t.Fatalf("recv: %v", c.Err)
		}
		if c := b.run(&backend.Op{Kind: backend.KindSend, FD: sfd, Buf: []byte("z")}); !errors.Is(c.Err, backend.ErrConnReset) {
			t.Fatalf("send: %v", c.Err)
		}
		if c := b.run(&backend.Op{Kind: backend.KindSend, FD: sfd, Buf: []byte("z")}); !errors.Is(c.Err, backend.ErrBrokenPipe) {
			t.Fatalf("second send: %v", c.Err)
		}
	})
}

func TestCloseWithUnreadDataResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 9)
		cfd, sfd := connectPair(t, a, b)
		a.send(cfd, []byte("unread"))
		b.runOK(&backend.Op{Kind: backend.KindPoll, FD: sfd, Events: backend.EventIn})
		if err := b.be.CloseFD(sfd); err != nil {
			t.Fatal(err)
		}
		if c := a.run(&backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 8)}); !errors.Is(c.Err, backend.ErrConnReset) {
			t.Fatalf("recv: %v", c.Err)
		}
	})
}

func TestLinkedTimeoutAndCloseCancels(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 10)
		cfd, _ := connectPair(t, a, b)
		start := time.Now()
		c := a.run(&backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 8), Timeout: time.Second})
		if c.Err != backend.ErrTimeout || time.Since(start) != time.Second {
			t.Fatalf("linked timeout: %v after %v", c.Err, time.Since(start))
		}
		rd := &backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 8)}
		a.submit(rd)
		cl := &backend.Op{Kind: backend.KindClose, FD: cfd}
		a.submit(cl)
		a.pump(time.Second)
		if len(a.got[rd]) != 1 || a.got[rd][0].Err != backend.ErrCanceled || len(a.got[cl]) != 1 {
			t.Fatalf("close: recv %v, close %v", a.got[rd], a.got[cl])
		}
	})
}

func TestSelectBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 11)
		cfd, sfd := connectPair(t, a, b)
		if err := b.be.RegisterBufferGroup(7, 2, 16); err != nil {
			t.Fatal(err)
		}
		a.send(cfd, []byte("0123456789abcdefXYZ"))
		var got []byte
		var ids []uint16
		for len(got) < 19 {
			c := b.runOK(&backend.Op{Kind: backend.KindRecv, FD: sfd, Flags: backend.SelectBuffer, BufferGroup: 7})
			if c.Flags&backend.HasBuffer == 0 {
				t.Fatalf("no buffer: %+v", c)
			}
			got = append(got, b.be.Buffer(7, c.BufferID)[:c.N]...)
			ids = append(ids, c.BufferID)
		}
		if string(got) != "0123456789abcdefXYZ" {
			t.Fatalf("got %q", got)
		}
		a.send(cfd, []byte("more"))
		if c := b.run(&backend.Op{Kind: backend.KindRecv, FD: sfd, Flags: backend.SelectBuffer, BufferGroup: 7}); !errors.Is(c.Err, backend.ErrNoBuffers) {
			t.Fatalf("empty group: %+v", c)
		}
		for _, id := range ids {
			if err := b.be.ReleaseBuffer(7, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.be.ReleaseBuffer(7, ids[0]); !errors.Is(err, backend.ErrInvalid) {
			t.Fatalf("double release: %v", err)
		}
	})
}

func TestBandwidth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, a, b := twoHosts(t, 12)
		cfd, sfd := connectPair(t, a, b)
		const size = 1 << 20
		const bw = 10 << 20 // 10 MiB/s: 100 ms for 1 MiB
		w.SetBandwidth(bw)
		start := time.Now()
		data := make([]byte, size)
		go func() { // the sender, in the bubble: its own node
			sn := newNode(t, a.h)
			sn.send(cfd, data)
		}()
		got, err := b.recvAll(sfd, size)
		if err != nil || len(got) != size {
			t.Fatalf("recv %d, %v", len(got), err)
		}
		el := time.Since(start)
		want := time.Duration(size) * time.Second / bw
		if el < want || el > want+10*time.Millisecond {
			t.Fatalf("1 MiB took %v, want about %v", el, want)
		}
	})
}

func TestCrashSilentThenReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 13)
		cfd, _ := connectPair(t, a, b)
		bl := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}
		b.submit(bl)
		b.h.Crash()
		if c := b.next(bl); !errors.Is(c.Err, backend.ErrClosed) {
			t.Fatalf("op of crashed backend: %v", c.Err)
		}
		if _, err := b.be.Wait(b.out, 0); !errors.Is(err, backend.ErrClosed) {
			t.Fatalf("Wait after crash: %v", err)
		}
		a.send(cfd, []byte("to the dead"))
		rd := &backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 8)}
		a.submit(rd)
		a.pump(time.Second)
		if len(a.got[rd]) != 0 {
			t.Fatal("a learned of a silent crash")
		}
		b.h.Restart()
		if c := a.next(rd); !errors.Is(c.Err, backend.ErrConnReset) {
			t.Fatalf("after restart: %v", c.Err)
		}
		nb := newNode(t, b.h)
		if nb.be == b.be {
			t.Fatal("Restart kept the backend")
		}
		nb.listen(80) // the port is free again
	})
}

func TestKillResetsPeers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, b := twoHosts(t, 14)
		cfd, _ := connectPair(t, a, b)
		b.h.Kill()
		if c := a.run(&backend.Op{Kind: backend.KindRecv, FD: cfd, Buf: make([]byte, 8)}); !errors.Is(c.Err, backend.ErrConnReset) {
			t.Fatalf("recv: %v", c.Err)
		}
		fd := a.socket(backend.Stream)
		if c := a.run(&backend.Op{Kind: backend.KindConnect, FD: fd, Addr: addr("10.0.0.2", 80)}); !errors.Is(c.Err, backend.ErrConnRefused) {
			t.Fatalf("connect to killed host: %v", c.Err)
		}
	})
}

func TestBackendCloseAndWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, _ := twoHosts(t, 15)
		op := &backend.Op{Kind: backend.KindTimeout, Timeout: time.Hour}
		a.submit(op)
		done := make(chan int)
		go func() {
			n, _ := a.be.Wait(make([]backend.Completion, 4), -1)
			done <- n
		}()
		synctest.Wait()
		_ = a.be.Wake()
		if n := <-done; n != 0 {
			t.Fatalf("woken Wait returned %d", n)
		}
		if err := a.be.Close(); err != nil {
			t.Fatal(err)
		}
		if c := a.next(op); c.Err != backend.ErrCanceled {
			t.Fatalf("after Close: %v", c.Err)
		}
		if _, err := a.be.Wait(a.out, -1); !errors.Is(err, backend.ErrClosed) {
			t.Fatalf("Wait: %v", err)
		}
		if err := a.be.Submit(&backend.Op{Kind: backend.KindNop}); !errors.Is(err, backend.ErrClosed) {
			t.Fatalf("Submit: %v", err)
		}
		if _, err := a.be.Socket(backend.FamilyUnix, backend.Stream); err == nil {
			t.Fatal("unix socket")
		}
	})
}
