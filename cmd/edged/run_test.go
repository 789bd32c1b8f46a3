package main

import (
	"context"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopcua/opcua"
	gua "github.com/gopcua/opcua/ua"
)

// waitFor polls out until re matches and returns the match. The deadline
// only stops a hung test (emulated ARM is slow); no duration is asserted.
func waitFor(t *testing.T, out *lockedBuffer, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no output matching %q; got:\n%s", re, out.String())
	return nil
}

var endpointLine = regexp.MustCompile(`OPC UA endpoint URL (opc\.tcp://(\S+):(\d+)) \(listening on (\S+)\)`)

func TestRun(t *testing.T) {
	cfg, err := parseFlags([]string{"--listen", "127.0.0.1:0"}, fixedHostname("gw01"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out lockedBuffer
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, cfg, &out, 10*time.Millisecond) }()

	m := waitFor(t, &out, endpointLine)
	if m[2] != "127.0.0.1" || m[3] == "0" || m[4] != "127.0.0.1:"+m[3] {
		t.Errorf("endpoint line %q: want the bound 127.0.0.1 port, not 0", m[0])
	}
	waitFor(t, &out, regexp.MustCompile(`demo: Counter=[1-9]\d* Sine=[-+]\d\.\d{4} Toggle=(true|false)`))

	// An OPC UA client reads the demo's Counter, live, under Objects/Gateway.
	cctx, ccancel := context.WithTimeout(ctx, time.Minute)
	defer ccancel()
	c, err := opcua.NewClient(m[1], opcua.SecurityPolicy("None"), opcua.SecurityMode(gua.MessageSecurityModeNone),
		opcua.AuthAnonymous(), opcua.AutoReconnect(false))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(cctx); err != nil {
		t.Fatalf("connect to %s: %v", m[1], err)
	}
	counter := gua.NewStringNodeID(1, "Gateway.Counter")
	read := func() uint32 {
		t.Helper()
		r, err := c.Read(cctx, &gua.ReadRequest{NodesToRead: []*gua.ReadValueID{{NodeID: counter, AttributeID: gua.AttributeIDValue}}})
		if err != nil {
			t.Fatal(err)
		}
		n, ok := r.Results[0].Value.Value().(uint32)
		if !ok {
			t.Fatalf("Counter = %v (%v)", r.Results[0].Value.Value(), r.Results[0].Status)
		}
		return n
	}
	first := read()
	for deadline := time.Now().Add(time.Minute); read() == first; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Counter does not change")
		}
	}
	c.Close(cctx)

	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.HasSuffix(out.String(), "edged: shut down cleanly\n") {
		t.Errorf("output does not end with the shutdown line:\n%s", out.String())
	}
	// After shutdown the port is free again.
	ln, err := net.Listen("tcp", "127.0.0.1:"+m[3])
	if err != nil {
		t.Errorf("port still bound after shutdown: %v", err)
	} else {
		ln.Close()
	}
}
