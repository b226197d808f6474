package equiv

import (
	"errors"
	"fmt"
	"strings"

	"github.com/blitz-go/blitz/asyncgen/internal/equiv/hook"
	"github.com/blitz-go/blitz/future"
)

//go:generate go run ../../cmd/blitzgen

// ErrBig is what branch returns for a big value.
var ErrBig = errors.New("big")

//blitz:async
func sequence(e *Env, a int) int {
	x := future.Await(e.Val(a))
	e.Note("x=%d", x)
	y := future.Await(e.Val(x * 2))
	future.Await(e.Val(-1))
	return x + y
}

//blitz:async
func noResult(e *Env, n int) {
	future.Await(e.Val(n))
	e.Note("after %d", n)
	if n > 2 {
		return
	}
	e.Note("small")
}

//blitz:async
func branch(e *Env, n int) (int, error) {
	if n%2 == 0 {
		x := future.Await(e.Val(n + 1))
		if x > 7 {
			return 0, ErrBig
		}
		n += x
	} else if n%3 == 0 {
		y := future.Await(e.Val(n * 10))
		n = y
	} else {
		e.Note("neither")
	}
	z := future.Await(e.Val(n))
	return z, nil
}

//blitz:async
func loop(e *Env, n int) int {
	sum := 0
	for i := 0; i < n; i++ {
		if i == 3 {
			continue
		}
		v := future.Await(e.Val(i))
		if v > 6 {
			break
		}
		sum += v
		e.Note("i=%d sum=%d", i, sum)
	}
	return sum
}

//blitz:async
func countdown(e *Env, n int) int {
	steps := 0
	for n > 0 {
		n = future.Await(e.Val(n - 1))
		steps++
	}
	return steps
}

//blitz:async
func forever(e *Env, n int) (string, error) {
	var b strings.Builder
	for {
		s := future.Await(e.Str(strings.Repeat("a", n%3)))
		b.WriteString(s)
		n++
		if b.Len() > 5 {
			break
		}
	}
	return b.String(), nil
}

//blitz:async
func nested(e *Env, n int) int {
	total := 0
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := future.Await(e.Val(i * j))
			total += v
			if total > 20 {
				return total
			}
		}
		// A loop without awaits stays as it is, break and all.
		for k := 0; ; k++ {
			if k > i {
				break
			}
			total++
		}
	}
	return total
}

//blitz:async
func shadow(e *Env, n int) int {
	x := n
	if x > 1 {
		x := future.Await(e.Val(x * 3))
		e.Note("inner x=%d", x)
	}
	y := future.Await(e.Val(x))
	return x + y
}

//blitz:async
func decls(e *Env, n int) (int, error) {
	var acc []int
	var s, t = "a", 2
	var unused, w int
	for i := range n {
		acc = append(acc, i)
	}
	v := future.Await(e.Val(len(acc)))
	w = v + t
	_ = unused
	e.Note("%s %v", s, acc)
	if w > 100 {
		return 0, errors.New("too big")
	}
	return w, nil
}

//blitz:async
func closures(e *Env, n int) int {
	base := 10
	add := func(v int) int { return base + v }
	v := future.Await(e.Val(n))
	base++
	return add(v)
}

//blitz:async
func multi(e *Env, n int) (int, error) {
	if n > 3 {
		return split(n)
	}
	_ = future.Await(e.Val(n))
	return split(n + 1)
}

func split(n int) (int, error) {
	if n%2 == 0 {
		return n / 2, nil
	}
	return 0, errors.New("odd")
}

//blitz:async
func panicsAfterAwait(e *Env, n int) int {
	v := future.Await(e.Val(n))
	if v >= 0 {
		panic("boom") // the line the //line test expects
	}
	return v
}

//blitz:async
func perIteration(e *Env, n int) int {
	total := 0
	for i := 0; i < n; i++ {
		var acc int
		if r := i % 3; r == 0 {
			v := future.Await(e.Val(i))
			acc += v + r
		} else if r == 1 {
			acc++
		}
		w := future.Await(e.Val(acc))
		total += w
		e.Note("i=%d acc=%d", i, acc)
	}
	return total
}

//blitz:async
func switches(e *Env, n int) (int, error) {
	v := future.Await(e.Val(n))
	switch {
	case v > 5:
		return v, nil
	case v > 2:
		return 0, ErrBig
	default:
		return -v, nil
	}
}

//blitz:async
func rangeInt(e *Env, n int) int {
	total := 0
	for i := range n {
		if i == 2 {
			continue
		}
		v := future.Await(e.Val(i))
		total += v
		n-- // the loop ran over n's first value
	}
	for range 2 {
		future.Await(e.Val(0))
	}
	return total + n
}

//blitz:async
func rangeSlice(e *Env, n int) int {
	s := []int{n, n + 1, n + 2, n + 3}
	total := 0
	for i, x := range s {
		s = append(s, x) // not seen by the loop
		s[len(s)-1-i] = 0
		v := future.Await(e.Val(x))
		if v > 9 {
			break
		}
		total += v * i
		e.Note("i=%d x=%d", i, x)
	}
	return total + len(s)
}

//blitz:async
func rangeString(e *Env, n int) (string, error) {
	s := "héllo, 世界\xff!"[n%3:]
	var b strings.Builder
	var last int
	for i, r := range s {
		t := future.Await(e.Str(string(r)))
		b.WriteString(t)
		e.Note("%d:%q", i, r)
		last = i
	}
	for i := range s {
		future.Await(e.Val(i))
		last += i
	}
	return b.String() + strings.Repeat("x", last%5), nil
}

