package inspect

import (
	"net/http"
	"strconv"

	"github.com/blitz-go/blitz"
)

// DumpHandler returns a handler that serves rt's task dump as text, in the
// spirit of net/http/pprof's goroutine profile: grouped (Runtime.Dump) by
// default, one stanza per task (Runtime.DumpEach) with ?debug=2.
//
//	mux.Handle("/debug/blitz/tasks", inspect.DumpHandler(rt))
func DumpHandler(rt *blitz.Runtime) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if d, _ := strconv.Atoi(r.FormValue("debug")); d >= 2 {
			_ = rt.DumpEach(w)
			return
		}
		_ = rt.Dump(w)
	})
}
