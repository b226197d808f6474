package backendtest

import (
	"errors"
	"testing"

	"github.com/blitz-go/blitz/backend"
)

var optionTests = []test{
	{name: "OptionsRoundTrip", fn: testOptions},
	{name: "OptionErrors", fn: testOptionErrors},
	{name: "ResourceErrors", fn: testResourceErrors},
}

// optionCase is one SetOption value and what Option must read back.
type optionCase struct {
	opt   backend.Option
	name  string
	value int
	check func(got int) bool
}

func equals(v int) func(int) bool  { return func(got int) bool { return got == v } }
func nonZero(got int) bool         { return got != 0 }
func atLeast(v int) func(int) bool { return func(got int) bool { return got >= v } }

// testOptions: SetOption then Option reads the value back (buffers may be
// rounded or doubled by the kernel).
func testOptions(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	client, _ := h.pair()
	cases := []optionCase{
		{backend.OptNoDelay, "NoDelay", 1, nonZero},
		{backend.OptNoDelay, "NoDelay", 0, equals(0)},
		{backend.OptKeepAlive, "KeepAlive", 30, equals(30)},
		{backend.OptKeepAlive, "KeepAlive", 0, equals(0)},
		{backend.OptLinger, "Linger", 5, equals(5)},
		{backend.OptLinger, "Linger", 0, equals(0)},
		{backend.OptLinger, "Linger", -1, equals(-1)},
		{backend.OptReuseAddr, "ReuseAddr", 1, nonZero},
		{backend.OptReuseAddr, "ReuseAddr", 0, equals(0)},
		{backend.OptRecvBuffer, "RecvBuffer", 65536, atLeast(32768)},
		{backend.OptSendBuffer, "SendBuffer", 65536, atLeast(32768)},
	}
	for _, tc := range cases {
		if err := h.b.SetOption(client, tc.opt, tc.value); err != nil {
			checkErr(t, "SetOption", err)
			t.Errorf("SetOption(%s, %d): %v", tc.name, tc.value, err)
			continue
		}
		got, err := h.b.Option(client, tc.opt)
		if err != nil {
			t.Errorf("Option(%s): %v", tc.name, err)
			continue
		}
		if !tc.check(got) {
			t.Errorf("Option(%s) after SetOption(%d) = %d", tc.name, tc.value, got)
		}
	}
	if v, err := h.b.Option(client, backend.OptError); err != nil || v != 0 {
		t.Errorf("Option(OptError) on a healthy socket = %d, %v", v, err)
	}
	u, _ := h.udpSocket(loopback4)
	if err := h.b.SetOption(u, backend.OptBroadcast, 1); err != nil {
		t.Errorf("SetOption(Broadcast): %v", err)
	} else if v, err := h.b.Option(u, backend.OptBroadcast); err != nil || v == 0 {
		t.Errorf("Option(Broadcast) = %d, %v", v, err)
	}
	if err := h.b.SetOption(u, backend.OptReusePort, 1); err != nil && !errors.Is(err, backend.ErrUnsupported) {
		t.Errorf("SetOption(ReusePort): %v, want nil or ErrUnsupported", err)
	}
}

// testOptionErrors: unknown options and the read-only OptError are
// ErrInvalid.
func testOptionErrors(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	fd := h.socket(backend.FamilyInet4, backend.Stream)
	wantErr(t, "SetOption(OptError)", h.b.SetOption(fd, backend.OptError, 1), backend.ErrInvalid)
	wantErr(t, "SetOption(unknown)", h.b.SetOption(fd, 200, 1), backend.ErrInvalid)
	_, err := h.b.Option(fd, 200)
	wantErr(t, "Option(unknown)", err, backend.ErrInvalid)
}

// testResourceErrors: failures of the synchronous calls are sentinels in
// *backend.Error values.
func testResourceErrors(t *testing.T, nb NewFunc) {
	h := newHarness(t, nb)
	_, err := h.b.Socket(0, backend.Stream)
	wantOneOf(t, "Socket(bad family)", err, backend.ErrInvalid, backend.ErrUnsupported)
	_, err = h.b.Socket(backend.FamilyInet4, 0)
	wantOneOf(t, "Socket(bad type)", err, backend.ErrInvalid, backend.ErrUnsupported)
	a, _ := h.listen(loopback4)
	la := h.localAddr(a)
	b := h.socket(backend.FamilyInet4, backend.Stream)
	err = h.b.Bind(b, la)
	wantErr(t, "Bind to an address in use", err, backend.ErrAddrInUse)
	var be *backend.Error
	if !errors.As(err, &be) {
		t.Errorf("Bind error %T is no *backend.Error", err)
	}
	_, err = h.b.PeerAddr(b)
	wantErr(t, "PeerAddr of an unconnected socket", err, backend.ErrNotConnected)
	c := h.socket(backend.FamilyInet4, backend.Stream)
	h.bind(c, loopback4)
	c2 := h.run(&backend.Op{Kind: backend.KindRecv, FD: c, Buf: make([]byte, 1)})
	checkErr(t, "recv on an unconnected socket", c2.Err)
	if c2.Err == nil {
		t.Errorf("recv on an unconnected socket succeeded")
	}
}
