//go:build linux && race

package epoll_test

const raceEnabled = true