//blitz:async
func rangeArray(e *Env, n int) int {
	a := [3]int{n, 2 * n, 3 * n}
	total := 0
	var i, x int
	for i, x = range a {
		a[2] = 100 // not seen: the loop ranges over a copy
		v := future.Await(e.Val(x))
		total += v + i
	}
	for j := range a {
		future.Await(e.Val(j))
		total += j
	}
	return total + a[2] + i + x
}

//blitz:async
func switchAwait(e *Env, n int) (int, error) {
	total := 0
	for i := range n {
		switch k := i % 4; k {
		case 0, 1:
			v := future.Await(e.Val(i))
			total += v
			if v == 4 {
				break
			}
			total++
			fallthrough
		case 2:
			e.Note("two or fell")
			if i == 6 {
				continue
			}
			w := future.Await(e.Val(k))
			total += w
		default:
			if i > 6 {
				return total, ErrBig
			}
		}
		e.Note("after %d", i)
	}
	switch {
	case n > 5:
		future.Await(e.Val(0))
		total *= 2
	case n > 3:
		total *= 3
	}
	return total, nil
}

//blitz:async
func opAssignAndReturn(e *Env, n int) int {
	x := n
	x += future.Await(e.Val(3))
	x *= future.Await(e.Val(2))
	x -= future.Await(e.Val(n))
	e.Note("x=%d", x)
	if x > 10 {
		return future.Await(e.Val(x * 100))
	}
	return future.Await(e.Val(x))
}

//blitz:async
func labels(e *Env, n int) int {
	total := 0
outer:
	for i := 0; i < n; i++ {
	inner:
		for j, c := range "abcd" {
			v := future.Await(e.Val(i + j))
			switch {
			case i == 7 && j == 0:
				e.Note("break outer at i=%d", i)
				break outer
			case v == 7:
				e.Note("continue outer at i=%d", i)
				continue outer
			case c == 'c' && i%2 == 1:
				e.Note("break inner at i=%d", i)
				break inner
			}
			// A labeled loop without awaits stays as it is.
		count:
			for k := 0; ; k++ {
				for {
					if k >= j {
						break count
					}
					total++
					if total%7 == 0 {
						e.Note("skip at i=%d j=%d", i, j)
						continue outer
					}
					continue count
				}
			}
			total += v
		}
		e.Note("i=%d total=%d", i, total)
	}
	return total
}

//blitz:async
func typeSwitch(e *Env, n int) (string, error) {
	values := []any{n, "s", 2.5, nil, []int{n}, ErrBig}
	var b strings.Builder
	for i := range n % 7 {
		switch v := values[i%len(values)].(type) {
		case int:
			w := future.Await(e.Val(v + 1))
			v += w // the clause's own variable
			b.WriteString(strings.Repeat("i", v%4))
		case string, float64:
			s := future.Await(e.Str("x"))
			e.Note("%v %s", v, s)
		case nil:
			future.Await(e.Val(0))
			b.WriteString("nil")
		case error:
			b.WriteString(v.Error())
		default:
			e.Note("other %v", v)
		}
		switch values[(i+1)%len(values)].(type) {
		case string:
			future.Await(e.Val(1))
			b.WriteString("+")
		}
	}
	return b.String(), nil
}

//blitz:async
func tries(e *Env, n int) (int, error) {
	total := 0
	x, err := future.Try(e.Fallible(n))
	if err != nil {
		e.Note("first failed with %d", x)
		total -= x
	}
	var y int
	y, err = future.Try(e.Fallible(n + 1))
	total += y
	e.Note("y=%d err=%v", y, err)
	_, err = future.Try(e.Fallible(2))
	e.Note("err=%v", err)
	future.Try(e.Fallible(n * 3))
	z, _ := future.Try(e.Fallible(total))
	for i := range n {
		v, err := future.Try(e.Fallible(i)) // a fresh err, local to its block
		if err != nil {
			continue
		}
		total += v
	}
	if n > 5 {
		return future.Try(e.Fallible(total))
	}
	for i := range 3 {
		if v, err := future.Try(e.Fallible(n + i)); err != nil {
			e.Note("if-init failed with %d", v)
		} else {
			total += v
		}
	}
	switch v := future.Await(e.Val(n)); {
	case v > 2:
		total++
	}
	w, err := future.Try(e.Fallible(z)) // w declared, err assigned
	if err != nil {
		return w, err
	}
	var (
		s    = "s"
		err2 error
	)
	s, err2 = future.Try(e.Text(strings.Repeat("t", n)))
	e.Note("%s %v", s, err2)
	return w + total, nil
}

//blitz:async
func tryReturn(e *Env, n int) (any, error) {
	if n%3 == 0 {
		// Try's T (int) is assignable to the result's (any), not the same.
		return future.Try(e.Fallible(n))
	}
	v, err := future.Try(e.Fallible(n + 1))
	return v, err
}

// counter has a value method and a pointer method, to defer as method
// values: the value one copies its receiver at the defer statement, the
// pointer one sees what changes after it.
type counter struct {
	e    *Env
	name string
	n    int
}

func (c counter) show(tag string) { c.e.Note("%s: value %s n=%d", tag, c.name, c.n) }

func (c *counter) showPtr(tag string) { c.e.Note("%s: pointer %s n=%d", tag, c.name, c.n) }

// shower is what a deferred interface method value binds.
type shower interface{ show(tag string) }

// noted records its arguments, to defer with a call of several results.
func (e *Env) noted(tag string, n int) { e.Note("%s %d", tag, n) }

func pairOf(n int) (string, int) { return "pair", n }

