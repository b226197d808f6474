//go:build linux

package uring

import (
	"testing"

	"github.com/blitz-go/blitz/backend"
	"github.com/blitz-go/blitz/backend/backendtest"
)

// fallbacks are the Options under which the suite runs: the default (every
// native feature of this kernel) and each forced fallback, plus all at once.
var fallbacks = []struct {
	name string
	o    Options
}{
	{"default", Options{}},
	{"NoMultishot", Options{DisableMultishotAccept: true}},
	{"NoBufferRings", Options{DisableBufferRings: true}},
	{"NoProvideBuffers", Options{DisableProvideBuffers: true}},
	{"NoCancelFD", Options{DisableCancelFD: true}},
	{"NoExtArg", Options{DisableExtArg: true}},
	{"NoPollFirst", Options{DisablePollFirst: true}},
	{"NoCoopTaskrun", Options{DisableCoopTaskrun: true}},
	{"NoFtruncate", Options{DisableFtruncate: true}},
	{"AllFallbacks", Options{DisableMultishotAccept: true, DisableProvideBuffers: true, DisableCancelFD: true,
		DisableExtArg: true, DisablePollFirst: true, DisableCoopTaskrun: true, DisableFileOps: true, Entries: 64}},
}

func TestConformance(t *testing.T) {
	for _, f := range fallbacks {
		t.Run(f.name, func(t *testing.T) {
			if testing.Short() && f.name != "default" && f.name != "AllFallbacks" {
				t.Skip("fallbacks one by one only without -short")
			}
			backendtest.Run(t, func(tb testing.TB) backend.Backend {
				b, err := New(f.o)
				if err != nil {
					tb.Fatalf("New: %v", err)
				}
				return b
			})
		})
	}
}
