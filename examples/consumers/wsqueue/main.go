// Command wsqueue uses the work-stealing queue alone: an owner pushes, a thief steals half.
package main

import (
	"fmt"
	"os"

	"github.com/blitz-go/blitz/wsqueue"
)

type job struct{ id int }

func main() {
	owner, stealer := wsqueue.New[job]()
	for i := range 8 {
		owner.Push(&job{i}, nil)
	}
	thief, _ := wsqueue.New[job]()
	first := stealer.StealInto(thief)
	stolen := 1 + thief.Len()
	if first == nil || stolen != 4 || owner.Len() != 4 {
		fmt.Println("unexpected: stole", stolen, "left", owner.Len())
		os.Exit(1)
	}
	fmt.Printf("ok: wsqueue (stole %d of 8, the first is job %d)\n", stolen, first.id)
}
