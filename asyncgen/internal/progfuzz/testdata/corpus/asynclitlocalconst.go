package progfuzzrun

import "github.com/blitz-go/blitz/future"

// From seed 40: an async literal using the enclosing function's local constants (iota group named tmp, new): undefined in the hoisted function

//blitz:async
func asynclitlocalconst[N ~int](e *Env, n N) (int, error) {
	y := future.Await(e.Val((int(n) + int(n)) % 97))
	e.Note("s1 y=%d", y)
	const (
		tmp = iota + 0
		new
	)
	e.Note("s2 tmp=%d", tmp)
	e.Note("s3 new=%d", new)
	var x2 = (tmp) % 97
	e.Note("s4 x2=%d", x2)
	for x := 0; x < future.Await(e.Val(3))%4; x++ {
		e.Note("s6 x=%d", x)
		for aw1 := range "日本" {
			e.Note("s9 aw1=%d", aw1)
			p := &y
			e.Note("s10 *p=%d", *p)
		}
		for _, aw1 := range []int{1, 2, 3} {
			e.Note("s12 aw1=%d", aw1)
			if y+new != 6 {
				e.Note("s13 break")
				break
			}
			if ((5)%3)%2 == 0 {
				return new - new + (6)%2, nil
			}
		}
		func() {
		}()
	}
	future.Await(future.AsyncDo(func() {
		e.Note("s14 async literal %d", (new+tmp)*4)
		func() {
			switch {
			case (y)*4 > (7)*2:
				y = (new) % 7
				e.Note("s16 y=%d", y)
			case (y)%2 == 1:
				ch := make(chan int, 3)
				e.Note("s17 len(ch)=%d", len(ch))
			}
		}()
		arr := [3]int{((new)*4 - x2 - x2) % 97, (((0 + 6) % 97) % 3) % 7, (new) % 97}
		e.Note("s18 arr=%v", arr)
	}))
	var aw1 = future.Await(e.Val((5 - 6 + x2) % 97))
	e.Note("s19 aw1=%d", aw1)
	func() {
	}()
	for state, r20 := range "日本" {
		e.Note("s22 state=%d", state)
		e.Note("s23 r20=%d", r20)
		func() {
			var y = ((state - aw1) * 5) % 7
			e.Note("s24 y=%d", y)
		}()
	}
	return (9)%6 + aw1 + x2, nil
}
