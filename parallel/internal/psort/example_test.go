package psort_test

import (
	"cmp"
	"fmt"
	"sync"

	"github.com/blitz-go/blitz/parallel/internal/psort"
)

// goJoin is a stand-in for the pool's join: b on a new goroutine, a on the
// caller's. (It does not forward panics, which the pool's join does.)
func goJoin(c struct{}, a, b func(struct{})) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); b(c) }()
	a(c)
	wg.Wait()
}

func Example() {
	people := []struct {
		name string
		age  int
	}{{"Alice", 30}, {"Bob", 25}, {"Carol", 30}, {"Dave", 25}}
	psort.SortStable(struct{}{}, goJoin, people, func(a, b struct {
		name string
		age  int
	}) int {
		return cmp.Compare(a.age, b.age)
	})
	fmt.Println(people)

	nums := []float64{3, 1, 2}
	psort.SortOrdered(struct{}{}, goJoin, nums)
	fmt.Println(nums)
	// Output:
	// [{Bob 25} {Dave 25} {Alice 30} {Carol 30}]
	// [1 2 3]
}
