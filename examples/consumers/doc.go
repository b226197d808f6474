// Package consumers holds one small program per public module that uses that module alone. `go tool
// mage consumable` copies each into a fresh module outside the repository, installs the module from a
// module proxy the way a user does, and runs the program; here, in the workspace, they build like any
// example. The asyncgen program is a user's of the generator: it installs blitzgen with go get -tool
// and runs go generate before it runs.
package consumers
