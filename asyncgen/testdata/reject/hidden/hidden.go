// Package hidden returns a value of a type it does not export.
package hidden

type secret struct{ v int }

// Value is the secret's value.
func (s *secret) Value() int { return s.v }

// New returns a secret.
func New() *secret { return &secret{v: 7} }