//blitz:async
func defers(e *Env, n int) (int, error) {
	defer e.Note("first deferred, n=%d", n) // n is evaluated here
	x := future.Await(e.Val(n))
	c := counter{e: e, name: "c", n: x}
	defer c.show("value")      // c copied here
	defer c.showPtr("pointer") // &c bound here: sees c.n += 100
	var s shower = c
	defer s.show("interface")
	c.n += 100
	if x%2 == 0 {
		defer func() { e.Note("even branch, x=%d", x) }() // x read when it runs
		y := future.Await(e.Val(x + 1))
		x += y
	} else {
		note := e.Note
		defer note("odd branch %v", x > 3)
		note = nil // the deferred call holds the function value of the defer statement
	}
	for i := range n % 4 {
		defer e.Note("loop %d of %d", i, n%4) // one per iteration
		future.Await(e.Val(i))
	}
	for i := 0; i < 2; i++ { // a loop without awaits: its defers stack too
		defer e.Note("plain loop %d", i)
	}
	x *= 2
	defer func() { x = -1 }() // runs after the result is evaluated
	if x > 10 {
		return x, ErrBig
	}
	return x, nil
}

//blitz:async
func deferPanics(e *Env, n int) int {
	defer e.Note("outer deferred")
	v := future.Await(e.Val(n))
	defer func() { e.Note("inner deferred v=%d", v) }()
	if v == 3 {
		panic("three") // a panic between awaits: the deferred calls run, then it goes on
	}
	w := future.Await(e.Val(v + 1))
	if w == 6 {
		defer panic("deferred panic") // a deferred call that panics: the rest still run
	}
	if w == 8 {
		var m map[int]int
		defer func() { m[0] = 1 }() // a runtime error in a deferred call
	}
	defer e.Note("last deferred w=%d", w)
	v = future.Await(e.Val(v * w))
	return v + w
}

//blitz:async
func deferForms(e *Env, n int) {
	m := map[int]int{1: 1, 2: 2}
	defer func() { e.Note("map at the end %v", m) }()
	defer delete(m, 1) // a builtin
	fs := []func(){func() { e.Note("fs 0") }, func() { e.Note("fs 1") }}
	defer fs[n%2]() // the function value is read here
	fs[n%2] = nil
	args := []any{n, "x"}
	defer e.Note("spread %v %v", args...)
	defer e.noted(pairOf(n)) // a call with several results as the arguments
	defer e.Note("untyped %v %v", n > 3, 1<<n > 8)
	for i := range n % 3 {
		k := future.Await(e.Val(i))
		defer e.Note("k=%d", k)
		m[k+10] = k
	}
	if n == 4 {
		return
	}
	future.Await(e.Val(n))
	defer e.Note("after the last await")
}

// namedCounter embeds a counter by value and pointerCounter by pointer: their
// methods are promoted, to defer as method values.
type namedCounter struct {
	counter
	tag string
}

type pointerCounter struct{ *counter }

// defersOpen has at most 8 defer statements, none in a loop: the generator
// open-codes them (a bit and typed fields per statement). What each
// evaluates at the defer statement is changed after it.
//
//blitz:async
func defersOpen(e *Env, n int) (r int, err error) {
	defer e.Note("first deferred, n=%d", n) // n is evaluated here; n++ below is not seen
	x := future.Await(e.Val(n))
	c := counter{e: e, name: "c", n: x}
	defer c.show("value")      // c copied here
	defer c.showPtr("pointer") // &c bound here: sees c.n += 100
	var s shower = c
	defer s.show("interface")
	pc := &counter{e: e, name: "pc", n: x}
	defer pc.show("through a pointer") // *pc copied here
	c.n += 100
	pc.n += 100
	n++
	_ = n // the first deferred call took n before this
	if x%2 == 0 {
		defer func() { // reads x and r when it runs, and changes the result
			e.Note("even branch, x=%d r=%d", x, r)
			r *= 3
		}()
		y := future.Await(e.Val(x + 1))
		x += y
	} else {
		note := e.Note
		defer note("odd branch %v", x > 3)
		note = nil // the deferred call holds the function value of the defer statement
	}
	defer func(v int) { e.Note("literal with an argument v=%d, x=%d", v, x) }(x)
	x *= 2
	if x > 10 {
		return x, ErrBig
	}
	future.Await(e.Val(x))
	return x, nil
}

// defersPromoted open-codes deferred methods promoted through embedded
// fields, a nil interface's method value (which panics at the defer
// statement), a function variable nothing assigns, a call of several results
// as the arguments and a builtin.
//
//blitz:async
func defersPromoted(e *Env, n int) int {
	nc := namedCounter{counter: counter{e: e, name: "nc", n: n}, tag: "t"}
	defer nc.show("promoted value")      // nc.counter copied here
	defer nc.showPtr("promoted pointer") // &nc.counter bound here
	pe := pointerCounter{&counter{e: e, name: "pe", n: n}}
	defer pe.show("promoted through a pointer")    // *pe.counter copied here
	defer pe.showPtr("promoted pointer, embedded") // pe.counter read here
	v := future.Await(e.Val(n))
	nc.n += 10
	pe.n += 10
	pe.counter = &counter{e: e, name: "other", n: -1}
	m := map[int]int{1: 1, 2: 2, 3: 3}
	hook := func(s string) { e.Note("hook %s v=%d, at the end %v", s, v, m) }
	defer hook("stable")
	k := v % 3
	defer delete(m, k+1)
	k = -1
	if v == 5 {
		var ns shower
		defer ns.show("nil") // panics here, as Go's method value of a nil interface
	}
	w := future.Await(e.Val(v + 1))
	defer e.noted(pairOf(w)) // a call with several results as the arguments
	return v + w + k
}

