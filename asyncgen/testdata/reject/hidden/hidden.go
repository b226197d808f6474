// Package hidden returns a value of a type it does not export.
package hidden

import "fmt"

type secret struct{ v int }

// Value is the secret's value.
func (s *secret) Value() int { return s.v }

// New returns a secret.
func New() *secret { return &secret{v: 7} }

// Recover stops a panic and stores it in *err, when deferred.
func Recover(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("recovered: %v", r)
	}
}

// Closer has a method that recovers.
type Closer struct{}

// Close stops a panic, when deferred.
func (Closer) Close() { _ = recover() }
