// Package gentest holds what the tests of generated async functions share:
// the check that a package's committed generated file is what blitzgen
// writes now (CheckFresh), and Probe, a future whose completion the test
// decides and which counts its polls and cancels.
package gentest