// defersClause defers a literal that names a type switch clause's variable
// or a local constant (kept as closures), a call whose constant arguments
// name a local constant and a local array, and defer recover(), which stops
// no panic.
//
//blitz:async
func defersClause(e *Env, n int) int {
	var a any = n
	if n%2 == 1 {
		a = fmt.Sprint(n)
	}
	switch t := a.(type) {
	case int:
		defer func() { e.Note("int clause t=%d", t) }()
	case string:
		defer func() { e.Note("string clause t=%q", t) }()
	}
	v := future.Await(e.Val(n))
	defer recover()
	const k = 3
	arr := [4]int{}
	defer e.Note("constants k=%d len=%d", k, len(arr)) // they name the function's constant and variable
	defer func() { e.Note("literal k=%d", k) }()
	if v == 4 {
		panic("four")
	}
	return future.Await(e.Val(v * 2))
}

// defersNine has 9 defer statements, one more than the bits of an
// open-coded function: they are kept as a slice of closures.
//
//blitz:async
func defersNine(e *Env, n int) int {
	defer e.Note("d1 n=%d", n)
	defer e.Note("d2")
	defer e.Note("d3")
	v := future.Await(e.Val(n))
	defer e.Note("d4 v=%d", v)
	defer e.Note("d5")
	if v%2 == 0 {
		defer e.Note("d6 even")
	} else {
		defer e.Note("d7 odd")
	}
	defer e.Note("d8")
	n++
	w := future.Await(e.Val(v + 1))
	defer func() { e.Note("d9 w=%d n=%d", w, n) }()
	return v + w
}

// closer counts its Close calls; wrappedCloser has its Close promoted.
type closer struct{ closed int }

func (c *closer) Close() error {
	c.closed++
	return nil
}

type wrappedCloser struct{ closer }

// closeAll defers closing, in the forms a server's handler does: a pointer
// method of a parameter, a method promoted through an embedded field and an
// interface's method. Open-coded, its defer statements allocate nothing
// (TestOpenDefersDoNotAllocate compares it with closeNone).
//
//blitz:async
func closeAll(e *Env, c *closer, w *wrappedCloser, i interface{ Close() error }) int {
	defer c.Close()
	defer w.Close()
	defer i.Close()
	return future.Await(e.Val(c.closed))
}

// closeNone is closeAll without its defer statements.
//
//blitz:async
func closeNone(e *Env, c *closer, w *wrappedCloser, i interface{ Close() error }) int {
	return future.Await(e.Val(c.closed))
}

// noter is a constraint with a method, to defer a type parameter's method
// value; tagged satisfies it.
type noter interface{ note(e *Env, tag string) }

type tagged string

func (t tagged) note(e *Env, tag string) { e.Note("%s: %s", tag, string(t)) }

// defersGeneric open-codes defer statements of a generic function: a type
// parameter's method value and arguments of type parameter types.
//
//blitz:async
func defersGeneric[T noter, V any](e *Env, x T, v V, n int) int {
	defer x.note(e, "deferred method of a type parameter") // x copied here
	defer e.Note("deferred value %v", v)
	w := future.Await(e.Val(n))
	var y T
	defer func() { e.Note("literal y=%v w=%d", y, w) }()
	y, x = x, y
	defer e.Note("swapped %v %v", x, y)
	return future.Await(e.Val(w + 1))
}

// deferPackageVar defers a call of another package's function variable:
// its value is read at the defer statement.
//
//blitz:async
func deferPackageVar(e *Env, n int) int {
	hook.Note = func(s string) { e.Note("first hook %s", s) }
	defer hook.Note("deferred")
	hook.Note = func(s string) { e.Note("second hook %s", s) }
	return future.Await(e.Val(n))
}

// deferPackageVarLoop is deferPackageVar with its defer in a loop: the
// slice of closures.
//
//blitz:async
func deferPackageVarLoop(e *Env, n int) int {
	for i := range 2 {
		hook.Note = func(s string) { e.Note("hook %d %s", i, s) }
		defer hook.Note("deferred")
	}
	hook.Note = func(s string) { e.Note("last hook %s", s) }
	return future.Await(e.Val(n))
}

// stack is the receiver of async methods.
type stack struct {
	e     *Env
	items []int
}

//blitz:async
func (s *stack) pushAll(n int) int {
	for i := range n {
		v := future.Await(s.e.Val(i * i))
		s.items = append(s.items, v) // the caller's stack
	}
	return len(s.items)
}

//blitz:async
func (s stack) sumCopy(n int) (int, error) {
	s.items = append(s.items[:len(s.items):len(s.items)], n) // a copy's: the caller's is unchanged
	total := 0
	for _, x := range s.items {
		v := future.Await(s.e.Val(x))
		total += v
	}
	if total > 50 {
		return 0, ErrBig
	}
	return total, nil
}

//blitz:async
func (*stack) unnamed(e *Env, n int) int {
	return future.Await(e.Val(n))
}

//blitz:async
func collect[T any, K comparable](e *Env, xs []T, key func(T) K) (map[K]int, error) {
	m := map[K]int{}
	var last T
	for i, x := range xs {
		w := future.Await(e.Val(i))
		y := future.Await(Later(e, x))
		m[key(y)] += w
		last = x
	}
	e.Note("last %v", last)
	if len(m) == 0 {
		return nil, ErrBig
	}
	return m, nil
}

// box is a generic receiver of async methods.
type box[T any] struct {
	e *Env
	v []T
}

//blitz:async
func (b *box[E]) fill(n int, mk func(int) E) E {
	var zero E
	for i := range n {
		w := future.Await(b.e.Val(i))
		b.v = append(b.v, mk(w))
		zero = future.Await(Later(b.e, b.v[0]))
	}
	return zero
}

