//go:build linux

package uring

import (
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestFDIndex: values across page boundaries and at a large descriptor
// number are kept, unset ones read 0, clearing never makes a page, and a
// high number makes only its own page.
func TestFDIndex(t *testing.T) {
	var x fdIndex
	idx := []int{0, 1, pageSize - 1, pageSize, pageSize + 1, 3*pageSize + 5, maxListedFD - 1}
	for _, i := range idx {
		if x.get(i) != 0 {
			t.Fatalf("index %d: %d before set", i, x.get(i))
		}
	}
	x.set(maxListedFD-10, 0)
	if len(x.pages) != 0 {
		t.Fatalf("clearing an unset index made %d page slots", len(x.pages))
	}
	for k, i := range idx {
		x.set(i, int32(k+1))
	}
	for k, i := range idx {
		if got := x.get(i); got != int32(k+1) {
			t.Fatalf("index %d: %d, want %d", i, got, k+1)
		}
	}
	if x.get(-1) != 0 || x.get(2*pageSize) != 0 || x.get(maxListedFD+pageSize) != 0 {
		t.Fatal("an unset index reads non-zero")
	}
	made := 0
	for _, p := range x.pages {
		if p != nil {
			made++
		}
	}
	if made != 4 { // pages 0, 1, 3 and the last
		t.Fatalf("%d pages made, want 4", made)
	}
	for _, i := range idx {
		x.set(i, 0)
		if x.get(i) != 0 {
			t.Fatalf("index %d: not cleared", i)
		}
	}
}

// TestFDIndexCompact: compact drops exactly the pages whose entries are
// all zero again, reports the first clear that empties a page, and the
// entries of the pages it keeps are untouched.
func TestFDIndexCompact(t *testing.T) {
	var emptied atomic.Bool
	x := fdIndex{emptied: &emptied}
	for i := range 4 * pageSize {
		x.set(i, int32(i+1))
	}
	x.set(pageSize, 7) // an overwrite does not count twice
	for i := pageSize; i < 2*pageSize; i++ {
		x.set(i, 0)
		if i < 2*pageSize-1 && emptied.Load() {
			t.Fatalf("emptied set while page 1 still holds %d entries", 2*pageSize-1-i)
		}
	}
	if !emptied.Load() {
		t.Fatal("page 1 emptied without a report")
	}
	x.set(3*pageSize+1, 0) // page 3 keeps the rest
	if n := x.compact(); n != 1 {
		t.Fatalf("compact dropped %d pages, want 1", n)
	}
	if x.pages[1] != nil || x.pages[0] == nil || x.pages[3] == nil {
		t.Fatal("compact dropped the wrong pages")
	}
	for i := range 4 * pageSize {
		want := int32(i + 1)
		if i >= pageSize && i < 2*pageSize || i == 3*pageSize+1 {
			want = 0
		}
		if got := x.get(i); got != want {
			t.Fatalf("index %d: %d after compact, want %d", i, got, want)
		}
	}
	x.set(pageSize+3, 9)
	if x.get(pageSize+3) != 9 || x.live[1] != 1 {
		t.Fatalf("a dropped page made again: %d, live %d", x.get(pageSize+3), x.live[1])
	}
	if n := x.compact(); n != 0 {
		t.Fatalf("compact dropped %d pages with entries", n)
	}
}

// TestArmTable: slots are made a page at a time, freed slots are reused
// (last freed first) with a new generation, records pack fd, generation
// and group losslessly, and each lists exactly the armed slots.
func TestArmTable(t *testing.T) {
	if n := unsafe.Sizeof(armRec{}); n != 16 {
		t.Fatalf("armRec is %d bytes, want 16", n)
	}
	var tab armTable
	n := 2*pageSize + 3
	gens := make([]uint32, n)
	for i := range n {
		slot, gen := tab.alloc()
		if slot != int32(i) || gen == 0 {
			t.Fatalf("alloc %d: slot %d gen %d", i, slot, gen)
		}
		gens[i] = gen
		r := tab.rec(slot)
		fd, group := int32(maxListedFD-1-i), uint16(0xffff-i)
		r.key, r.x = uint64(1)<<55|uint64(i), packArm(fd, gen, group)
		if r.fd() != fd || r.gen() != gen || r.group() != group {
			t.Fatalf("slot %d: unpacked fd %d gen %d group %d, want %d %d %d", i, r.fd(), r.gen(), r.group(), fd, gen, group)
		}
	}
	if len(tab.recs) != 3 || tab.live != n {
		t.Fatalf("%d pages, %d live; want 3, %d", len(tab.recs), tab.live, n)
	}
	freed := []int32{5, pageSize, int32(n - 1)}
	for _, s := range freed {
		tab.release(s)
		if tab.rec(s).gen() != 0 {
			t.Fatalf("slot %d: generation %d after release", s, tab.rec(s).gen())
		}
	}
	seen := 0
	tab.each(func(slot int32, r *armRec) {
		if r.gen() != gens[slot] || r.key != uint64(1)<<55|uint64(slot) {
			t.Fatalf("each: slot %d has gen %d key %#x", slot, r.gen(), r.key)
		}
		seen++
	})
	if seen != n-len(freed) {
		t.Fatalf("each listed %d, want %d", seen, n-len(freed))
	}
	for k := len(freed) - 1; k >= 0; k-- {
		slot, gen := tab.alloc()
		if slot != freed[k] {
			t.Fatalf("alloc reused slot %d, want %d", slot, freed[k])
		}
		if gen == gens[slot] || gen == 0 {
			t.Fatalf("slot %d reused with generation %d (was %d)", slot, gen, gens[slot])
		}
	}
	if slot, _ := tab.alloc(); slot != int32(n) {
		t.Fatalf("alloc after reuse: slot %d, want %d", slot, n)
	}
	if len(tab.recs) != 3 || tab.live != n+1 {
		t.Fatalf("%d pages, %d live; want 3, %d", len(tab.recs), tab.live, n+1)
	}
}
