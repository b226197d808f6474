package progfuzz

import (
	"regexp"
	"strings"
)

// The other packages of the temporary module, which the programs import:
// lib (exported structs, a named type, interfaces, structs embedding
// others by value and by pointer, generic types, and async functions of
// its own, among them a method, a generic function and a method of a
// generic type), and two packages both named util (a/util and b/util),
// which lib and the programs import, one of them under another name. The
// programs' package adds Wrapped, which embeds lib's types.

// Import paths of the other packages, by the key the generator names
// them with.
var importPaths = map[string]string{
	"lib": runPackage + "/lib",
	"au":  runPackage + "/a/util",
	"bu":  runPackage + "/b/util",
	"tt":  "text/template",
	"ht":  "html/template",
}

// importKeys is the order of the programs' imports.
var importKeys = []string{"lib", "au", "bu", "tt", "ht"}

// pkgName is the name each package declares.
var pkgName = map[string]string{"lib": "lib", "au": "util", "bu": "util", "tt": "template", "ht": "template"}

// libSource is lib/lib.go.
const libSource = `package lib

import (
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/blitz-go/blitz/future"
	"progfuzzrun/a/util"
)

// Env is what lib sees of the programs' Env (which implements it).
type Env interface {
	Note(format string, args ...any)
	Val(v int) future.Future[int]
	Str(s string) future.Future[string]
	Fallible(v int) future.Future[future.Result[int]]
	Text(s string) future.Future[future.Result[string]]
	Stream(k int) func() future.Future[future.Result[int]]
}

// Score is a named int with a method.
type Score int

// Double doubles s, staying small.
func (s Score) Double() Score { return s * 2 % 1000 }

// Acc has an exported field, an unexported one, a pointer method and
// value methods.
type Acc struct {
	N    int
	hits int
}

// NewAcc returns an Acc of n.
func NewAcc(n int) Acc { return Acc{N: n} }

// Add adds k and returns the sum.
func (a *Acc) Add(k int) int {
	a.N = (a.N + k) % 1000
	a.hits++
	return a.N
}

// Sum reads a.
func (a Acc) Sum() int { return a.N*10 + a.hits }

// Report notes a (a value method: a deferred call copies a at the defer).
func (a Acc) Report(e Env) { e.Note("lib.Acc.Report N=%d hits=%d", a.N, a.hits) }

// Meta is embedded by pointer.
type Meta struct{ Tag string }

// Label changes and returns the tag.
func (m *Meta) Label(e Env) string {
	if len(m.Tag) < 6 {
		m.Tag += "+"
	}
	e.Note("lib.Meta.Label %q", m.Tag)
	return m.Tag
}

// Shape is an interface.
type Shape interface{ Area() int }

// Square is a Shape by value.
type Square int

func (s Square) Area() int { return int(s) * int(s) % 1000 }

// Rect is a Shape by pointer.
type Rect struct{ W, H int }

func (r *Rect) Area() int { return r.W * r.H % 1000 }

// Labeled embeds an interface.
type Labeled interface {
	Shape
	Label(e Env) string
}

// Tally embeds a struct by value, one by pointer, another package's
// struct and an interface.
type Tally struct {
	Acc
	*Meta
	util.Bag
	Shape
}

// NewTally returns a Tally whose pointer and interface are set.
func NewTally(n int, tag string) Tally {
	return Tally{Acc: Acc{N: n}, Meta: &Meta{Tag: tag}, Shape: Square(n % 7)}
}

// Total reads promoted fields and methods.
func (t Tally) Total() int { return t.N + t.Len() + t.Area() }

// Cell is a generic type with pointer and value methods.
type Cell[T any] struct {
	v    T
	sets int
}

// NewCell returns a Cell holding v.
func NewCell[T any](v T) *Cell[T] { return &Cell[T]{v: v} }

func (c *Cell[T]) Set(v T) { c.v = v; c.sets++ }
func (c Cell[T]) Get() T    { return c.v }
func (c Cell[T]) Sets() int { return c.sets }

// Pair is a generic type of two type parameters.
type Pair[K comparable, V any] struct {
	Key K
	Val V
}

// MakePair returns a Pair.
func MakePair[K comparable, V any](k K, v V) Pair[K, V] { return Pair[K, V]{k, v} }

func (p *Pair[K, V]) SetVal(v V) { p.Val = v }
func (p Pair[K, V]) String() string { return fmt.Sprintf("%v=%v", p.Key, p.Val) }

// Stack is a generic type over a slice, bounded.
type Stack[T any] struct{ Items []T }

func (s *Stack[T]) Push(v T) {
	if len(s.Items) >= 4 {
		s.Items = s.Items[1:]
	}
	s.Items = append(s.Items, v)
}

func (s *Stack[T]) Pop() (T, bool) {
	var zero T
	if len(s.Items) == 0 {
		return zero, false
	}
	v := s.Items[len(s.Items)-1]
	s.Items = s.Items[:len(s.Items)-1]
	return v, true
}

func (s Stack[T]) Len() int { return len(s.Items) }

// Render executes a text/template or html/template template with v.
func Render(t interface {
	Execute(w io.Writer, data any) error
}, v any) string {
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		return "error: " + err.Error()
	}
	return b.String()
}

// The programs' helpers, for lib's generated async functions.

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func first(v int, _ error) int { return v }

// Counter has a pointer method.
type Counter struct{ n int }

func (c *Counter) Add(k int) int {
	c.n += k
	return c.n
}

func (c Counter) Show(e Env, k int) { e.Note("lib.Counter.Show n=%d k=%d", c.n, k) }

type Shower interface{ Show(e Env, k int) }

func Boom(e Env, k int) {
	e.Note("lib.Boom %d", k)
	if k%7 == 0 {
		panic(fmt.Sprint("lib boom ", k))
	}
}

// RefAwait is the await of lib's references, which the driver sets: it
// blocks on the future and counts the await as the programs' references
// do.
var RefAwait func(f any) any

func awaitRef[T any](f future.Future[T]) T { return RefAwait(f).(T) }

func tryRef[T any](f future.Future[future.Result[T]]) (T, error) {
	r := awaitRef(f)
	return r.Value, r.Err
}

func eachRef[T any, F future.Future[future.Result[T]]](next func() F) iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			r := awaitRef[future.Result[T]](next())
			if r.Err != nil || !yield(r.Value) {
				return
			}
		}
	}
}
`