// word is a string of another type, ranged over by runes.
type word string

//blitz:async
func runes[S ~string](e *Env, s S) (string, error) {
	var b strings.Builder
	for i, r := range s {
		future.Await(e.Val(i))
		b.WriteRune(r)
	}
	return b.String(), nil
}

//blitz:async
func namedResults(e *Env, n int) (total int, err error) {
	defer func() {
		if err != nil { // the results as the return left them
			total = -total
			err = fmt.Errorf("wrapped: %w", err)
		}
	}()
	defer e.Note("deferred total=%d", total) // evaluated here: 0
	for i := range n {
		v := future.Await(e.Val(i))
		total += v
		if total > 10 {
			err = ErrBig
			return // bare
		}
	}
	if n == 3 {
		return future.Try(e.Fallible(n))
	}
	if n == 5 {
		return 100, ErrOdd // the values, then the deferred calls
	}
	total, err = future.Try(e.Fallible(total))
	return
}

//blitz:async
func namedOne(e *Env, n int) (r int) {
	defer func() { r *= 2 }()
	if n%2 == 0 {
		return future.Await(e.Val(n))
	}
	r = n
	return r + 1
}

//blitz:async
func blankResult(e *Env, n int) (_ int, err error) {
	v := future.Await(e.Val(n))
	if v > 4 {
		err = ErrBig
		return
	}
	return v, nil
}

//blitz:async
func captures(e *Env, n int) int {
	var fs []func() int
	var ps []*int
	for i := 0; i < n; i++ { // i is copied for the next iteration before i++
		v := future.Await(e.Val(i * 10))
		fs = append(fs, func() int { return i*100 + v })
		ps = append(ps, &v)
		defer func() { e.Note("deferred i=%d v=%d", i, v) }()
		v++ // seen by the closure and through the pointer
		if i == 2 {
			i++ // this iteration's i, which the next one starts from
		}
	}
	for _, x := range []int{n, n + 1} {
		w := future.Await(e.Val(x))
		fs = append(fs, func() int { return x + w })
	}
	for j := 0; j < 3; { // no post statement: copied all the same
		future.Await(e.Val(j))
		fs = append(fs, func() int { return j })
		j++
	}
	total := 0
	for _, f := range fs {
		total += f()
	}
	for _, p := range ps {
		*p += 1000 // the iteration's variable: the closures see it
	}
	future.Await(e.Val(0))
	for _, f := range fs { // called after later awaits
		total += f()
		e.Note("total=%d", total)
	}
	return total
}

// acc has an array to slice and a pointer method.
type acc struct {
	a [3]int
	n int
}

func (a *acc) inc() { a.n++ }

//blitz:async
func cellForms(e *Env, n int) (string, error) {
	var slices [][]int
	var accs []*acc
	var later []func() string
	for i := range n % 5 {
		var p acc
		p.a[0] = i
		k := future.Await(e.Val(i))
		p.inc() // on the iteration's p
		later = append(later, func() string { return fmt.Sprint("k", k) })
		slices = append(slices, p.a[:])
		accs = append(accs, &p)
		switch v := any(k).(type) {
		case int:
			future.Await(e.Val(v))
			later = append(later, func() string { return fmt.Sprint("v", v) })
			v++
		}
		if q := k * 2; q >= 2 {
			future.Await(e.Val(q))
			later = append(later, func() string { return fmt.Sprint("q", q) })
			q += 100
		}
		var r = k + 1
		future.Await(e.Val(r))
		later = append(later, func() string { return fmt.Sprint("r", r) })
		p.a[1] = k // after the slice was taken: seen through it
		k *= 3     // seen by the closure above
	}
	var b strings.Builder
	for i, s := range slices {
		fmt.Fprint(&b, s, accs[i].n, accs[i].a, " ")
	}
	for _, f := range later {
		b.WriteString(f())
	}
	return b.String(), nil
}

type point struct{ x, y int }

func (p point) sum(a, b int) int { return p.x + p.y + a + b }

func (p *point) move(d int) int {
	p.x += d
	return p.x
}

func sum3(a, b, c int) int { return a*100 + b*10 + c }

//blitz:async
func nestedExprs(e *Env, n int) (int, error) {
	// Calls left of an await run before it, the rest after it.
	a := sum3(e.Tick("a", 1), future.Await(e.Step("s1", n)), e.Tick("c", 3))
	e.Note("a=%d", a)
	if future.Await(e.Step("s2", n)) > 4 {
		return future.Await(e.Step("s3", a)), nil
	}
	// && and || run their right operand only when the left does not decide.
	if n%2 == 0 && future.Await(e.Step("s4", n)) > 1 || n == 7 || future.Await(e.Step("s5", n+1)) == 4 {
		e.Note("cond true")
	}
	arr := []int{e.Tick("x", 0), future.Await(e.Step("s6", n)), 2}
	arr[e.Tick("index", n%3)] = future.Await(e.Step("s7", 10))
	arr[e.Tick("index2", 1)] += future.Await(e.Step("s8", 5)) * e.Tick("after", 2)
	counts := map[int]int{future.Await(e.Step("s9", 1)): e.Tick("v", 4)}
	counts[future.Await(e.Step("s10", n%3))]++
	var z = future.Await(e.Step("s11", future.Await(e.Step("s12", n))+1)) * 2 // an await's argument awaits first
	p := point{x: 1, y: 2}
	z += p.sum(e.Tick("s1", 1), future.Await(e.Step("s13", n)))
	z += p.move(future.Await(e.Step("s14", 3))) // the pointer method moves p itself
	z += future.Await(Later(e, p)).x
	z -= -future.Await(e.Step("s15", 2))
	switch future.Await(e.Step("s16", n)) % 3 {
	case 0:
		z++
	case 1:
		z += future.Await(e.Step("s17", 100))
	}
	if b := e.Tick("init", n) > 2; b && !future.Await(Later(e, n > 5)) {
		z *= 2
	}
	for i := future.Await(e.Step("s18", n%4)); i > 0; i-- {
		z += future.Await(e.Step("s19", i))
	}
	e.Note("%v %v %v", arr, counts, p)
	if z > 1000 {
		return 0, fmt.Errorf("z=%d: %w", future.Await(e.Step("s20", z)), ErrBig)
	}
	return z + len(arr), nil
}

