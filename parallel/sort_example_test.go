package parallel_test

import (
	"cmp"
	"fmt"

	"github.com/blitz-go/blitz/parallel"
)

func ExampleSort() {
	s := []int{5, 2, 8, 1, 9}
	parallel.Sort(s)
	fmt.Println(s)
	parallel.SortDesc(s)
	fmt.Println(s)
	// Output:
	// [1 2 5 8 9]
	// [9 8 5 2 1]
}

func ExampleSortFunc() {
	s := []string{"banana", "kiwi", "apple"}
	parallel.SortFunc(s, func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	fmt.Println(s)
	// Output: [kiwi apple banana]
}

func ExampleSortByKey() {
	type task struct {
		name string
		prio int
	}
	tasks := []task{{"b", 2}, {"a", 1}, {"c", 2}, {"d", 1}}
	// Stable: tasks of equal priority keep their order.
	parallel.SortByKey(tasks, func(t task) int { return t.prio })
	fmt.Println(tasks)
	parallel.SortByKeyDesc(tasks, func(t task) int { return t.prio })
	fmt.Println(tasks)
	// Output:
	// [{a 1} {d 1} {b 2} {c 2}]
	// [{b 2} {c 2} {a 1} {d 1}]
}
