package netsim

import (
	"bytes"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/blitz-go/blitz/backend"
)

// open opens name on n through KindOpenAt.
func (n *node) open(name string, flags backend.OpenFlags) (backend.FD, error) {
	n.t.Helper()
	c := n.run(&backend.Op{Kind: backend.KindOpenAt, File: &backend.FileArgs{Path: name, OpenFlags: flags, Perm: 0o644}})
	return c.FD, c.Err
}

func (n *node) write(fd backend.FD, off int64, data string) {
	n.t.Helper()
	n.runOK(&backend.Op{Kind: backend.KindWrite, FD: fd, Buf: []byte(data), Offset: off})
}

func (n *node) fsync(fd backend.FD) {
	n.t.Helper()
	n.runOK(&backend.Op{Kind: backend.KindFsync, FD: fd})
}

const rwc = backend.OpenRead | backend.OpenWrite | backend.OpenCreate

func TestDiskDurability(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, _ := twoHosts(t, 31)
		fd, err := a.open("/data/log", rwc)
		if err != nil {
			t.Fatal(err)
		}
		a.write(fd, -1, "synced;")
		a.fsync(fd)
		a.write(fd, -1, "lost")
		nosync, _ := a.open("/data/tmp", rwc)
		a.write(nosync, 0, "gone")
		if _, err := a.open("/data/log", rwc|backend.OpenExclusive); !errors.Is(err, backend.ErrFileExists) {
			t.Fatalf("exclusive: %v", err)
		}
		st := &backend.FileArgs{}
		a.runOK(&backend.Op{Kind: backend.KindStatx, FD: fd, File: st})
		if st.Stat.Size != 11 || st.Stat.Mode != 0o100644 {
			t.Fatalf("stat %+v", st.Stat)
		}
		a.h.Crash()
		a.h.Restart()
		a = newNode(t, a.h)
		if got, _ := a.h.Disk().ReadFile("/data/log"); string(got) != "synced;" {
			t.Fatalf("after crash: %q", got)
		}
		if _, err := a.open("/data/tmp", backend.OpenRead); !errors.Is(err, backend.ErrNotExist) {
			t.Fatalf("unsynced file: %v", err)
		}
		fd, _ = a.open("/data/log", backend.OpenRead|backend.OpenWrite)
		a.runOK(&backend.Op{Kind: backend.KindFtruncate, FD: fd, Offset: 3})
		buf := make([]byte, 16)
		if c := a.runOK(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: 0}); string(buf[:c.N]) != "syn" {
			t.Fatalf("after truncate: %q", buf[:c.N])
		}
		a.h.Kill() // a process crash keeps the page cache
		a.h.Restart()
		if got, _ := a.h.Disk().ReadFile("/data/log"); string(got) != "syn" {
			t.Fatalf("after kill: %q", got)
		}
	})
}

func TestDiskTornWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, _ := twoHosts(t, 32)
		a.h.Disk().SetFaults(DiskFaults{TornWrite: 1})
		torn := 0
		for i := range 20 {
			fd, _ := a.open("/f", rwc|backend.OpenTruncate)
			a.fsync(fd)
			for range 4 {
				a.write(fd, -1, "0123456789")
			}
			a.h.Crash()
			a.h.Restart()
			a = newNode(t, a.h)
			got, _ := a.h.Disk().ReadFile("/f")
			if len(got) > 40 || !bytes.Equal(got, bytes.Repeat([]byte("0123456789"), 4)[:len(got)]) {
				t.Fatalf("round %d: not a prefix: %q", i, got)
			}
			if len(got) > 0 {
				torn++
			}
		}
		if torn == 0 {
			t.Fatal("no torn write kept anything")
		}
	})
}

func TestDiskReadErrorsAndBitFlips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, a, _ := twoHosts(t, 33)
		data := bytes.Repeat([]byte{0x55}, 64)
		a.h.Disk().WriteFile("/img", data)
		a.h.Disk().SetFaults(DiskFaults{ReadError: 0.3, BitFlip: 0.3})
		fd, err := a.open("/img", backend.OpenRead)
		if err != nil {
			t.Fatal(err)
		}
		var eio, flips int
		for range 200 {
			buf := make([]byte, 64)
			c := a.run(&backend.Op{Kind: backend.KindRead, FD: fd, Buf: buf, Offset: 0})
			switch {
			case errors.Is(c.Err, backend.ErrIO):
				eio++
			case c.Err != nil:
				t.Fatal(c.Err)
			case !bytes.Equal(buf, data):
				flips++
			}
		}
		if eio < 30 || eio > 90 || flips < 20 || flips > 70 {
			t.Fatalf("%d EIO, %d flipped reads of 200", eio, flips)
		}
		if got, _ := a.h.Disk().ReadFile("/img"); !bytes.Equal(got, data) {
			t.Fatal("a bit flip changed the stored data")
		}
	})
}