// libAsyncSource is lib/async.go: lib's own async functions, which the
// programs await.
const libAsyncSource = `package lib

import (
	"fmt"

	"github.com/blitz-go/blitz/future"
)

// Fold is an async method: it adds awaited values to a.
//
//blitz:async
func (a *Acc) Fold(e Env, k int) int {
	for i := range k%3 + 1 {
		v := future.Await(e.Val(i + a.N%5))
		a.Add(v)
		e.Note("lib.Fold i=%d N=%d", i, a.N)
	}
	return a.N
}

// Twice is a generic async function.
//
//blitz:async
func Twice[T ~int](e Env, v T) T {
	x := future.Await(e.Val(int(v) % 50))
	defer e.Note("lib.Twice deferred %d", x)
	return T(x * 2 % 1000)
}

// Lookup returns (int, error) and awaits another of lib's async
// functions.
//
//blitz:async
func Lookup(e Env, key string) (int, error) {
	n, err := future.Try(e.Fallible(len(key)))
	if err != nil {
		return -1, fmt.Errorf("lookup %q: %w", key, err)
	}
	s := future.Await(e.Str(key))
	return future.Await(TwiceAsync(e, n)) + len(s), nil
}

// Refresh is an async method of a generic type.
//
//blitz:async
func (c *Cell[T]) Refresh(e Env, v T) int {
	k := future.Await(e.Val(c.sets % 4))
	c.Set(v)
	e.Note("lib.Cell.Refresh k=%d sets=%d v=%v", k, c.sets, c.v)
	return k + c.sets
}
`

// libAsyncNames are the async functions of libAsyncSource.
var libAsyncNames = []string{"Fold", "Twice", "Lookup", "Refresh"}

