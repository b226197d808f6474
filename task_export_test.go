package blitz

// WithoutTaskIdentity returns cfg with the task ids and the dump's
// bookkeeping turned off, for the benchmarks that measure their cost.
func WithoutTaskIdentity(cfg Config) Config {
	cfg.noTaskIdentity = true
	return cfg
}
