package progfuzzrun

import "github.com/blitz-go/blitz/future"

// From seed 135: an async literal declaring arr := [...]{... arr[1] ...}, shadowing the captured arr: no new variables on left side of :=

//blitz:async
func asynclitshadowcapture[N ~int](e *Env, n N) (res int, rerr error) {
	tmp := future.Await(e.Val((res) % 7))
	e.Note("s1 tmp=%d", tmp)
	arr := [3]int{((res + 8) % 97) % 97, (6) % 7, ((2) % 6) % 97}
	e.Note("s2 arr=%v", arr)
	var utf8, m3 = (tmp) % 97, (res + res + (6)%7) % 97
	e.Note("s4 utf8=%d", utf8)
	e.Note("s5 m3=%d", m3)
	var fns []func() int
	e.Note("s6 len(fns)=%d", len(fns))
	for _, fc7 := range fns {
		k8 := future.Await(e.Val(fc7()))
		e.Note("s9 call %d", k8)
	}
	m := map[int]int{4: ((tmp) % 7) % 7}
	e.Note("s10 m=%v", m)
	q := &m3
	e.Note("s11 *q=%d", *q)
	arr12 := [3]int{(*q) % 97, ((tmp + tmp) % 5) % 97, (0) % 97}
	e.Note("s13 arr12=%v", arr12)
	{
		xs := []int{(((m3)%3 + m3 - utf8) % 97) % 7}
		e.Note("s14 xs=%v", xs)
		res = future.Await(e.Val((m3 + res) % 97))
		e.Note("s15 res=%d", res)
	}
	defer e.Note("s16 deferred %d %v", (res)*2, !(((*q+tmp)%97)%2 == 0 || rerr != nil && ((utf8+*q)%97)%2 == 0))
	ch := make(chan int, 4)
	e.Note("s17 len(ch)=%d", len(ch))
	var c Counter
	e.Note("s18 c=%d", c.n)
	v := future.Await(e.Val((m3 - res - (arr12[1]+5)%97) % 7))
	e.Note("s19 v=%d", v)
	defer func(k int) { e.Note("s20 deferred k=%d now %d", k, v) }(v)
	var aw1 int
	e.Note("s21 aw1=%d", aw1)
	if len(ch) > 0 {
		e.Note("s22 received %d", <-ch)
	}
	g := N((8) % 7)
	e.Note("s23 g=%d", g)
	for f := 0; f < (0%3+3)%4; f += future.Await(e.Val(1)) {
		e.Note("s25 f=%d", f)
		if ((1)%2)%2 == 1 && rerr != nil {
			e.Note("s26 break")
			break
		}
		if cx := future.Await(e.Val((((arr[0]) * 5) * 5) % 97)); cx != cx+1 && rerr != nil && !((!((f)%7 > (f)%3) || (*q)%4 >= (utf8+6)%97) || rerr == nil) {
			e.Note("s27 cx=%d", cx)
			for k := 0; k < 1; k++ {
				e.Note("s29 k=%d", k)
				res += future.Await(e.Val((((5) * 4) * 4) % 97))
				e.Note("s30 res=%d", res)
				m3 -= future.Await(e.Val(((tmp + 9 - aw1) % 97) % 97))
				e.Note("s31 m3=%d", m3)
			}
			cx %= 9
			e.Note("s32 cx=%d", cx)
			future.Await(future.AsyncDo(func() {
				e.Note("s33 async literal %d", (6)*2)
				utf8 = future.Await(e.Val((9 + 1 - cx + m3) % 97))
				e.Note("s34 utf8=%d", utf8)
				arr := [3]int{((v) % 6) % 97, ((2 + arr[1] + (6)*3) % 97) % 97, (((tmp) * 3) % 2) % 97}
				e.Note("s35 arr=%v", arr)
				ys := []int{}
				e.Note("s36 ys=%v", ys)
			}))
			xs := []int{}
			e.Note("s37 xs=%v", xs)
			defer func() {
				e.Note("s38 deferred %d", m3)
				ys := []int{(((8) * 4) % 3) % 97, (((utf8 + 6) % 97) % 2) % 7}
				e.Note("s39 ys=%v", ys)
			}()
		}
		if rerr != nil && (future.Await(e.Val(((arr[0]-7+m3)%97)%7))+future.Await(e.Val(((m3)%5)%97)))%97 == (*q)*4 {
		}
	}
	return m3, nil
}
