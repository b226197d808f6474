package blitz

import (
	"sync"
	"testing"
)

// TestArmTable: keys across page boundaries find their sockets once; a
// stale key (taken already, or of a slot reused since) finds nothing; freed
// slots are reused before new ones are made; concurrent adders and takers
// each get back exactly their own sockets.
func TestArmTable(t *testing.T) {
	var tab armTable
	n := 2*armPageSize + 3
	socks := make([]netFD, n)
	keys := make([]uint64, n)
	for i := range socks {
		keys[i] = tab.add(&socks[i])
		if uint32(keys[i]) != uint32(i) {
			t.Fatalf("add %d: slot %d", i, uint32(keys[i]))
		}
	}
	if len(tab.pages) != 3 {
		t.Fatalf("%d pages, want 3", len(tab.pages))
	}
	if tab.take(uint64(n)+5) != nil || tab.take(keys[0]+1<<32) != nil {
		t.Fatal("a key never given found a socket")
	}
	for _, i := range []int{0, armPageSize - 1, armPageSize, n - 1} {
		if got := tab.take(keys[i]); got != &socks[i] {
			t.Fatalf("take key of %d: wrong socket", i)
		}
		if tab.take(keys[i]) != nil {
			t.Fatalf("take key of %d twice: found a socket", i)
		}
	}
	re := tab.add(&socks[1])
	if uint32(re) != uint32(n-1) || re == keys[n-1] {
		t.Fatalf("add after frees: key %#x, want slot %d with a new generation (old key %#x)", re, n-1, keys[n-1])
	}
	if tab.take(keys[n-1]) != nil {
		t.Fatal("the stale key of a reused slot found a socket")
	}
	if tab.take(re) != &socks[1] {
		t.Fatal("the reused slot's key: wrong socket")
	}
	if len(tab.pages) != 3 || tab.n != uint32(n) {
		t.Fatalf("%d pages, %d slots; want 3, %d", len(tab.pages), tab.n, n)
	}

	var wg sync.WaitGroup
	var tab2 armTable
	for g := range 4 {
		wg.Go(func() {
			mine := make([]netFD, armPageSize)
			for round := range 3 {
				ks := make([]uint64, len(mine))
				for i := range mine {
					ks[i] = tab2.add(&mine[i])
				}
				for i := range mine {
					if tab2.take(ks[i]) != &mine[i] {
						t.Errorf("goroutine %d round %d: key %d found another socket", g, round, i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
