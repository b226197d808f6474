package scheduler_test

import (
	"github.com/blitz-go/blitz/future"
	"github.com/blitz-go/blitz/scheduler"
)

// The value spawns of BenchmarkChainedSpawnOneWorker.
func init() {
	chainSpawns = append(chainSpawns,
		struct {
			name  string
			spawn func(s *scheduler.Scheduler, cx *future.Context, c benchLink)
		}{"value", func(s *scheduler.Scheduler, cx *future.Context, c benchLink) {
			scheduler.SpawnValue[struct{}](s, cx, c)
		}},
		struct {
			name  string
			spawn func(s *scheduler.Scheduler, cx *future.Context, c benchLink)
		}{"detached", func(s *scheduler.Scheduler, cx *future.Context, c benchLink) {
			scheduler.SpawnValueDetached[struct{}](s, cx, c)
		}},
	)
}