//blitz:async
func nestedTry(e *Env, n int) int {
	total := 0
	for v, err := future.Try(e.Fallible(n)); err == nil && v < 12; v++ {
		total += future.Await(e.Val(v))
	}
	if _, err := future.Try(e.Fallible(n)); err != nil || future.Await(e.Val(n)) > 3 {
		total++
	}
	return total
}

//blitz:async
func (b *box[E]) drain(n int, show func(E) string) (count int, err error) {
	defer func() {
		if count > 3 {
			err = ErrBig
			count = -count
		}
	}()
	var shown []func() string
	for i := range min(n, len(b.v)) {
		x := b.v[i]
		future.Await(b.e.Val(i))
		shown = append(shown, func() string { return show(x) }) // x: this iteration's
		defer b.e.Note("drained %s", show(x))
		count++
	}
	for _, s := range shown {
		b.e.Note("shown %s", s())
	}
	return
}

//blitz:async
func loopAwaits(e *Env, n int) int {
	total := 0
	// The condition's awaits run before every iteration, the post's after.
	for i := 0; i < future.Await(e.Step("limit", n%5)); i += future.Await(e.Step("inc", 1)) {
		total += i
		if i == 3 {
			continue // to the post statement, and its await
		}
		e.Note("i=%d", i)
	}
	for j := range future.Await(Later(e, []int{n, 2 * n})) { // evaluated once
		total += future.Await(e.Val(j))
	}
	for k := n; k > 0 && future.Await(e.Step("k", k)) != 2; k-- {
		total++
	}
	return total
}

//blitz:async
func typeSwitchGuard(e *Env, n int) (string, error) {
	values := []any{n, "s", nil, 2.5}
	var b strings.Builder
	for i := range n % 5 {
		switch v := future.Await(Later(e, values[i%len(values)])).(type) {
		case int:
			b.WriteString(strings.Repeat("i", v%3))
		case string:
			b.WriteString(v + future.Await(e.Str("!")))
		default:
			e.Note("other %v", v)
		}
		switch future.Await(Later(e, values[(i+1)%len(values)])).(type) {
		case nil:
			b.WriteString("nil")
		}
	}
	return b.String(), nil
}

//blitz:async
func caseAwaits(e *Env, n int) (int, error) {
	total := 0
	for i := range n % 6 {
		// The tag once, then the cases in order until one matches: the
		// log shows which futures were made.
		switch e.Tick("tag", i) {
		case future.Await(e.Step("zero", 0)), e.Tick("one", 1):
			total++
		case future.Await(e.Step("two", 2)):
			total += future.Await(e.Val(10))
		//lint:ignore ST1015 a default between cases on purpose: the generator's dispatch must keep Go's order
		default:
			total += 100
		case 3, future.Await(e.Step("four", 4)):
			total += 1000
		}
		switch {
		case i > 3:
			total *= 2
		case future.Await(Later(e, i%2 == 0)):
			total--
		}
	}
	return total, nil
}

//blitz:async
func deferAwaits(e *Env, n int) int {
	// The deferred call's arguments, awaits included, are evaluated here.
	defer e.Note("deferred %d %d", e.Tick("before", n), future.Await(e.Step("arg", n*2)))
	c := counter{e: e, name: "c", n: n}
	defer c.showPtr(fmt.Sprint("ptr", future.Await(e.Val(1))))
	c.n = future.Await(e.Val(n + 5))
	return c.n
}

//blitz:async
func litInInit(e *Env, n int) int {
	total := 0
	// A function literal in a lowered if's init: its parameter and locals
	// belong to the literal, not to the state machine.
	if add := func(a int) int { b := a + 1; return b }; add(n) > 2 {
		total += future.Await(e.Val(add(n)))
	}
	return total
}

//blitz:async
func blocks(e *Env, n int) int {
	x := n
	{
		x := future.Await(e.Val(x * 2)) // shadows the outer x
		y := x + 1
		{
			var y = y * 10 // shadows again
			future.Await(e.Val(y))
			x += y
		}
		e.Note("inner x=%d y=%d", x, y)
	}
	y := x // the outer x
	{
		if y > 3 {
			return future.Await(e.Val(y))
		}
	}
	return x + y
}

//blitz:async
func sends(e *Env, n int) int {
	chs := []chan int{make(chan int, 4), make(chan int, 4)}
	chs[e.Tick("chan", n%2)] <- future.Await(e.Step("sent", n))
	chs[n%2] <- future.Await(e.Val(n+1)) + e.Tick("after", 1)
	return <-chs[n%2] + <-chs[n%2]
}

// Locals named like what the generated code uses: they become fields,
// which shadow nothing.

//blitz:async
func shadowFuture(e *Env, n int) (int, error) {
	x := future.Await(e.Val(n))
	if x > 2 {
		future := x + 1
		return future, nil
	}
	return x, nil
}

