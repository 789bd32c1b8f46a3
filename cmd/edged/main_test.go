package main

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writers and readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRealMainVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := realMain([]string{"--version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, stderr %q", code, stderr.String())
	}
	if want := fmt.Sprintf("edged %s\n", version); stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
}

func TestRealMainHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := realMain([]string{"--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	for _, f := range []string{"-version", "-listen", "-endpoint-host", "-max-sessions", "-max-connections", "-data-efficient", "-read-spin",
		"-config", "-import-csv", "-csv-device", "-board", "-check-config", "-report-every"} {
		if !strings.Contains(stderr.String(), f) {
			t.Errorf("--help does not document %s:\n%s", f, stderr.String())
		}
	}
}

func TestRealMainBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		name string // the flag the message must name
	}{
		{[]string{"--listen", "nonsense"}, "--listen"},
		{[]string{"--listen", ":99999"}, "--listen"},
		{[]string{"--endpoint-host", "a b"}, "--endpoint-host"},
		{[]string{"--bogus"}, "-bogus"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if code := realMain(tt.args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit code %d, want 2", tt.args, code)
		}
		if !strings.Contains(stderr.String(), tt.name) {
			t.Errorf("%v: stderr does not name %s: %q", tt.args, tt.name, stderr.String())
		}
	}
}

func TestRealMainPortConflict(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	var stdout, stderr bytes.Buffer
	code := realMain([]string{"--listen", busy.Addr().String()}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	msg := stderr.String()
	if !strings.Contains(msg, "--listen "+busy.Addr().String()) || !strings.Contains(msg, "address already in use") {
		t.Errorf("port conflict message %q should name --listen %s and say the address is in use", msg, busy.Addr())
	}
}
