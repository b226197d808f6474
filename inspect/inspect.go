package inspect

import (
	"bytes"
	"errors"
	"expvar"
	"fmt"
	"net/http"

	"github.com/blitz-go/blitz"
)

// ErrExpvarName is the error of PublishExpvar when the name is already
// published: expvar names are process-wide and cannot be taken back.
var ErrExpvarName = errors.New("inspect: expvar name already published")

// contentType is the Prometheus text exposition format's media type.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// MetricsHandler returns a handler that serves rt's Metrics in the
// Prometheus text exposition format (runtime.Metrics.WritePrometheus), read
// afresh at each request. It answers GET and HEAD; other methods get 405.
func MetricsHandler(rt *blitz.Runtime) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var b bytes.Buffer
		if err := rt.Metrics().WritePrometheus(&b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", contentType)
		if r.Method == http.MethodGet {
			_, _ = w.Write(b.Bytes())
		}
	})
}

// PublishExpvar publishes rt's Metrics as the expvar variable name, so that
// expvar's handler (/debug/vars) serves them as JSON, read afresh each time
// the variable is served. expvar names are process-wide and permanent: a
// name already published gives an error wrapping ErrExpvarName.
func PublishExpvar(name string, rt *blitz.Runtime) error {
	if expvar.Get(name) != nil {
		return fmt.Errorf("%w: %q", ErrExpvarName, name)
	}
	expvar.Publish(name, expvar.Func(func() any { return rt.Metrics() }))
	return nil
}
