package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestStartInstallsInBackground runs startInstalls against a fake apt-get (and sudo) on a PATH that
// lacks chromium and curl: the one background run refreshes the lists and installs both, and
// awaitInstalls returns only after it ended. Wine is left out (BLITZ_INSTALL_WINE unset).
func TestStartInstallsInBackground(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the installs are Debian's")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "apt.log")
	// The fake takes a while (a loop of shell builtins: PATH holds only the fakes), so that an
	// awaitInstalls that did not wait would find the log incomplete.
	fake := "#!/bin/sh\ni=0\nwhile [ $i -lt 50000 ]; do i=$((i+1)); done\necho \"$@\" >> " + log + "\n"
	for _, name := range []string{"apt-get", "sudo"} {
		script := fake
		if name == "sudo" { // sudo -n apt-get ARGS: drop "-n apt-get"
			script = "#!/bin/sh\nshift 2\nexec " + filepath.Join(dir, "apt-get") + " \"$@\"\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	t.Setenv("BLITZ_INSTALL_CHROMIUM", "1")
	t.Setenv("BLITZ_INSTALL_WINE", "")
	t.Cleanup(func() {
		background.mu.Lock()
		background.done = nil
		background.mu.Unlock()
	})

	startInstalls()
	awaitInstalls()
	got, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("apt-get never ran: %v", err)
	}
	want := "update -qq\ninstall -y -qq --no-install-recommends chromium curl\n"
	if string(got) != want {
		t.Errorf("apt-get ran with\n%s\nwant\n%s", got, want)
	}
	awaitInstalls() // a second wait returns at once
	if n := strings.Count(string(got), "install -y"); n != 1 {
		t.Errorf("%d installs, want one", n)
	}
}

// TestStartInstallsNothingToDo checks that startInstalls starts nothing when no install is allowed, so
// that awaitInstalls does not wait.
func TestStartInstallsNothingToDo(t *testing.T) {
	t.Setenv("BLITZ_INSTALL_CHROMIUM", "")
	t.Setenv("BLITZ_INSTALL_WINE", "")
	startInstalls()
	background.mu.Lock()
	started := background.done != nil
	background.mu.Unlock()
	if started {
		t.Fatal("startInstalls started a background run with no install allowed")
	}
	awaitInstalls()
}
