package sim

import "math/rand/v2"

// Buggify answers blitz.Buggify on the host's runtime: each call site is
// enabled for the whole run with probability 1/4, decided at its first
// call from the run's seed (and recorded in the trace), and an enabled
// site fires at each call with probability 1/4. Rare paths are so taken
// often, but not so often that every run takes the same ones.
func (s *hostSim) Buggify(site string) bool {
	w := s.h.w
	on, seen := w.buggify[site]
	if !seen {
		on = w.rng.IntN(4) == 0
		w.buggify[site] = on
		enabled := uint64(0)
		if on {
			enabled = 1
		}
		w.recordNum(s.h.name, "buggify", site+" enabled", enabled)
	}
	return on && w.rng.IntN(4) == 0
}

// Rand answers blitz.Rand on the host's runtime: the run's seeded source.
func (s *hostSim) Rand() *rand.Rand { return s.h.w.rng }
