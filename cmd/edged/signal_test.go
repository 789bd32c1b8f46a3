//go:build unix

package main

import (
	"regexp"
	"syscall"
	"testing"
)

// TestRealMainSignal runs edged in-process and sends this process SIGTERM
// (and SIGINT): realMain must catch it and shut down cleanly with code 0.
func TestRealMainSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code := make(chan int, 1)
			go func() { code <- realMain([]string{"--listen", "127.0.0.1:0"}, &stdout, &stderr) }()

			// The endpoint line is printed after the handler is installed.
			waitFor(t, &stdout, endpointLine)
			if err := syscall.Kill(syscall.Getpid(), sig); err != nil {
				t.Fatal(err)
			}
			if c := <-code; c != 0 {
				t.Errorf("exit code %d after %v, want 0; stderr %q", c, sig, stderr.String())
			}
			waitFor(t, &stdout, regexp.MustCompile(`shut down cleanly`))
		})
	}
}
