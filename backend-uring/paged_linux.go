//go:build linux

package uring

import "sync/atomic"

// Tables indexed by descriptor number or slot are paged: fixed pages of
// pageSize entries, made when first written, behind a slice of page
// pointers. A table grows a page at a time (no doubling of the entries, so
// no slack beyond the last page) and a high descriptor number costs only
// its own page. Guarded by whatever guards their owner (the backend's mu).

const (
	pageBits = 10
	pageSize = 1 << pageBits
)

// fdIndex maps a descriptor number (or any non-negative index) to an
// int32, 0 where never set. It counts each page's non-zero entries, so
// that compact can drop the pages that hold nothing any more: after a
// burst of connections that now sit idle, the index of the records in
// flight on each descriptor is all zeros, a page per 1,024 descriptors.
type fdIndex struct {
	pages []*[pageSize]int32
	live  []uint16 // live[p]: the non-zero entries of pages[p]
	// emptied is set when a page's last non-zero entry is cleared: the
	// owner's cue to compact later. May be nil.
	emptied *atomic.Bool
}

// get returns i's value, 0 if none.
func (x *fdIndex) get(i int) int32 {
	p := i >> pageBits
	if i < 0 || p >= len(x.pages) || x.pages[p] == nil {
		return 0
	}
	return x.pages[p][i&(pageSize-1)]
}

// set stores v as i's value (i >= 0).
func (x *fdIndex) set(i int, v int32) {
	p := i >> pageBits
	if p >= len(x.pages) {
		if v == 0 {
			return
		}
		x.pages = append(x.pages, make([]*[pageSize]int32, p+1-len(x.pages))...)
		x.live = append(x.live, make([]uint16, p+1-len(x.live))...)
	}
	pg := x.pages[p]
	if pg == nil {
		if v == 0 {
			return
		}
		pg = new([pageSize]int32)
		x.pages[p] = pg
	}
	e := &pg[i&(pageSize-1)]
	switch {
	case *e == 0 && v != 0:
		x.live[p]++
	case *e != 0 && v == 0:
		x.live[p]--
		if x.live[p] == 0 && x.emptied != nil && !x.emptied.Load() {
			x.emptied.Store(true)
		}
	}
	*e = v
}

// compact drops the pages whose entries are all 0 and returns how many
// it dropped. The next set on one makes it again.
func (x *fdIndex) compact() int {
	n := 0
	for p, pg := range x.pages {
		if pg != nil && x.live[p] == 0 {
			x.pages[p] = nil
			n++
		}
	}
	return n
}
