package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	peertool "github.com/edged/edged/internal/testutil/peer"
	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
)

// TestFloorServer: the floor server, built from its C source, answers
// our client's handshake and Reads with framed responses, the request
// handles patched, and a request of another type with a ServiceFault.
func TestFloorServer(t *testing.T) {
	cc := peertool.Command(t, "cc", "gcc")
	dir := t.TempDir()
	bin := filepath.Join(dir, "floor_server")
	if out, err := exec.Command(cc, "-O2", "-Wall", "-Werror", "peer/floor_server.c", "-o", bin).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	f, err := os.Create(filepath.Join(dir, "floor.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := floorGen(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cmd := exec.Command(bin, "0", f.Name())
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready addr=") {
		t.Fatalf("floor server: %q, %v", line, err)
	}
	addr := strings.TrimSpace(strings.TrimPrefix(line, "ready addr="))

	c, err := uaclient.DialSession(addr, "floor", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Conn().Close()
	for range 3 {
		req := &ua.ReadRequest{RequestHeader: c.Header(), NodesToRead: []ua.ReadValueID{{NodeID: ua.NewNumericNodeID(0, 2258), AttributeID: uint32(ua.AttributeIDValue)}}}
		var resp ua.ReadResponse
		if err := c.Call(req, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.ResponseHeader.RequestHandle != req.RequestHeader.RequestHandle || len(resp.Results) != 1 {
			t.Fatalf("Read: handle %d (sent %d), %d results", resp.ResponseHeader.RequestHandle, req.RequestHeader.RequestHandle, len(resp.Results))
		}
		if v, ok := resp.Results[0].Value.Value().(uint32); !ok || v != 42 {
			t.Fatalf("Read: %v", resp.Results[0].Value.Value())
		}
	}
	var br ua.BrowseResponse
	err = c.Call(&ua.BrowseRequest{RequestHeader: c.Header()}, &br)
	if code, ok := err.(ua.StatusCode); !ok || code != ua.StatusCode(0x800B0000) {
		t.Errorf("Browse: %v, want Bad_ServiceUnsupported", err)
	}
	if err := c.Close(5 * time.Second); err != nil {
		t.Errorf("CloseSession: %v", err)
	}
}
