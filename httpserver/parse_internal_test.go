package httpserver

import (
	"net/url"
	"reflect"
	"testing"
)

// simpleURL, where it takes a target, makes the URL url.ParseRequestURI
// makes of it; the targets it leaves to ParseRequestURI include every
// form that needs escaping or has a fragment or an empty query.
func TestSimpleURLMatchesParseRequestURI(t *testing.T) {
	targets := []string{
		"/", "/hello", "/a/b/c.txt", "/a?b=c", "/a?b=c&d=e", "/x;y=1", "/p:q@r", "/$&+,=",
		"/a%20b", "/a b", "//host/path", "/a?", "/a?b#c", "/a#frag", "/é", "/a?b=%41",
		"/a!b", "/(x)", "/a*", "/a?b=c d", "*", "http://x/y", "", "/a?b=c?d",
	}
	simple := 0
	for _, tg := range targets {
		got, ok := simpleURL(tg)
		if !ok {
			continue
		}
		simple++
		want, err := url.ParseRequestURI(tg)
		if err != nil {
			t.Errorf("simpleURL(%q) took a target ParseRequestURI refuses: %v", tg, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("simpleURL(%q) = %#v, ParseRequestURI %#v", tg, got, want)
		}
		if got.String() != tg || got.RequestURI() != tg {
			t.Errorf("simpleURL(%q) does not give back the target: %q, %q", tg, got.String(), got.RequestURI())
		}
	}
	if simple < 8 {
		t.Errorf("simpleURL took only %d targets", simple)
	}
	for _, tg := range []string{"/a%20b", "/a b", "//host/path", "/a?", "/a#frag", "/é", "/a?b=%41", "/a!b", "*", ""} {
		if _, ok := simpleURL(tg); ok {
			t.Errorf("simpleURL(%q) took a target it should leave to ParseRequestURI", tg)
		}
	}
}

// FuzzSimpleURL: wherever simpleURL takes a target, ParseRequestURI takes
// it too and makes the same URL.
func FuzzSimpleURL(f *testing.F) {
	for _, s := range []string{"/", "/a?b=c", "/x;y", "/a%20b", "//h/p", "/a?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tg string) {
		got, ok := simpleURL(tg)
		if !ok {
			return
		}
		want, err := url.ParseRequestURI(tg)
		if err != nil {
			t.Fatalf("simpleURL(%q) took a target ParseRequestURI refuses: %v", tg, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("simpleURL(%q) = %#v, ParseRequestURI %#v", tg, got, want)
		}
	})
}