// autilSource is a/util/util.go.
const autilSource = `package util

// ID is a named int.
type ID int

func (i ID) Next() ID { return (i + 1) % 1000 }

// Bag holds ints; b/util has a Bag too.
type Bag struct{ Items []int }

func (b *Bag) Put(x int) {
	if len(b.Items) >= 4 {
		b.Items = b.Items[1:]
	}
	b.Items = append(b.Items, x)
}

func (b Bag) Len() int { return len(b.Items) }
`

// butilSource is b/util/util.go: a package of the same name as a/util.
const butilSource = `package util

import "strings"

// Name is a named string.
type Name string

func (n Name) Upper() Name { return Name(strings.ToUpper(string(n))) }

// Bag holds strings; a/util has a Bag too.
type Bag struct{ Names []string }

func (b *Bag) Put(s string) {
	if len(b.Names) >= 4 {
		b.Names = b.Names[1:]
	}
	b.Names = append(b.Names, s)
}

func (b Bag) Len() int { return len(b.Names) }
`

// typesSource is types.go, in the programs' package: a struct that
// embeds lib's.
const typesSource = `package progfuzzrun

import "progfuzzrun/lib"

// Inner is a struct of this package that Wrapped embeds.
type Inner struct{ K int }

func (i *Inner) Bump() int {
	i.K = (i.K + 1) % 1000
	return i.K
}

// Wrapped embeds lib's Tally by value (which embeds structs by value and
// by pointer, a/util's Bag and an interface), an instance of lib's generic
// Cell by pointer, and a struct of this package.
type Wrapped struct {
	lib.Tally
	*lib.Cell[string]
	Inner
	Own int
}

// NewWrapped returns a Wrapped whose pointers and interface are set.
func NewWrapped(n int, tag string) Wrapped {
	return Wrapped{Tally: lib.NewTally(n, tag), Cell: lib.NewCell(tag), Inner: Inner{K: n}}
}
`

// driverHook is driver_test.go's init, which gives lib's references the
// references' await.
const driverHook = `
func init() {
	lib.RefAwait = func(f any) any {
		switch f := f.(type) {
		case future.Future[int]:
			return awaitRef(f)
		case future.Future[string]:
			return awaitRef(f)
		case future.Future[future.Result[int]]:
			return awaitRef(f)
		case future.Future[future.Result[string]]:
			return awaitRef(f)
		}
		panic(fmt.Sprintf("lib.RefAwait: %T", f))
	}
}
`

// asyncCall matches an await of a constructor (of this package, of
// another, or a method's): future.Await(lib.TwiceAsync( and the like.
var asyncCall = regexp.MustCompile(`future\.(?:Await|Try)\(((?:\w+\.)*)(\w+)Async((?:\[[^\]]*\])?)\(`)

// refOf returns the reference of an async source: the functions names
// renamed NameRef, their awaits of constructors calls of the references
// (which block), future.Await and future.Try replaced by functions that
// block on the future, and the directives gone.
func refOf(src string, names ...string) string {
	for _, name := range names {
		src = regexp.MustCompile(`(?m)^(func (?:\([^)]*\) )?)`+name+`([(\[])`).ReplaceAllString(src, "${1}"+name+"Ref$2")
	}
	src = asyncCall.ReplaceAllString(src, "(${1}${2}Ref${3}(")
	// An async literal, awaited where it is made, is called there.
	src = strings.ReplaceAll(src, "future.Await(future.Async(", "callRef((")
	src = strings.ReplaceAll(src, "future.Await(future.AsyncDo(", "callDoRef((")
	src = strings.ReplaceAll(src, "future.Try(future.AsyncFallible(", "callTryRef((")
	src = strings.ReplaceAll(src, "future.Await(", "awaitRef(")
	src = strings.ReplaceAll(src, "future.Try(", "tryRef(")
	src = strings.ReplaceAll(src, "future.Each(", "eachRef(")
	src = strings.ReplaceAll(src, "//blitz:async\n", "")
	return src
}

// libAsyncRef is lib/async_ref.go, the references of libAsyncSource.
func libAsyncRef() string {
	src := refOf(libAsyncSource, libAsyncNames...)
	// The reference does not import future.
	return strings.Replace(src, "\t\"github.com/blitz-go/blitz/future\"\n", "", 1)
}
