package scheduler_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/blitz-go/blitz/scheduler"
)

// TestConfigValidation: New refuses an invalid Config with an error
// wrapping ErrConfig, and fills in the defaults of the zero Config.
func TestConfigValidation(t *testing.T) {
	for name, cfg := range map[string]scheduler.Config{
		"negative workers":      {Workers: -1},
		"too many workers":      {Workers: scheduler.MaxWorkers + 1},
		"LIFO 2":                {LIFO: 2},
		"LIFO 5":                {LIFO: 5},
		"LIFO -2":               {LIFO: -2},
		"negative MaxLiveTasks": {MaxLiveTasks: -1},
		"IdleSpin over its max": {IdleSpin: scheduler.MaxIdleSpin + 1},
	} {
		s, err := scheduler.New(cfg)
		require.ErrorIs(t, err, scheduler.ErrConfig, name)
		require.Nil(t, s, name)
	}

	e := newEnv(t, scheduler.Config{})
	require.Equal(t, runtime.GOMAXPROCS(0), e.s.Workers())
	require.Nil(t, e.s.Services())
	for _, cfg := range []scheduler.Config{
		{Workers: 1, LIFO: scheduler.LIFOSlot},
		{Workers: 2, LIFO: scheduler.LIFOOff},
		{Workers: 3, LIFO: scheduler.LIFOStack, MaxLiveTasks: 1, Services: "svc"},
		{Workers: 1, IdleSpin: -1},
		{Workers: 1, IdleSpin: scheduler.MaxIdleSpin},
	} {
		e := newEnv(t, cfg)
		require.Equal(t, cfg.Workers, e.s.Workers())
		require.Equal(t, cfg.Services, e.s.Services())
		require.Len(t, e.s.Stats().PerWorker, cfg.Workers)
	}
}
