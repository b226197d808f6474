package progfuzzrun

import "github.com/blitz-go/blitz/future"

// From seed 106: future.Try assigned to captured variables in an async literal ((*x2), (*err) = ...): refused

//blitz:async
func asynclittrycapture[N ~int](e *Env, n N) int {
	x2 := future.Await(e.Val((int(n)) % 97))
	e.Note("s1 x2=%d", x2)
	x2 = future.Await(e.Val((int(n)) % 7))
	e.Note("s2 x2=%d", x2)
	defer func(k int) { e.Note("s3 deferred k=%d now %d", k, int(n)) }((x2)%7 + x2)
	{
		e.Note("s4 nested %d %d", 2-x2, ((future.Await(e.Val(((x2)*2)%7))+future.Await(e.Val(((x2+x2)%3)%7)))%97+future.Await(e.Val(((7+x2)%97+(int(n))*3)%7)))%97)
	}
	{
		c5 := 0
		for {
			c5++
			if c5 > (3%3+3)%4 {
				break
			}
			arr := [3]int{((x2) % 2) % 97, ((x2)%7 + x2 - int(n)) % 97, (c5) % 97}
			e.Note("s7 arr=%v", arr)
		}
		arr := [3]int{((1) * 2) % 97, (c5) % 97, (c5) % 7}
		e.Note("s8 arr=%v", arr)
	}
	future.Await(e.Val((7 - 2 + x2) % 7))
	ch := make(chan int, 2)
	e.Note("s9 len(ch)=%d", len(ch))
	for x2 = range 0 {
		e.Note("s11 x2=%d", x2)
		if _, err := future.Try(e.Fallible(((int(n) + x2) % 97) % 7)); err != nil {
			e.Note("s12 err=%v", err)
			future.Await(future.AsyncDo(func() {
				e.Note("s13 async literal %d", x2)
				if ((x2+x2)%97)%2 == 1 && ((x2)%5 >= x2 || x2-1 != (x2)%3) && (x2)%2 == 1 {
					panic("s14")
				}
				switch {
				case (x2)*5 < x2:
					x2, err = future.Try(e.Fallible((((x2) * 3) * 2) % 7))
					e.Note("s16 x2=%d", x2)
					e.Note("s17 err=%v", err)
					state := ((x2 - 5) % 7) % 7
					e.Note("s18 state=%d", state)
					var x = future.Await(e.Val((int(n) + x2 - state - state) % 7))
					e.Note("s19 x=%d", x)
					state += future.Await(e.Val((x) % 7))
					e.Note("s20 state=%d", state)
					fallthrough
				case future.Await(e.Val((x2-x2)%97))+(int(n))*3 > x2:
				case (x2)*5 < (x2)*4:
				default:
				}
			}))
			fn := func(p21 int) int {
				e.Note("s22 fn(%d)", p21)
				tmp2 := (p21) % 97
				e.Note("s23 tmp2=%d", tmp2)
				x2 += (x2 + x2 - tmp2) % 7
				e.Note("s24 x2=%d", x2)
				defer e.Note("s25 deferred %d %v", (int(n)+p21)%97-(tmp2+p21)%97, p21-8 < (tmp2)%6)
				return (p21)*4 + (5)%6
			}
			e.Note("s26 fn()=%d", fn(x2+x2))
			s := "日本"
			e.Note("s27 s=%q", s)
			arr := [3]int{x2, future.Await(e.Val(((6+(x2)*3)%97)%7)) + (x2)*4, ((1 - 9) * 5) % 97}
			e.Note("s28 arr=%v", arr)
		}
		var anyv any = "a\xffb"
		e.Note("s29 anyv=%v", anyv)
		var cnt Counter
		e.Note("s30 cnt=%d", cnt.n)
	}
	for f := range (7%3 + 3) % 4 {
		e.Note("s32 f=%d", f)
		c33 := 0
		for c33 < (int(n)%3+3)%4 {
			c33++
			{
				t := future.Await(e.Str(""))
				e.Note("s35 t=%q", t)
				{
				}
			}
		}
	}
	return (x2+x2)%97 + (5)%2
}
