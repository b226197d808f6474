package backend

import (
	"strconv"
	"testing"
)

// TestLimitRW: a buffer longer than MaxRW is cut to it, others are kept.
func TestLimitRW(t *testing.T) {
	if strconv.IntSize == 32 {
		t.Skip("a buffer longer than MaxRW does not fit a 32-bit address space")
	}
	big := make([]byte, MaxRW+100) // never touched: costs address space only
	if got := LimitRW(big); len(got) != MaxRW || &got[0] != &big[0] {
		t.Errorf("LimitRW of %d bytes: %d bytes", len(big), len(got))
	}
	small := big[:10]
	if got := LimitRW(small); len(got) != 10 {
		t.Errorf("LimitRW of 10 bytes: %d bytes", len(got))
	}
	if got := LimitRW(big[:MaxRW]); len(got) != MaxRW {
		t.Errorf("LimitRW of MaxRW bytes: %d bytes", len(got))
	}
}

// TestLimitVec: LimitVec keeps MaxIOV buffers and MaxRW bytes, shortening
// the buffer that crosses the limit in a copy of the slice.
func TestLimitVec(t *testing.T) {
	one := []byte{1}
	many := make([][]byte, MaxIOV+500)
	for i := range many {
		many[i] = one
	}
	if got := LimitVec(many); len(got) != MaxIOV || &got[0] != &many[0] {
		t.Errorf("LimitVec of %d buffers: %d", len(many), len(got))
	}
	few := many[:3]
	if got := LimitVec(few); len(got) != 3 || &got[0] != &few[0] {
		t.Errorf("LimitVec of 3 buffers: %d", len(got))
	}
	if strconv.IntSize == 32 {
		return
	}
	big := make([]byte, MaxRW+100)
	a, c := make([]byte, 10), make([]byte, 10)
	in := [][]byte{a, big[:MaxRW-5], c}
	got := LimitVec(in)
	if len(got) != 2 || len(got[0]) != 10 || len(got[1]) != MaxRW-10 || &got[1][0] != &big[0] {
		t.Errorf("LimitVec of 10+(MaxRW-5)+10 bytes: %d buffers", len(got))
	}
	if len(in[1]) != MaxRW-5 || len(in) != 3 {
		t.Errorf("LimitVec modified its argument")
	}
	exact := [][]byte{a, big[:MaxRW-10]}
	if got := LimitVec(exact); len(got) != 2 || len(got[1]) != MaxRW-10 || &got[0] != &exact[0] {
		t.Errorf("LimitVec of exactly MaxRW bytes changed them")
	}
	if got := LimitVec([][]byte{big}); len(got) != 1 || len(got[0]) != MaxRW {
		t.Errorf("LimitVec of one %d-byte buffer: %d buffers", len(big), len(got))
	}
}
