//go:build linux

package uring

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
// int32, 0 where never set.
type fdIndex struct {
	pages []*[pageSize]int32
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
	}
	pg := x.pages[p]
	if pg == nil {
		if v == 0 {
			return
		}
		pg = new([pageSize]int32)
		x.pages[p] = pg
	}
	pg[i&(pageSize-1)] = v
}
