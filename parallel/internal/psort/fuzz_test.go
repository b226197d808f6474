package psort

import "testing"

// FuzzSort sorts byte strings (each byte a key, so ties abound) with every
// sorter, through both joins, with small cut-offs so that inputs of a few
// dozen bytes already run the parallel paths. Run it with
// go test -fuzz FuzzSort ./internal/psort/.
func FuzzSort(f *testing.F) {
	f.Add([]byte("pattern-defeating quicksort and a parallel merge sort"))
	f.Add([]byte{})
	f.Add([]byte{255, 254, 253, 252, 251, 250, 249, 248, 247, 246, 245, 244, 243, 242, 241, 240,
		239, 238, 237, 236, 235, 234, 233, 232, 231, 230, 229, 228, 227, 226, 225, 224, 223})
	f.Add(make([]byte, 100))
	smallCutoffs(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		in := make([]pair, len(data))
		for i, b := range data {
			in[i] = pair{int(b), i}
		}
		e := expect(in)
		for _, j := range testJoins {
			checkAll(t, j.join, e)
		}
	})
}