//blitz:async
func shadowNew(e *Env, n int) int {
	var fns []func() int
	for i := range 3 {
		future.Await(e.Val(i))
		new := i + n
		x := new * 2
		fns = append(fns, func() int { return x })
		future.Await(e.Val(x))
		e.Note("x=%d", x)
	}
	return fns[0]() + fns[2]()
}

//blitz:async
func shadowNewGeneric[N ~int](e *Env, n N) int {
	x := future.Await(e.Val(int(n)))
	new := x + 1
	e.Note("new=%d", new)
	var g N
	future.Await(e.Val(int(g)))
	return int(g) + x
}

//blitz:async
func shadowTrue(e *Env, n int) int {
	x := future.Await(e.Val(n))
	true := x > 1
	e.Note("true=%v", true)
	return x
}

//blitz:async
func shadowType(e *Env, n int) point {
	defer e.Note("deferred")
	v := future.Await(e.Val(n))
	point := point{x: v, y: 1} // the result is evaluated into a temporary of type point
	return point
}

//blitz:async
func shadowInPlainLoop(e *Env, n int) int {
	total := future.Await(e.Val(n))
	for i := 0; i < 3; i++ { // copied: its len is the loop's own
		len := i * total
		if len > 7 {
			return len
		}
		defer e.Note("len=%d", len)
	}
	return total
}

//blitz:async
func rangeArrayCall(e *Env, n int) int {
	total := 0
	// A call in the range expression: Go evaluates it (len is not
	// constant), once.
	for i := range e.array(n) {
		total += future.Await(e.Val(i))
	}
	return total
}

// array records that it was called and returns an array.
func (e *Env) array(n int) [3]int {
	e.Note("array(%d)", n)
	return [3]int{n, n, n}
}

//blitz:async
func rangeArrayPointer(e *Env, n int) int {
	a := [3]int{n, n + 1, n + 2}
	p := &a
	total := 0
	for i, x := range p { // through the pointer: changes in the body are seen
		a[2] = 100
		total += future.Await(e.Val(x)) * (i + 1)
	}
	var nilp *[2]int
	for i := range nilp { // the length is constant: nilp is not read
		total += future.Await(e.Val(i))
	}
	return total
}

// The awaits of a local through its address, future.Await(&x): a local
// used only so is held as a field of its own type; other locals are not.

//blitz:async
func addrAwait(e *Env, n int) (int, error) {
	x := ValueOf(e.Val(n))
	v := future.Await(&x)
	e.Note("v=%d", v)
	y := ValueOf(e.Fallible(v + 1)) // another local of another type
	w, err := future.Try(&y)
	if err != nil {
		e.Note("w=%d err=%v", w, err)
	}
	var z ValFuture[int] // declared, then assigned
	e.Note("w=%d", w)
	z = ValueOf(e.Val(w * 2))
	v += future.Await(&z)
	a, b := ValueOf(e.Val(v)), n // declared beside another
	v += future.Await(&a) + b
	{
		x := ValueOf(e.Val(3)) // in a block statement: shadows x
		v += future.Await(&x)
	}
	return v, err
}

//blitz:async
func addrAwaitLoop(e *Env, n int) int {
	total := 0
	for i := range n {
		x := ValueOf[int](nil)
		if i == 2 {
			continue // declared and not awaited
		}
		x = ValueOf(e.Val(i))
		total += future.Await(&x)
		x = ValueOf[int](nil) // assigned after its await, never awaited
	}
	for k := 0; k < n%3; k++ {
		var x ValFuture[string] // declared, then assigned after a statement: the generator must handle both
		e.Note("k=%d", k)
		x = ValueOf(e.Str(strings.Repeat("b", k)))
		e.Note("s=%q", future.Await(&x))
	}
	return total
}

//blitz:async
func addrAwaitShared(e *Env, n int) int {
	// Awaited twice, reassigned between: not a field of its own type.
	x := ValueOf(e.Val(n))
	a := future.Await(&x)
	x = ValueOf(e.Val(a + 1))
	b := future.Await(&x)
	// Declared before a loop and awaited in it: the same.
	y := ValueOf(e.Val(b))
	for i := 0; i < 1; i++ {
		b += future.Await(&y)
	}
	// Used besides its await: a field, awaited through a pointer.
	z := ValueOf(e.Val(b))
	e.Note("z made: %v", z.Made())
	c := future.Await(&z)
	e.Note("z still made: %v", z.Made())
	// A pointer awaited as it is.
	p := new(ValFuture[int])
	*p = ValueOf(e.Val(c))
	return a + b + c + future.Await(p)
}

// The awaits of a call that returns a new Movable future: held by value in
// a field, copied out of the pointer, in a loop, in a condition, beside
// another of the same type and with Try.

//blitz:async
func movedAwait(e *Env, n int) (int, error) {
	v := future.Await(MovOf(e.Val(n)))
	for i := range n % 4 {
		v += future.Await(MovOf(e.Val(i))) * future.Await(MovOf(e.Val(i+1)))
		if future.Await(MovOf(e.Val(i))) > 1 {
			e.Note("big %d", i)
			break
		}
	}
	p := MovOf(e.Val(v)) // a pointer kept in a variable: awaited as a pointer
	v += future.Await(p)
	w, err := future.Try(MovOf(e.Fallible(v)))
	if err != nil {
		return w, err
	}
	return w + len(future.Await(MovOf(e.Str("x")))), nil
}

// A loop copied as it is (no await in it) that returns, with variables
// named after predeclared types that the result type does not name: the
// generated return names only the result type.

