package main

import (
	"bytes"
	"errors"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// startTestServer serves the bench server role's address space on a
// loopback port in this process.
func startTestServer(t *testing.T) (*server.Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, _, err := newBenchServer(ln, 0, false, false, 0)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Shutdown(t.Context())
		if err := <-done; !errors.Is(err, server.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, ln.Addr().String()
}

// TestClientReads runs the load client against the server for a handful
// of pipelined Reads per connection, decoding every response fully, and
// checks that each request got a good answer and the session closes.
func TestClientReads(t *testing.T) {
	srv, addr := startTestServer(t)
	ns := srv.GatewayNodeID("x").Namespace
	for _, sc := range []scenario{{conns: 2, inflight: 4, nodes: 1}, {conns: 1, inflight: 3, nodes: 100}, {conns: 1, inflight: 1, nodes: 3}} {
		t.Run(sc.String(), func(t *testing.T) {
			const perConn = 25
			ids := benchIDs(ns, sc.nodes)
			var phase atomic.Int32
			for range sc.conns {
				c, err := uaclient.DialSession(addr, "uabench", 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				c.Conn().SetDeadline(time.Now().Add(10 * time.Second)) // bounded, never a timing assertion
				req := &ua.ReadRequest{TimestampsToReturn: ua.TimestampsToReturnBoth}
				for _, id := range ids {
					req.NodesToRead = append(req.NodesToRead, ua.ReadValueID{NodeID: id, AttributeID: uint32(ua.AttributeIDValue)})
				}
				r, err := newReader(c, req, sc.inflight, true)
				if err != nil {
					t.Fatal(err)
				}
				phase.Store(phaseMeasure)
				if err := r.run(&phase, perConn); err != nil {
					t.Fatal(err)
				}
				if e := r.lastEr.Load(); e != nil {
					t.Errorf("bad response: %s", *e)
				}
				if sent, done, bad := r.sent.Load(), r.done.Load(), r.errs.Load(); sent != perConn || done != perConn || bad != 0 {
					t.Errorf("sent %d, answered %d, bad %d; want %d, %d, 0", sent, done, bad, perConn, perConn)
				}
				if r.hist.n != perConn {
					t.Errorf("%d latencies recorded, want %d", r.hist.n, perConn)
				}
				// The values: Double, UInt32, Boolean in turn, from the process image.
				for i, dv := range r.resp.Results {
					want := [3]ua.TypeID{ua.TypeDouble, ua.TypeUInt32, ua.TypeBoolean}[i%3]
					if got := dv.Value.Type(); got != want {
						t.Errorf("result %d: %v, want a %v", i, dv.Value, want)
					}
				}
				if err := c.Close(5 * time.Second); err != nil {
					t.Errorf("close: %v", err)
				}
			}
		})
	}
}

// TestClientFastPath checks that the just-enough parse of a response
// agrees with a full decode: good responses pass, and a bad ServiceResult,
// a wrong result count, a bad first status and a ServiceFault are caught.
func TestClientFastPath(t *testing.T) {
	good := func() *ua.ReadResponse {
		return &ua.ReadResponse{Results: []ua.DataValue{{Value: ua.MustVariant(1.5)}, {Value: ua.MustVariant(uint32(2))}}}
	}
	for _, tc := range []struct {
		name string
		msg  ua.Body
		want bool
	}{
		{"good", good(), true},
		{"bad service result", func() ua.Body { r := good(); r.ResponseHeader.ServiceResult = status.BadTooManyOperations; return r }(), false},
		{"too few results", &ua.ReadResponse{Results: []ua.DataValue{{Value: ua.MustVariant(1.5)}}}, false},
		{"bad first status", func() ua.Body { r := good(); r.Results[0] = ua.DataValue{Status: status.BadNodeIDUnknown}; return r }(), false},
		{"good status in a diagnostic-carrying header", func() ua.Body {
			r := good()
			r.ResponseHeader.StringTable = []string{"x"}
			return r
		}(), true},
		{"service fault", &ua.ServiceFault{ResponseHeader: ua.ResponseHeader{ServiceResult: status.BadSessionIDInvalid}}, false},
	} {
		r := &reader{nodes: 2}
		if got := r.check(ua.AppendMessage(nil, tc.msg), true); got != tc.want {
			t.Errorf("%s: check = %v, want %v", tc.name, got, tc.want)
		}
		if e := r.lastEr.Load(); (e == nil) != tc.want {
			t.Errorf("%s: recorded error %v", tc.name, e)
		}
	}
}

// TestLoadReport runs the coordinator for a short window against the
// in-process server: both ends of the window, the drain and the close,
// and the report. Nothing is asserted about the figures.
func TestLoadReport(t *testing.T) {
	srv, addr := startTestServer(t)
	ids := benchIDs(srv.GatewayNodeID("x").Namespace, 100)
	f := loadFlags{warmup: 20 * time.Millisecond, duration: 100 * time.Millisecond, timestamps: ua.TimestampsToReturnSource}
	var rs []result
	for _, sc := range []scenario{{conns: 2, inflight: 10, nodes: 1}, {conns: 1, inflight: 1, nodes: 100}} {
		r, err := runScenario(addr, ids, sc, f, selfStats{})
		if err != nil {
			t.Fatal(err)
		}
		if r.errors != 0 {
			t.Errorf("%v: %d bad responses: %s", sc, r.errors, r.lastErr)
		}
		rs = append(rs, r)
	}
	var out bytes.Buffer
	report(&out, rs, f)
	for _, s := range []string{"2×10, 1-node Read", "1×1, 100-node Read", "queueing"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, out.String())
		}
	}
}

// TestEcho runs the echo scenario, its frames sized on the OPC UA server,
// without and with polling on both sides, and checks the echo server's
// handling of bad frames.
func TestEcho(t *testing.T) {
	srv, addr := startTestServer(t)
	ids := benchIDs(srv.GatewayNodeID("x").Namespace, 1)
	for _, spin := range []time.Duration{0, 200 * time.Microsecond} {
		eln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go echoServe(eln, spin)
		f := loadFlags{warmup: 20 * time.Millisecond, duration: 100 * time.Millisecond, timestamps: ua.TimestampsToReturnBoth, spin: spin}
		sc := scenario{conns: 1, inflight: 1, nodes: 1, echo: true}
		r, err := runEcho(addr, eln.Addr().String(), ids, sc, f, selfStats{})
		eln.Close()
		if err != nil {
			t.Fatalf("spin %v: %v", spin, err)
		}
		if r.errors != 0 || r.requests == 0 || r.echoReq < msgHdrLen || r.echoResp < msgHdrLen || r.p50 <= 0 {
			t.Errorf("spin %v: %d echoes, %d bad, sizes %d/%d, p50 %v", spin, r.requests, r.errors, r.echoReq, r.echoResp, r.p50)
		}
		var out bytes.Buffer
		report(&out, []result{r}, f)
		for _, s := range []string{"echo of a 1-node Read", "no OPC UA"} {
			if !strings.Contains(out.String(), s) {
				t.Errorf("report lacks %q:\n%s", s, out.String())
			}
		}
	}
	if _, err := runEcho(addr, "", ids, scenario{conns: 1, inflight: 1, nodes: 1, echo: true}, loadFlags{duration: time.Millisecond}, selfStats{}); err == nil {
		t.Error("echo without an echo address: no error")
	}

	// A frame asking for too much, or too short, ends the connection.
	eln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer eln.Close()
	go echoServe(eln, 0)
	for _, frame := range [][]byte{{16, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {4, 0, 0, 0, 8, 0, 0, 0}} {
		nc, err := net.Dial("tcp", eln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		nc.Write(frame)
		if n, err := nc.Read(make([]byte, 16)); err == nil {
			t.Errorf("frame %x: got %d bytes back, want the connection closed", frame, n)
		}
		nc.Close()
	}
}

// selfStats takes the server's statistics from this process (the server
// runs in it).
type selfStats struct{}

func (selfStats) stats() (procStats, error) { return readProcStats(), nil }

// TestServeProtocol runs the server role's line protocol: ready, stats,
// quit.
func TestServeProtocol(t *testing.T) {
	pr, pw := net.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- serve(serveFlags{listen: "127.0.0.1:0", maxRun: time.Minute}, pr, &out) }()
	pw.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := pw.Write([]byte("stats\nquit\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server role did not quit")
	}
	pw.Close()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || fields(lines[0], "ready")["addr"] == "" || fields(lines[1], "stats")["cpu_ns"] == "" {
		t.Errorf("server role said %q", lines)
	}
	if err := serve(serveFlags{listen: "0.0.0.0:0", maxRun: time.Minute}, strings.NewReader(""), &out); err == nil {
		t.Error("serve on a non-loopback address: no error")
	}
}

func TestParseScenarios(t *testing.T) {
	got, err := parseScenarios("10x100x1, 1x1x100,echo,echo100")
	want := []scenario{
		{conns: 10, inflight: 100, nodes: 1}, {conns: 1, inflight: 1, nodes: 100},
		{conns: 1, inflight: 1, nodes: 1, echo: true}, {conns: 1, inflight: 1, nodes: 100, echo: true},
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("parseScenarios = %v, %v", got, err)
	}
	for _, bad := range []string{"", "10x100", "0x1x1", "ax1x1", "echo0", "echox"} {
		if _, err := parseScenarios(bad); err == nil {
			t.Errorf("parseScenarios(%q): no error", bad)
		}
	}
}

func TestHistogram(t *testing.T) {
	var h histogram
	for v := uint64(1); v <= 100000; v++ {
		h.add(v * 1000) // 1 µs .. 100 ms
	}
	for _, q := range []float64{0.5, 0.99} {
		want := q * 100000 * 1000
		if got := float64(h.quantile(q)); got < want*0.99 || got > want*1.01 {
			t.Errorf("quantile(%v) = %v, want %v within 1 %%", q, time.Duration(got), time.Duration(want))
		}
	}
	for v := uint64(0); v < 1<<20; v = v*2 + 1 {
		if i := bucketOf(v); bucketLow(i) > v || bucketLow(i+1) <= v {
			t.Errorf("value %d in bucket %d of [%d, %d)", v, i, bucketLow(i), bucketLow(i+1))
		}
	}
}