//blitz:async
func shadowTypeInLoop(e *Env, n int) (int, error) {
	v := future.Await(e.Val(n))
	for i := range 4 {
		rune, string := i+v, "big"
		if rune > 5 {
			return rune, fmt.Errorf("%s: %d", string, rune)
		}
	}
	return v, nil
}

// An awaited call whose operand holds a function literal with parameters
// and locals of its own: they are the literal's, not variables of the
// function read before they are written.

//blitz:async
func litInAwait(e *Env, n int) int {
	total := n
	v := future.Await(future.Map(e.Val(n), func(i int) int {
		j := i * 2
		return j + total
	}))
	total += v
	if future.Await(future.Map(e.Val(v), func(k int) bool { return k%2 == 0 })) {
		total++
	}
	return total
}

// Range loops whose expression and key are used as they are, and those
// that keep their copies.

//blitz:async
func rangeDirect(e *Env, n int) int {
	s := []int{n, n + 1, n + 2}
	total := 0
	for i, x := range s { // s and i only read: ranged as they are
		total += future.Await(e.Val(x)) * (i + 1)
		x := x * 2 // redeclared in the body: the value is a field
		total += x
	}
	t := []int{1, 2, 3}
	for i, x := range t {
		t = []int{9} // reassigned: the loop ranges over its first value
		total += future.Await(e.Val(x + i))
	}
	u := []int{4, 5}
	p := &u
	for _, x := range u {
		*p = nil // reassigned through a pointer taken before the loop
		total += future.Await(e.Val(x))
	}
	for i := range n {
		if i%2 == 0 {
			i += 3 // assigned: not the index
		}
		total += future.Await(e.Val(i))
	}
	for i := range len(s) {
		q := &i // addressed: not the index
		*q++
		total += future.Await(e.Val(i))
	}
	str := "héllo"[n%2:]
	for i, r := range str {
		total += future.Await(e.Val(i)) + int(r)%7
	}
	var fs []func() int
	for i, x := range s { // captured: each iteration's own
		fs = append(fs, func() int { return i * x })
		future.Await(e.Val(i))
	}
	for _, f := range fs {
		total += f()
	}
	k := n % 4
	for i := range k {
		total += future.Await(e.Val(i * k))
	}
	return total + len(t) + len(u)
}

// Variables used by two blocks with no await between their declaration and
// their uses are locals of Poll; the others stay fields.

//blitz:async
func pollLocals(e *Env, n int) int {
	total := 0
	for i := range n + 2 {
		v := e.Tick("v", i*3%7) // tested by the dispatch, read by the clauses
		switch {
		case v < 2:
			total += future.Await(e.Val(v))
		case v%2 == 0:
			w := v / 2
			total += future.Await(e.Val(w)) + v // v read after an await: a field
		default:
			total += v
		}
		k := e.Tick("k", i)
		if k == 1 {
			future.Await(e.Val(k))
			continue
		}
		total += k
	}
	last := -1
	for i := 0; i < n; i++ {
		if i == 3 {
			last = i // read after the loop, across its awaits: a field
			break
		}
		future.Await(e.Val(i))
	}
	if n > 3 {
		x := e.Tick("a", n)
		switch {
		case x > 4:
			total += x
		default:
			total += future.Await(e.Val(x))
		}
	} else {
		x := e.Tick("b", n) // another x: renamed
		switch {
		case x > 1:
			total -= x
		default:
			total -= future.Await(e.Val(x + 1))
		}
	}
	return total*10 + last
}

//blitz:async
func addrAwaitNames(e *Env, n int) int {
	poll := ValueOf(e.Val(n)) // named like a method of a machine with defers
	v := future.Await(&poll)
	defer e.Note("deferred %d", v)
	runDefers := ValueOf(e.Val(v + 1))
	return future.Await(&runDefers)
}

//blitz:async
func addrAwaitReassigned(e *Env, n int) int {
	a := ValueOf(e.Val(n))
	v := future.Await(&a)
	b := ValueOf(e.Val(v + 1))
	a = ValueOf[int](nil) // assigned while b waits: a field of its own
	return v + future.Await(&b)
}

//blitz:async
func rangeArrayLater(e *Env, n int) int {
	arr := [3]int{n, future.Await(e.Val(n)), 2}
	e.Note("arr=%v", arr)
	total := 0
	for i := 0; i < n%3; i += future.Await(e.Val(1)) {
		total += i
	}
	for k := range arr { // not evaluated: its length is constant
		total += future.Await(e.Val(k))
	}
	return total
}

// Weekday is a named type for localConsts' typed constants.
type Weekday int

//blitz:async
func localConsts(e *Env, n int) (string, error) {
	const (
		mon Weekday = iota + 1
		tue
		wed
	)
	const limit = 3
	var buf [5]byte
	const size = len(buf) // a constant that reads a local array's length
	defer e.Note("deferred limit=%d", limit)
	x := future.Await(e.Val(n))
	if x > limit {
		const limit = "shadowed" // another constant of the same name
		e.Note("over %s", limit)
		return "", fmt.Errorf("%d over %d", x, wed)
	}
	scale := func(v int) int { return v * size }
	y := future.Await(e.Val(scale(x)))
	const msg = "sum"
	return fmt.Sprintf("%s %d %v", msg, y+limit, tue), nil
}

// nilFutures awaits what e.Maybe returns, nil when n is odd: future.Try of
// a nil future gives future.ErrNilFuture, and future.Await of one panics
// with it.
//
//blitz:async
func nilFutures(e *Env, n int) (int, error) {
	v, err := future.Try(e.MaybeFallible(n))
	if err != nil {
		return 0, fmt.Errorf("try: %w", err)
	}
	return v + future.Await(e.MaybeVal(n)), nil
}
